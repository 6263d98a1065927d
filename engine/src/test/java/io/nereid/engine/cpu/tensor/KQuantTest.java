package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * K-quant super-blocks packed by hand here (the packing written from ggml's
 * {@code quantize_row_q*_K_ref} loops, independently of the decoders) and decoded by every
 * kernel, compared with the reference formula evaluated on the unpacked values:
 * Q4_K/Q5_K {@code w = d * scale[s] * q - dmin * min[s]}, Q6_K {@code w = d * scale[s] * (q - 32)}.
 * Both sides use the same float operation order, so they must be equal, not just close.
 */
class KQuantTest {

    /** A super-block's unpacked contents: quants, scales, mins, d and dmin. */
    record Block(int[] q, int[] scales, int[] mins, float d, float dmin) {
    }

    /** Scale/min patterns: small values (bits 4-5 clear), values of 16..63 whose high bits are packed apart, random. */
    static List<int[][]> scalePatterns() {
        List<int[][]> patterns = new ArrayList<>();
        patterns.add(new int[][] {{1, 2, 3, 4, 5, 6, 7, 8}, {0, 1, 2, 3, 4, 5, 6, 7}});
        patterns.add(new int[][] {{63, 17, 32, 48, 63, 16, 33, 47}, {5, 63, 31, 16, 48, 63, 1, 32}});
        Random r = new Random(5);
        for (int p = 0; p < 3; p++) {
            int[] sc = new int[8];
            int[] mn = new int[8];
            for (int j = 0; j < 8; j++) {
                sc[j] = r.nextInt(64);
                mn[j] = r.nextInt(64);
            }
            patterns.add(new int[][] {sc, mn});
        }
        return patterns;
    }

    static List<Block> q4Blocks() {
        return blocks(16);
    }

    static List<Block> q5Blocks() {
        return blocks(32);
    }

    private static List<Block> blocks(int levels) {
        List<Block> blocks = new ArrayList<>();
        int seed = 0;
        for (int[][] p : scalePatterns()) {
            int[] q = new int[256];
            Random r = new Random(seed++);
            for (int i = 0; i < 256; i++) {
                q[i] = seed == 1 ? (i * 7) % levels : r.nextInt(levels);
            }
            blocks.add(new Block(q, p[0], p[1], 0.0123f, 0.00456f));
        }
        return blocks;
    }

    static List<Block> q6Blocks() {
        List<Block> blocks = new ArrayList<>();
        int[][] scales = {
            {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8},
            {127, -128, 0, 64, -64, 1, 100, -100, 33, -33, 17, 90, -90, 5, 2, -1},
        };
        for (int p = 0; p < scales.length; p++) {
            int[] q = new int[256];
            Random r = new Random(10 + p);
            for (int i = 0; i < 256; i++) {
                q[i] = p == 0 ? (i * 5) % 64 : r.nextInt(64);
            }
            blocks.add(new Block(q, scales[p], null, 0.0021f, 0f));
        }
        return blocks;
    }

    // ---- packing, following ggml's quantize_row_q4_K_ref / q5_K_ref / q6_K_ref ----

    static void packScalesMins(MemorySegment s, long at, int[] sc, int[] mn) {
        for (int j = 0; j < 4; j++) {
            Bytes.putByte(s, at + j, sc[j] & 63 | (sc[j + 4] >> 4) << 6);
            Bytes.putByte(s, at + j + 4, mn[j] & 63 | (mn[j + 4] >> 4) << 6);
            Bytes.putByte(s, at + j + 8, (sc[j + 4] & 0xF) | (mn[j + 4] & 0xF) << 4);
        }
    }

    static MemorySegment packQ4K(Block b) {
        MemorySegment s = MemorySegment.ofArray(new byte[144]);
        Bytes.putF16(s, 0, b.d());
        Bytes.putF16(s, 2, b.dmin());
        packScalesMins(s, 4, b.scales(), b.mins());
        for (int g = 0; g < 4; g++) {
            for (int l = 0; l < 32; l++) {
                Bytes.putByte(s, 16 + 32 * g + l, b.q()[64 * g + l] | b.q()[64 * g + 32 + l] << 4);
            }
        }
        return s;
    }

    static MemorySegment packQ5K(Block b) {
        MemorySegment s = MemorySegment.ofArray(new byte[176]);
        Bytes.putF16(s, 0, b.d());
        Bytes.putF16(s, 2, b.dmin());
        packScalesMins(s, 4, b.scales(), b.mins());
        int m1 = 1;
        int m2 = 2;
        for (int n = 0; n < 256; n += 64) {
            for (int j = 0; j < 32; j++) {
                int l1 = b.q()[n + j];
                int l2 = b.q()[n + j + 32];
                int qh = Bytes.u8(s, 16 + j);
                if (l1 > 15) {
                    l1 -= 16;
                    qh |= m1;
                }
                if (l2 > 15) {
                    l2 -= 16;
                    qh |= m2;
                }
                Bytes.putByte(s, 16 + j, qh);
                Bytes.putByte(s, 48 + n / 2 + j, l1 | l2 << 4);
            }
            m1 <<= 2;
            m2 <<= 2;
        }
        return s;
    }

    static MemorySegment packQ6K(Block b) {
        MemorySegment s = MemorySegment.ofArray(new byte[210]);
        int[] q = b.q();
        for (int j = 0; j < 256; j += 128) {
            long ql = j / 2;          // 64 bytes per half
            long qh = 128 + j / 4;    // 32 bytes per half
            for (int l = 0; l < 32; l++) {
                int q1 = q[j + l] & 0xF;
                int q2 = q[j + l + 32] & 0xF;
                int q3 = q[j + l + 64] & 0xF;
                int q4 = q[j + l + 96] & 0xF;
                Bytes.putByte(s, ql + l, q1 | q3 << 4);
                Bytes.putByte(s, ql + l + 32, q2 | q4 << 4);
                Bytes.putByte(s, qh + l, (q[j + l] >> 4) | (q[j + l + 32] >> 4) << 2 | (q[j + l + 64] >> 4) << 4
                        | (q[j + l + 96] >> 4) << 6);
            }
        }
        for (int i = 0; i < 16; i++) {
            Bytes.putByte(s, 192 + i, b.scales()[i]);
        }
        Bytes.putF16(s, 208, b.d());
        return s;
    }

    // ---- reference formulas on the unpacked values ----

    static float[] referenceQ45K(Block b) {
        float d = f16(b.d());
        float dmin = f16(b.dmin());
        float[] w = new float[256];
        for (int i = 0; i < 256; i++) {
            int s = i / 32;
            w[i] = d * b.scales()[s] * b.q()[i] - dmin * b.mins()[s];
        }
        return w;
    }

    /**
     * Per weight, {@code |d * scale * q| + |dmin * min|}: the size of the terms a factored dot
     * ({@code d1 * sum(q x) - m1 * sum(x)}) adds, which can cancel; the dot tolerance scales with it.
     */
    static float[] magnitudeQ45K(Block b) {
        float[] m = new float[256];
        for (int i = 0; i < 256; i++) {
            int s = i / 32;
            m[i] = Math.abs(f16(b.d()) * b.scales()[s] * b.q()[i]) + Math.abs(f16(b.dmin()) * b.mins()[s]);
        }
        return m;
    }

    static float[] referenceQ6K(Block b) {
        float d = f16(b.d());
        float[] w = new float[256];
        for (int i = 0; i < 256; i++) {
            w[i] = d * b.scales()[i / 16] * (b.q()[i] - 32);
        }
        return w;
    }

    @ParameterizedTest
    @MethodSource("q4Blocks")
    void q4_KDecodesToTheReferenceFormula(Block b) {
        assertDecodes(GgmlType.Q4_K, packQ4K(b), referenceQ45K(b), magnitudeQ45K(b));
    }

    @ParameterizedTest
    @MethodSource("q5Blocks")
    void q5_KDecodesToTheReferenceFormula(Block b) {
        assertDecodes(GgmlType.Q5_K, packQ5K(b), referenceQ45K(b), magnitudeQ45K(b));
    }

    @ParameterizedTest
    @MethodSource("q6Blocks")
    void q6_KDecodesToTheReferenceFormula(Block b) {
        float[] w = referenceQ6K(b);
        assertDecodes(GgmlType.Q6_K, packQ6K(b), w, w);
    }

    /** Decodes with the scalar kernel and, when in use, the vector kernel; dots too, within rounding. */
    private static void assertDecodes(GgmlType type, MemorySegment block, float[] expected, float[] magnitude) {
        float[] x = TestRows.gaussian(new Random(7), 256, 1f);
        List<RowKernel> kernels = new ArrayList<>(List.of(RowKernels.scalar(type)));
        RowKernels.vector(type).ifPresent(kernels::add);
        for (RowKernel k : kernels) {
            float[] got = new float[256];
            k.dequantize(block, 0, got, 0, 256);
            assertArrayEquals(expected, got, k.getClass().getSimpleName());
            double exact = TestRows.exactDot(expected, 0, x, 0, 256);
            double tol = TestRows.dotTolerance(256, TestRows.absDot(magnitude, 0, x, 0, 256));
            assertEquals(exact, k.dot(block, 0, x, 0, 256), tol, k.getClass().getSimpleName() + " dot");
        }
    }

    private static float f16(float v) {
        return Float.float16ToFloat(Float.floatToFloat16(v));
    }
}
