package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q6_K: super-blocks of 256 weights in sixteen sub-blocks of 16, each with a signed 8-bit scale:
 * {@code w[i] = d * scale[i / 16] * (q[i] - 32)} with 6-bit {@code q}. Scalar specification.
 *
 * <pre>
 * offset 0                    128              192              208    210
 *        +--------------------+----------------+----------------+------+
 *        | ql: low 4 bits     | qh: high 2 bits| scales         | d    |
 *        | 128 bytes          | 64 bytes       | int8 x 16      | fp16 |
 *        +--------------------+----------------+----------------+------+
 * For half h (weights 128h .. 128h + 127), l in 0..31, with L = ql + 64h and H = qh + 32h:
 *   q[128h + l]      = L[l]      &amp; 0xF | (H[l] >> 0 &amp; 3) << 4
 *   q[128h + l + 32] = L[l + 32] &amp; 0xF | (H[l] >> 2 &amp; 3) << 4
 *   q[128h + l + 64] = L[l]      >> 4  | (H[l] >> 4 &amp; 3) << 4
 *   q[128h + l + 96] = L[l + 32] >> 4  | (H[l] >> 6 &amp; 3) << 4
 * </pre>
 */
final class Q6_KFormat implements RowKernel {

    static final Q6_KFormat INSTANCE = new Q6_KFormat();

    static final int BLOCK_BYTES = 210;

    private Q6_KFormat() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    /** The 6-bit quant of weight {@code i} (0..255) of the super-block at {@code block}, minus 32. */
    static int quant(MemorySegment w, long block, int i) {
        int h = i / 128;
        int l = i % 32;
        int quarter = (i % 128) / 32; // 0..3: which nibble of ql and which 2 bits of qh
        int low = Bytes.u8(w, block + 64L * h + l + (quarter & 1) * 32);
        low = (quarter & 2) == 0 ? low & 0x0F : low >>> 4;
        int high = (Bytes.u8(w, block + 128 + 32L * h + l) >>> (2 * quarter)) & 3;
        return (low | high << 4) - 32;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int s = 0; s < 16; s++) {
                float subSum = 0f; // the scale is common to 16 weights: one multiply per sub-block
                for (int i = 16 * s; i < 16 * s + 16; i++) {
                    subSum += quant(w, block, i) * x[xOff + b * QK_K + i];
                }
                sum += d * Bytes.s8(w, block + 192 + s) * subSum;
            }
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int i = 0; i < QK_K; i++) {
                dst[dstOff + b * QK_K + i] = d * Bytes.s8(w, block + 192 + i / 16) * quant(w, block, i);
            }
        }
    }

    /**
     * llama.cpp's {@code quantize_row_q6_K_ref}: per 16-value sub-block a symmetric fit
     * ({@link KQuantizer#makeQxQuants}, 64 levels, weights {@code x^2}); the sixteen scales as
     * int8 against the one of largest magnitude ({@code d = max / -128}, so that scale is -128 and
     * the opposite extreme is clamped to 127); then every value requantized against its stored scale,
     * {@code q = clamp(round(x / (d * scale)), -32, 31)}. A super-block whose scales are all below
     * {@link KQuantizer#GROUP_MAX_EPS} is written as zeros. Writes {@code n / 256 * 210} bytes at
     * {@code dst[dstOff]}; {@code n} is a multiple of 256.
     */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        byte[] quants = new byte[QK_K];
        float[] scales = new float[QK_K / 16];
        for (int b = 0; b < n / QK_K; b++) {
            int x = srcOff + b * QK_K;
            long block = dstOff + (long) b * BLOCK_BYTES;
            float maxScale = 0;
            float maxAbsScale = 0;
            for (int s = 0; s < QK_K / 16; s++) {
                scales[s] = KQuantizer.makeQxQuants(16, 32, src, x + 16 * s, quants, 16 * s);
                if (Math.abs(scales[s]) > maxAbsScale) {
                    maxAbsScale = Math.abs(scales[s]);
                    maxScale = scales[s];
                }
            }
            if (maxAbsScale < KQuantizer.GROUP_MAX_EPS) {
                dst.asSlice(block, BLOCK_BYTES).fill((byte) 0);
                continue;
            }
            float iscale = -128f / maxScale;
            Bytes.putF16(dst, block + 208, 1 / iscale);
            for (int s = 0; s < QK_K / 16; s++) {
                Bytes.putByte(dst, block + 192 + s, Math.min(127, KQuantizer.nearestInt(iscale * scales[s])));
            }
            float d = Bytes.f16(dst, block + 208);
            for (int s = 0; s < QK_K / 16; s++) {
                float ds = d * Bytes.s8(dst, block + 192 + s);
                if (ds == 0) {
                    continue; // the sub-block keeps the quants of its fit
                }
                for (int i = 16 * s; i < 16 * s + 16; i++) {
                    quants[i] = (byte) (KQuantizer.clamp(KQuantizer.nearestInt(src[x + i] / ds), -32, 31) + 32);
                }
            }
            for (int h = 0; h < 2; h++) {
                int q = 128 * h;
                long ql = block + 64L * h;
                long qh = block + 128 + 32L * h;
                for (int l = 0; l < 32; l++) {
                    int q1 = quants[q + l];
                    int q2 = quants[q + l + 32];
                    int q3 = quants[q + l + 64];
                    int q4 = quants[q + l + 96];
                    Bytes.putByte(dst, ql + l, (q1 & 0x0F) | (q3 & 0x0F) << 4);
                    Bytes.putByte(dst, ql + l + 32, (q2 & 0x0F) | (q4 & 0x0F) << 4);
                    Bytes.putByte(dst, qh + l, q1 >>> 4 | (q2 >>> 4) << 2 | (q3 >>> 4) << 4 | (q4 >>> 4) << 6);
                }
            }
        }
    }
}
