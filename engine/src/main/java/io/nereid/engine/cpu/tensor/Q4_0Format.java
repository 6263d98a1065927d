package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_0: blocks of 32 weights, {@code w[j] = d * (q[j] - 8)} with 4-bit {@code q}. Scalar
 * specification.
 *
 * <pre>
 * offset  0      2                                  18
 *         +------+----------------------------------+
 *         | d    | qs[0] qs[1] ...          qs[15]  |
 *         | fp16 | byte j: low nibble  = q[j]       |
 *         |      |         high nibble = q[j + 16]  |
 *         +------+----------------------------------+
 * </pre>
 *
 * Elements 0..15 are the low nibbles and 16..31 the high nibbles, not interleaved pairs.
 */
final class Q4_0Format implements RowKernel {

    static final Q4_0Format INSTANCE = new Q4_0Format();

    static final int BLOCK = 32;
    static final int BLOCK_BYTES = 18;

    private Q4_0Format() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q4_0;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int xb = xOff + b * BLOCK;
            float blockSum = 0f;
            for (int j = 0; j < BLOCK / 2; j++) {
                int q = Bytes.u8(w, block + 2 + j);
                blockSum += ((q & 0x0F) - 8) * x[xb + j] + ((q >>> 4) - 8) * x[xb + j + 16];
            }
            sum += Bytes.f16(w, block) * blockSum;
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int yb = dstOff + b * BLOCK;
            float d = Bytes.f16(w, block);
            for (int j = 0; j < BLOCK / 2; j++) {
                int q = Bytes.u8(w, block + 2 + j);
                dst[yb + j] = ((q & 0x0F) - 8) * d;
                dst[yb + j + 16] = ((q >>> 4) - 8) * d;
            }
        }
    }

    /**
     * llama.cpp's {@code quantize_row_q4_0_ref}: per block, {@code max} is the value of largest
     * magnitude (sign kept, first one on ties), {@code d = max / -8} and
     * {@code q = min(15, trunc(x / d + 8.5))}. So {@code max} itself is exact (q = 0) and the
     * opposite extreme, at {@code x / d = 8}, is clamped to 7: the error bound is {@code |d|}
     * ({@code amax / 8}) rather than {@code |d| / 2}. Writes {@code n / 32 * 18} bytes at
     * {@code dst[dstOff]}; {@code n} is a multiple of 32.
     */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        for (int b = 0; b < n / BLOCK; b++) {
            int xb = srcOff + b * BLOCK;
            long block = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0f;
            float max = 0f;
            for (int j = 0; j < BLOCK; j++) {
                float v = src[xb + j];
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -8f;
            float id = d != 0f ? 1f / d : 0f;
            Bytes.putF16(dst, block, d);
            for (int j = 0; j < BLOCK / 2; j++) {
                // x / d + 8.5 >= 0.5 here, so the C (int8_t) truncation is the Java (int) cast
                int q0 = Math.min(15, (int) (src[xb + j] * id + 8.5f));
                int q1 = Math.min(15, (int) (src[xb + j + 16] * id + 8.5f));
                Bytes.putByte(dst, block + 2 + j, q0 | (q1 << 4));
            }
        }
    }
}
