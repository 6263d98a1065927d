package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_K: Q4_K with a fifth bit per weight: {@code w = d * scale[s] * q - dmin * min[s]} with
 * 5-bit {@code q = nibble | highBit << 4}. Scalar specification.
 *
 * <pre>
 * offset 0      2      4              16            48                       176
 *        +------+------+--------------+-------------+------------------------+
 *        | d    | dmin | scales, mins | qh          | qs: 4 groups of 32     |
 *        | fp16 | fp16 | 12 bytes     | 32 bytes    | bytes, as in Q4_K      |
 *        +------+------+--------------+-------------+------------------------+
 * qh[l] bit 2g     = high bit of w[64g + l]       (sub-block 2g)
 * qh[l] bit 2g + 1 = high bit of w[64g + 32 + l]  (sub-block 2g + 1)
 * </pre>
 */
final class Q5_KFormat implements RowKernel {

    static final Q5_KFormat INSTANCE = new Q5_KFormat();

    static final int BLOCK_BYTES = 176;

    private Q5_KFormat() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q5_K;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                long qs = block + 48 + 32L * g;
                int xLo = xOff + b * QK_K + 64 * g;
                int xHi = xLo + 32;
                float qxLo = 0f, xsLo = 0f, qxHi = 0f, xsHi = 0f;
                for (int l = 0; l < 32; l++) {
                    int q = Bytes.u8(w, qs + l);
                    int h = Bytes.u8(w, block + 16 + l);
                    qxLo += ((q & 0x0F) | ((h >>> (2 * g)) & 1) << 4) * x[xLo + l];
                    xsLo += x[xLo + l];
                    qxHi += ((q >>> 4) | ((h >>> (2 * g + 1)) & 1) << 4) * x[xHi + l];
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
                long qs = block + 48 + 32L * g;
                int y = dstOff + b * QK_K + 64 * g;
                for (int l = 0; l < 32; l++) {
                    int q = Bytes.u8(w, qs + l);
                    int h = Bytes.u8(w, block + 16 + l);
                    dst[y + l] = d1 * ((q & 0x0F) | ((h >>> (2 * g)) & 1) << 4) - m1;
                    dst[y + 32 + l] = d2 * ((q >>> 4) | ((h >>> (2 * g + 1)) & 1) << 4) - m2;
                }
            }
        }
    }

    /**
     * llama.cpp's {@code quantize_row_q5_K_ref}: {@link Q4_KFormat#quantize} with 31 levels and
     * inverse scales tried from {@code nmax - 0.5} in 16 steps of 0.1; the fifth bit of each quant
     * goes to {@code qh}. Writes {@code n / 256 * 176} bytes at {@code dst[dstOff]}; {@code n} is a
     * multiple of 256.
     */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        KQuantizer.Scratch s = new KQuantizer.Scratch();
        for (int b = 0; b < n / QK_K; b++) {
            long block = dstOff + (long) b * BLOCK_BYTES;
            KQuantizer.superBlockWithMins(src, srcOff + b * QK_K, 31, -0.5f, 15, s, dst, block);
            for (int l = 0; l < 32; l++) {
                int qh = 0;
                for (int g = 0; g < 4; g++) {
                    int lo = s.quants[64 * g + l];
                    int hi = s.quants[64 * g + 32 + l];
                    qh |= (lo >>> 4) << (2 * g) | (hi >>> 4) << (2 * g + 1);
                    Bytes.putByte(dst, block + 48 + 32L * g + l, (lo & 0x0F) | (hi & 0x0F) << 4);
                }
                Bytes.putByte(dst, block + 16 + l, qh);
            }
        }
    }
}
