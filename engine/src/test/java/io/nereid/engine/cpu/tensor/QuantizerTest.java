package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class QuantizerTest {

    private static final int BLOCKS = 64;

    /**
     * Q8_0 bound, per block of largest magnitude {@code amax}: {@code d = amax / 127} and
     * {@code q = round(x / d)} give {@code |x - q d| <= d / 2 = amax / 254}; storing d as fp16
     * adds at most {@code |q| * d * 2^-11 <= amax * 2^-11}. Small slack covers the float
     * rounding of {@code x * (1 / d)}.
     */
    @ParameterizedTest
    @ValueSource(floats = {0.01f, 1f, 300f})
    void q8_0RoundTripErrorIsWithinHalfAStepPerBlock(float scale) {
        float[] x = TestRows.gaussian(new Random(1), 32 * BLOCKS, scale);
        float[] y = roundTrip(GgmlType.Q8_0, x);
        for (int b = 0; b < BLOCKS; b++) {
            float amax = amax(x, b);
            double bound = amax * (1.0 / 254 + 0x1p-11) * (1 + 1e-4);
            for (int j = b * 32; j < b * 32 + 32; j++) {
                assertTrue(Math.abs(x[j] - y[j]) <= bound, "element " + j + ": " + x[j] + " -> " + y[j]);
            }
        }
    }

    /**
     * Q4_0 bound, per block: {@code d = max / -8} (max the value of largest magnitude, sign
     * kept), so {@code x / d} lies in [-8, 8] and {@code q - 8 = floor(x / d + 0.5)} clamped to
     * [-8, 7]. Values with {@code x / d <= 7.5} are off by at most {@code |d| / 2 = amax / 16};
     * those in (7.5, 8] (the opposite extreme) are clamped to 7 and off by at most
     * {@code |d| = amax / 8}. fp16 storage of d adds at most {@code 8 * |d| * 2^-11 = amax * 2^-11}.
     */
    @ParameterizedTest
    @ValueSource(floats = {0.01f, 1f, 300f})
    void q4_0RoundTripErrorIsHalfAStepExceptAtTheClampedExtreme(float scale) {
        float[] x = TestRows.gaussian(new Random(2), 32 * BLOCKS, scale);
        float[] y = roundTrip(GgmlType.Q4_0, x);
        for (int b = 0; b < BLOCKS; b++) {
            float max = signedMax(x, b);
            float amax = Math.abs(max);
            double slack = amax * 0x1p-11 + amax * 1e-5;
            for (int j = b * 32; j < b * 32 + 32; j++) {
                double err = Math.abs(x[j] - y[j]);
                assertTrue(err <= amax / 8.0 + slack, "element " + j + ": " + x[j] + " -> " + y[j]);
                boolean clamped = x[j] / (max / -8f) > 7.5f;
                if (!clamped) {
                    assertTrue(err <= amax / 16.0 + slack, "element " + j + ": " + x[j] + " -> " + y[j]);
                }
            }
        }
    }

    @Test
    void q4_0ClampsTheOppositeExtremeToSevenSteps() {
        float[] x = new float[32];
        x[3] = 8f;  // max: d = -1, q = 0
        x[20] = -8f; // x / d = 8 -> q = 16, clamped to 15: -7
        float[] y = roundTrip(GgmlType.Q4_0, x);
        assertEquals(8f, y[3]);
        assertEquals(-7f, y[20]);
        assertEquals(0f, y[0], 0f, "0 * d with d = -1 is -0.0, as in ggml");
    }

    @Test
    void q8_0RoundsHalfwayValuesAwayFromZeroAsRoundf() {
        float[] x = new float[32];
        x[0] = 127f; // amax = 127: d = 1, so x / d = x exactly
        x[1] = 2.5f;
        x[2] = -2.5f;
        x[3] = 0.5f;
        x[4] = -0.5f;
        byte[] q = Quantizer.quantize(GgmlType.Q8_0, x);
        assertEquals((short) 0x3C00, MemorySegment.ofArray(q).get(Bytes.SHORT, 0), "d = 1.0 in fp16");
        assertArrayEquals(new byte[] {127, 3, -3, 1, -1, 0}, java.util.Arrays.copyOfRange(q, 2, 8));
    }

    @Test
    void q4_0LowNibblesAreTheFirstSixteenElements() {
        float[] x = new float[32];
        for (int j = 0; j < 32; j++) {
            x[j] = j < 16 ? j - 8 : 23 - j; // max = -8 at j = 0: d = 1, q = x + 8
        }
        byte[] q = Quantizer.quantize(GgmlType.Q4_0, x);
        assertEquals((short) 0x3C00, MemorySegment.ofArray(q).get(Bytes.SHORT, 0));
        for (int j = 0; j < 16; j++) {
            assertEquals(j | (15 - j) << 4, q[2 + j] & 0xFF, "byte " + j);
        }
        assertArrayEquals(x, roundTrip(GgmlType.Q4_0, x));
    }

    @Test
    void handBuiltQ8_0AndQ4_0BlocksDecode() {
        MemorySegment q8 = MemorySegment.ofArray(new byte[34]);
        Bytes.putF16(q8, 0, 0.5f);
        for (int j = 0; j < 32; j++) {
            Bytes.putByte(q8, 2 + j, j - 16);
        }
        float[] y8 = Quantizer.dequantize(GgmlType.Q8_0, q8, 0, 32);
        MemorySegment q4 = MemorySegment.ofArray(new byte[18]);
        Bytes.putF16(q4, 0, -2f);
        for (int j = 0; j < 16; j++) {
            Bytes.putByte(q4, 2 + j, j | (15 - j) << 4);
        }
        float[] y4 = Quantizer.dequantize(GgmlType.Q4_0, q4, 0, 32);
        for (int j = 0; j < 16; j++) {
            assertEquals((j - 16) * 0.5f, y8[j]);
            assertEquals((j - 8) * -2f, y4[j], "low nibble of byte " + j);
            assertEquals((7 - j) * -2f, y4[j + 16], "high nibble of byte " + j);
        }
    }

    @Test
    void allZeroBlocksQuantizeToZeroScales() {
        float[] x = new float[64];
        assertArrayEquals(x, roundTrip(GgmlType.Q8_0, x));
        // Q4_0's d = max / -8 is -0.0 here, as in C, so the zeros come back as -0.0
        assertArrayEquals(x, roundTrip(GgmlType.Q4_0, x), 0f);
    }

    @Test
    void everyFiniteHalfSurvivesAnF16RoundTrip() {
        float[] x = new float[1 << 16];
        int n = 0;
        for (int bits = 0; bits < 1 << 16; bits++) {
            float v = Float.float16ToFloat((short) bits);
            if (Float.isFinite(v)) {
                x[n++] = v;
            }
        }
        x = java.util.Arrays.copyOf(x, n);
        byte[] q = Quantizer.quantize(GgmlType.F16, x);
        assertArrayEquals(x, Quantizer.dequantize(GgmlType.F16, MemorySegment.ofArray(q), 0, n));
    }

    @Test
    void f16AndBf16RoundToNearestWithinHalfAnUlp() {
        float[] x = TestRows.gaussian(new Random(3), 4096, 10f);
        float[] h = roundTrip(GgmlType.F16, x);
        float[] b = roundTrip(GgmlType.BF16, x);
        for (int i = 0; i < x.length; i++) {
            if (Math.abs(x[i]) >= 0x1p-14f) { // fp16 normal range: relative bound holds
                assertTrue(Math.abs(x[i] - h[i]) <= Math.abs(x[i]) * 0x1p-11, x[i] + " -> f16 " + h[i]);
            }
            assertTrue(Math.abs(x[i] - b[i]) <= Math.abs(x[i]) * 0x1p-8, x[i] + " -> bf16 " + b[i]);
        }
    }

    @Test
    void bf16RoundsTiesToEvenAndKeepsNaNsNaN() {
        assertEquals(1f, bf16(1f + 0x1p-8f), "halfway, 1.0 has the even mantissa");
        assertEquals(1f + 0x1p-6f, bf16(1f + 3 * 0x1p-8f), "halfway, rounds up to the even mantissa");
        assertEquals(1f + 0x1p-7f, bf16(1f + 0x1p-7f + 0x1p-10f));
        assertTrue(Float.isNaN(bf16(Float.intBitsToFloat(0x7f800001))), "a NaN whose payload is in the low bits");
        assertEquals(Float.NEGATIVE_INFINITY, bf16(Float.NEGATIVE_INFINITY));
        assertEquals(Float.POSITIVE_INFINITY, bf16(Float.MAX_VALUE), "rounds past the largest bf16");
    }

    @Test
    void everyNonNaNBf16SurvivesARoundTrip() {
        for (int bits = 0; bits < 1 << 16; bits++) {
            float v = BF16Format.toFloat((short) bits);
            if (!Float.isNaN(v)) {
                assertEquals((short) bits, BF16Format.fromFloat(v));
            }
        }
    }

    @Test
    void quantizeRejectsPartialBlocksAndFormatsWithoutAQuantizer() {
        assertThrows(IllegalArgumentException.class, () -> Quantizer.quantize(GgmlType.Q8_0, new float[33]));
        assertThrows(IllegalArgumentException.class, () -> Quantizer.quantize(GgmlType.Q4_K, new float[255]));
        var e = assertThrows(UnsupportedWeightTypeException.class,
                () -> Quantizer.quantize(GgmlType.Q3_K, new float[256]));
        assertTrue(e.getMessage().contains("Q3_K"), e.getMessage());
        var d = assertThrows(UnsupportedWeightTypeException.class,
                () -> Quantizer.dequantize(GgmlType.Q3_K, MemorySegment.ofArray(new byte[110]), 0, 256));
        assertEquals(GgmlType.Q3_K, d.type());
    }

    @Test
    void quantizeWritesAtAnOffset() {
        float[] x = TestRows.gaussian(new Random(4), 96, 1f);
        byte[] whole = Quantizer.quantize(GgmlType.Q4_0, x);
        MemorySegment dst = MemorySegment.ofArray(new byte[5 + whole.length]);
        Quantizer.quantize(GgmlType.Q4_0, x, 0, 96, dst, 5);
        assertArrayEquals(whole, dst.asSlice(5).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    private static float bf16(float v) {
        return BF16Format.toFloat(BF16Format.fromFloat(v));
    }

    private static float[] roundTrip(GgmlType type, float[] x) {
        return Quantizer.dequantize(type, MemorySegment.ofArray(Quantizer.quantize(type, x)), 0, x.length);
    }

    private static float amax(float[] x, int block) {
        float amax = 0;
        for (int j = block * 32; j < block * 32 + 32; j++) {
            amax = Math.max(amax, Math.abs(x[j]));
        }
        return amax;
    }

    private static float signedMax(float[] x, int block) {
        float amax = 0;
        float max = 0;
        for (int j = block * 32; j < block * 32 + 32; j++) {
            if (Math.abs(x[j]) > amax) {
                amax = Math.abs(x[j]);
                max = x[j];
            }
        }
        return max;
    }
}
