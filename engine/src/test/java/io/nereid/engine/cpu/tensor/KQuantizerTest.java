package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Q4_K, Q5_K and Q6_K quantizers on their own: what their last step guarantees, degenerate
 * blocks and the scale packing. (Byte identity with llama.cpp is {@code LlamaQuantizeParityTest}.)
 *
 * <p>Every K quantizer ends by requantizing each value against the scale (and min) it stored:
 * {@code q = clamp(round((x + m) / d), 0, nmax)} for Q4_K / Q5_K, {@code q = clamp(round(x / d),
 * -32, 31)} for Q6_K, with {@code d} and {@code m} as decoded. So a value whose {@code (x + m) / d}
 * lies inside the quant range decodes to within {@code d / 2} of itself, whatever the scale search
 * chose; only values beyond the fitted range (the search may clip outliers of a sub-block) are
 * clamped. The tests check that bound for every unclamped value, and the overall error against
 * a generous multiple of the typical step.
 */
class KQuantizerTest {

    @Test
    void nearestIntRoundsToNearestWithTiesToEven() {
        assertEquals(2, KQuantizer.nearestInt(2.5f));
        assertEquals(4, KQuantizer.nearestInt(3.5f));
        assertEquals(-2, KQuantizer.nearestInt(-2.5f));
        assertEquals(0, KQuantizer.nearestInt(0.49999997f));
        assertEquals(1, KQuantizer.nearestInt(0.50000006f));
        assertEquals(-4194303, KQuantizer.nearestInt(-4194303f));
        Random r = new Random(1);
        for (int i = 0; i < 100_000; i++) {
            float v = (float) ((r.nextDouble() - 0.5) * (i % 2 == 0 ? 200 : 8e6));
            assertEquals((int) Math.rint(v), KQuantizer.nearestInt(v), "nearest_int(" + v + ")");
        }
    }

    @Test
    void packedScalesAndMinsReadBackAsPacked() {
        Random r = new Random(2);
        MemorySegment s = MemorySegment.ofArray(new byte[12]);
        for (int trial = 0; trial < 200; trial++) {
            int[] scales = r.ints(8, 0, 64).toArray();
            int[] mins = r.ints(8, 0, 64).toArray();
            if (trial == 0) {
                Arrays.fill(scales, 63);
                Arrays.fill(mins, 63);
            }
            KScales.pack(scales, mins, s, 0);
            for (int j = 0; j < 8; j++) {
                assertEquals(scales[j], KScales.scale(s, 0, j), "scale " + j);
                assertEquals(mins[j], KScales.min(s, 0, j), "min " + j);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void gaussianRowsDecodeWithinHalfAStepOfEveryUnclampedValue(GgmlType type) {
        for (float sigma : new float[] {0.02f, 1f, 300f}) {
            float[] x = TestRows.gaussian(new Random(3), 16 * QK_K, sigma);
            double rms = assertWithinHalfAStep(type, x);
            double sumSq = 0;
            for (float v : x) {
                sumSq += (double) v * v;
            }
            double relative = rms / Math.sqrt(sumSq / x.length);
            // Observed on these rows, at every sigma: Q4_K 0.0715, Q5_K 0.0359, Q6_K 0.0177 (each level
            // of bits halves it); the limits are 20 % above
            double limit = switch (type) {
                case Q4_K -> 0.086;
                case Q5_K -> 0.043;
                default -> 0.0212;
            };
            assertTrue(relative < limit, type + " sigma " + sigma + ": relative RMS error " + relative);
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void allZeroSuperBlocksAreZeroBytes(GgmlType type) {
        byte[] q = Quantizer.quantize(type, new float[2 * QK_K]);
        assertArrayEquals(new byte[q.length], q);
        // (Q6_K decodes 0 * (0 - 32) as -0.0, as ggml does; a delta of 0 takes -0.0 for 0.0)
        assertArrayEquals(new float[2 * QK_K], roundTrip(type, new float[2 * QK_K]), 0f);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void constantBlocksDecodeToTheConstantUpToFp16(GgmlType type) {
        for (float c : new float[] {0.75f, -0.75f, 3.5f, -42f}) { // magnitudes whose scales are normal fp16
            float[] x = new float[QK_K];
            Arrays.fill(x, c);
            float[] y = roundTrip(type, x);
            for (int i = 0; i < QK_K; i++) {
                // a single fp16 scale (and for Q4_K/Q5_K min) times a 6-bit factor: relative error ~2^-11
                assertEquals(c, y[i], Math.abs(c) * 0x1p-9, type + " constant " + c + " at " + i);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void negativeOnlyBlocksAreFittedAsWell(GgmlType type) {
        float[] x = TestRows.gaussian(new Random(4), 4 * QK_K, 1f);
        for (int i = 0; i < x.length; i++) {
            x[i] = -Math.abs(x[i]) - 0.5f;
        }
        double rms = assertWithinHalfAStep(type, x);
        assertTrue(rms < 0.06, type + ": RMS error " + rms); // observed: Q4_K 0.039, Q5_K and Q6_K 0.021
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void oneHugeOutlierKeepsItsValueAndTheBlockStaysFinite(GgmlType type) {
        float[] x = TestRows.gaussian(new Random(5), 2 * QK_K, 1f);
        x[37] = 1000f;
        x[QK_K + 200] = -1000f;
        assertWithinHalfAStep(type, x);
        float[] y = roundTrip(type, x);
        // within one step of the outlier's sub-block, whose range it sets: 1000 / 15 for Q4_K
        assertEquals(1000f, y[37], 70f, type + ": the outlier's sub-block scale is set by it");
        assertEquals(-1000f, y[QK_K + 200], 70f, type.toString());
        for (float v : y) {
            assertTrue(Float.isFinite(v) && Math.abs(v) <= 1100f, type + ": " + v);
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void superBlocksAreQuantizedIndependently(GgmlType type) {
        // what lets ModelQuantizer split a tensor into row ranges across threads
        float[] x = TestRows.gaussian(new Random(6), 3 * QK_K, 1f);
        byte[] whole = Quantizer.quantize(type, x);
        MemorySegment parts = MemorySegment.ofArray(new byte[7 + whole.length]);
        for (int b = 2; b >= 0; b--) {
            Quantizer.quantize(type, x, b * QK_K, QK_K, parts, 7 + (long) b * type.bytesPerBlock());
        }
        assertArrayEquals(whole, parts.asSlice(7).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    @Test
    void q6_KGivesTheLargestScaleMinus128() {
        float[] x = TestRows.gaussian(new Random(7), QK_K, 1f);
        MemorySegment q = MemorySegment.ofArray(Quantizer.quantize(GgmlType.Q6_K, x));
        int extremes = 0;
        for (int s = 0; s < 16; s++) {
            extremes += Bytes.s8(q, 192 + s) == -128 ? 1 : 0;
        }
        assertTrue(extremes >= 1, "d = max / -128 makes the sub-block of largest scale -128");
    }

    /**
     * Asserts the requantization bound (class comment) for every value that was not clamped, with
     * a little slack for the float rounding of the decoder's {@code d * q - m}; returns the RMS error.
     */
    private static double assertWithinHalfAStep(GgmlType type, float[] x) {
        MemorySegment q = MemorySegment.ofArray(Quantizer.quantize(type, x));
        float[] y = Quantizer.dequantize(type, q, 0, x.length);
        double sumSq = 0;
        for (int i = 0; i < x.length; i++) {
            long block = (long) (i / QK_K) * type.bytesPerBlock();
            int inBlock = i % QK_K;
            double step;
            double offset;
            int lo;
            int hi;
            if (type == GgmlType.Q6_K) {
                step = Bytes.f16(q, block + 208) * Bytes.s8(q, block + 192 + inBlock / 16);
                offset = 0;
                lo = -32;
                hi = 31;
            } else {
                step = Bytes.f16(q, block) * KScales.scale(q, block + 4, inBlock / 32);
                offset = Bytes.f16(q, block + 2) * KScales.min(q, block + 4, inBlock / 32);
                lo = 0;
                hi = type == GgmlType.Q4_K ? 15 : 31;
            }
            double err = Math.abs(x[i] - y[i]);
            sumSq += err * err;
            double position = (x[i] + offset) / step;
            if (step != 0 && position >= lo && position <= hi) {
                double slack = 1e-5 * (Math.abs(x[i]) + Math.abs(offset)) + 1e-30;
                assertTrue(err <= Math.abs(step) / 2 + slack,
                        type + " value " + i + ": " + x[i] + " -> " + y[i] + ", step " + step);
            }
        }
        return Math.sqrt(sumSq / x.length);
    }

    private static float[] roundTrip(GgmlType type, float[] x) {
        return Quantizer.dequantize(type, MemorySegment.ofArray(Quantizer.quantize(type, x)), 0, x.length);
    }
}
