package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_K: super-blocks of 256 weights in eight sub-blocks of 32, each with a 6-bit scale and min
 * ({@link KScales}): {@code w = d * scale[s] * q - dmin * min[s]} with 4-bit {@code q}. Scalar
 * specification.
 *
 * <pre>
 * offset 0      2      4                16                                 144
 *        +------+------+----------------+-----------------------------------+
 *        | d    | dmin | scales, mins   | qs: 4 groups of 32 bytes           |
 *        | fp16 | fp16 | 12 bytes       | group g, byte l: low nibble  = w[64g + l]      (sub-block 2g)
 *        |      |      |                |                  high nibble = w[64g + 32 + l] (sub-block 2g+1)
 *        +------+------+----------------+-----------------------------------+
 * </pre>
 */
final class Q4_KFormat implements RowKernel {

    static final Q4_KFormat INSTANCE = new Q4_KFormat();

    static final int BLOCK_BYTES = 144;

    private Q4_KFormat() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q4_K;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                long qs = block + 16 + 32L * g;
                int xLo = xOff + b * QK_K + 64 * g;
                int xHi = xLo + 32;
                float qxLo = 0f, xsLo = 0f, qxHi = 0f, xsHi = 0f;
                for (int l = 0; l < 32; l++) {
                    int q = Bytes.u8(w, qs + l);
                    qxLo += (q & 0x0F) * x[xLo + l];
                    xsLo += x[xLo + l];
                    qxHi += (q >>> 4) * x[xHi + l];
                    xsHi += x[xHi + l];
                }
                sum += KScales.subBlockDot(w, block + 4, 2 * g, d, dmin, qxLo, xsLo)
                        + KScales.subBlockDot(w, block + 4, 2 * g + 1, d, dmin, qxHi, xsHi);
            }
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                float d1 = d * KScales.scale(w, block + 4, 2 * g);
                float m1 = dmin * KScales.min(w, block + 4, 2 * g);
                float d2 = d * KScales.scale(w, block + 4, 2 * g + 1);
                float m2 = dmin * KScales.min(w, block + 4, 2 * g + 1);
                long qs = block + 16 + 32L * g;
                int y = dstOff + b * QK_K + 64 * g;
                for (int l = 0; l < 32; l++) {
                    int q = Bytes.u8(w, qs + l);
                    dst[y + l] = d1 * (q & 0x0F) - m1;
                    dst[y + 32 + l] = d2 * (q >>> 4) - m2;
                }
            }
        }
    }

    /**
     * llama.cpp's {@code quantize_row_q4_K_ref}: per 32-value sub-block an affine fit
     * ({@link KQuantizer#makeQkx2Quants}: 15 levels, inverse scales tried from {@code nmax - 1} in 21
     * steps of 0.1), the eight scales and mins quantized to 6 bits, then every value requantized
     * against its stored scale and min ({@link KQuantizer#superBlockWithMins}). Writes
     * {@code n / 256 * 144} bytes at {@code dst[dstOff]}; {@code n} is a multiple of 256.
     */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        KQuantizer.Scratch s = new KQuantizer.Scratch();
        for (int b = 0; b < n / QK_K; b++) {
            long block = dstOff + (long) b * BLOCK_BYTES;
            KQuantizer.superBlockWithMins(src, srcOff + b * QK_K, 15, -1f, 20, s, dst, block);
            for (int g = 0; g < 4; g++) {
                for (int l = 0; l < 32; l++) {
                    Bytes.putByte(dst, block + 16 + 32L * g + l, s.quants[64 * g + l] | s.quants[64 * g + 32 + l] << 4);
                }
            }
        }
    }
}
