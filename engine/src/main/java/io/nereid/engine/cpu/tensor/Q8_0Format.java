package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q8_0: blocks of 32 weights, {@code w[j] = d * q[j]}. Scalar specification.
 *
 * <pre>
 * offset  0      2                                  34
 *         +------+----------------------------------+
 *         | d    | q[0] q[1] ...            q[31]   |
 *         | fp16 | int8 x 32                        |
 *         +------+----------------------------------+
 * </pre>
 */
final class Q8_0Format implements RowKernel {

    static final Q8_0Format INSTANCE = new Q8_0Format();

    static final int BLOCK = 32;
    static final int BLOCK_BYTES = 34;

    private Q8_0Format() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q8_0;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int xb = xOff + b * BLOCK;
            float blockSum = 0f; // d is common to the block: one multiply per block, as ggml does
            for (int j = 0; j < BLOCK; j++) {
                blockSum += Bytes.s8(w, block + 2 + j) * x[xb + j];
            }
            sum += Bytes.f16(w, block) * blockSum;
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int j = 0; j < BLOCK; j++) {
                dst[dstOff + b * BLOCK + j] = Bytes.s8(w, block + 2 + j) * d;
            }
        }
    }

    /**
     * llama.cpp's {@code quantize_row_q8_0_ref}: per block {@code d = amax / 127},
     * {@code q[j] = roundf(x[j] / d)} (half away from zero), so that the largest magnitude maps to
     * ±127 and every error before the fp16 rounding of {@code d} is at most {@code d / 2}.
     * Writes {@code n / 32 * 34} bytes at {@code dst[dstOff]}; {@code n} is a multiple of 32.
     */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        byte[] q = new byte[BLOCK];
        for (int b = 0; b < n / BLOCK; b++) {
            long block = dstOff + (long) b * BLOCK_BYTES;
            Bytes.putF16(dst, block, quantizeBlock(src, srcOff + b * BLOCK, q, 0));
            MemorySegment.copy(MemorySegment.ofArray(q), 0, dst, block + 2, BLOCK);
        }
    }

    /**
     * One block of {@link #quantize}: {@code src[srcOff, srcOff + 32)} into quants
     * {@code q[qOff, qOff + 32)}; returns the scale {@code d}, not rounded to fp16.
     */
    static float quantizeBlock(float[] src, int srcOff, byte[] q, int qOff) {
        float amax = 0f;
        for (int j = 0; j < BLOCK; j++) {
            amax = Math.max(amax, Math.abs(src[srcOff + j]));
        }
        float d = amax / 127f;
        float id = d != 0f ? 1f / d : 0f;
        for (int j = 0; j < BLOCK; j++) {
            q[qOff + j] = (byte) roundHalfAway(src[srcOff + j] * id);
        }
        return d;
    }

    /** C's {@code roundf}: ties away from zero ({@link Math#round} rounds ties up instead). */
    static int roundHalfAway(float v) {
        // In double, |v| + 0.5 is exact for every float, so no tie is created by the addition.
        int r = (int) Math.floor(Math.abs((double) v) + 0.5);
        return v < 0 ? -r : r;
    }
}
