package io.nereid.engine.cpu.kernel;

/**
 * The reference {@link KernelSupport}: plain loops in the textbook order, float arithmetic,
 * {@link Math#exp} through double. It is the fallback when the Vector API is unavailable and the
 * oracle every other implementation is tested against, so it favours being obviously right over
 * being fast.
 *
 * <p>Stateless and thread-safe; use {@link #INSTANCE}.
 */
public final class ScalarKernels implements KernelSupport {

    /** The one instance; the class has no state. */
    public static final ScalarKernels INSTANCE = new ScalarKernels();

    private ScalarKernels() {
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    @Override
    public void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int n) {
        for (int i = 0; i < n; i++) {
            y[yOff + i] += alpha * x[xOff + i];
        }
    }

    @Override
    public void rmsNorm(float[] out, int outOff, float[] x, int xOff, float[] weight, int n, float eps) {
        // The scale is complete before the first write, so out may alias x.
        float scale = rmsScale(x, xOff, n, eps);
        for (int i = 0; i < n; i++) {
            out[outOff + i] = x[xOff + i] * scale * weight[i];
        }
    }

    /**
     * ggml's {@code rms_norm}: the squares summed in double, the mean rounded to float, then
     * {@code 1 / sqrtf(mean + eps)} in float. Shared by both implementations, so they round alike,
     * and one sequential order, so a token's scale is the same in every JIT tier.
     */
    static float rmsScale(float[] x, int off, int n, float eps) {
        double sum = 0;
        for (int i = off; i < off + n; i++) {
            sum += x[i] * x[i];
        }
        float mean = (float) (sum / n);
        return 1f / (float) Math.sqrt(mean + eps);
    }

    /**
     * {@code e^x} in float, the same bits as {@code VectorMathKernels}' lanes (both are these
     * operations): Cephes' {@code expf}, {@code x = n ln 2 + r} with {@code n} rounded to nearest
     * even and a degree-6 polynomial in {@code r}, within 2 ulp of the exact value; 0 below
     * {@code -87.3}. The JDK's {@code Math.exp} and the Vector API's {@code EXP} round as they
     * please, and the latter differently in compiled and interpreted code, which would make a
     * token's softmax depend on when it ran.
     */
    static float expf(float x) {
        float c = Math.min(Math.max(x, EXP_LO), EXP_HI);
        float n = (c * LOG2E + ROUNDER) - ROUNDER;
        float r = Math.fma(n, -LN2_HI, c);
        r = Math.fma(n, -LN2_LO, r);
        float p = EXP_P0;
        p = Math.fma(p, r, EXP_P1);
        p = Math.fma(p, r, EXP_P2);
        p = Math.fma(p, r, EXP_P3);
        p = Math.fma(p, r, EXP_P4);
        p = Math.fma(p, r, EXP_P5);
        p = Math.fma(p, r * r, r + 1f);
        float scaled = p * Float.intBitsToFloat(((int) n + 127) << 23);
        return x < EXP_LO ? 0f : scaled;
    }

    static final float EXP_LO = -87.33654f;
    static final float EXP_HI = 88f;          // n stays <= 127: 2^n a finite float
    static final float LOG2E = 1.44269504088896341f;
    static final float ROUNDER = 12582912f;    // 1.5 * 2^23: adding and subtracting it rounds to nearest even
    static final float LN2_HI = 0.693359375f;
    static final float LN2_LO = -2.12194440e-4f;
    static final float EXP_P0 = 1.9875691500E-4f;
    static final float EXP_P1 = 1.3981999507E-3f;
    static final float EXP_P2 = 8.3334519073E-3f;
    static final float EXP_P3 = 4.1665795894E-2f;
    static final float EXP_P4 = 1.6666665459E-1f;
    static final float EXP_P5 = 5.0000001201E-1f;

    @Override
    public void softmax(float[] x, int off, int n) {
        if (n == 0) {
            return;
        }
        // Subtracting the maximum keeps every exponent <= 0: no overflow for large logits, and
        // the maximum itself contributes exp(0) = 1, so the sum is >= 1 and never 0.
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, x[off + i]);
        }
        for (int i = 0; i < n; i++) {
            x[off + i] = expf(x[off + i] - max);
        }
        normalize(x, off, n);
    }

    /** ggml's {@code soft_max}: the exponentials summed in double, then scaled by {@code (float) (1 / sum)}. */
    static void normalize(float[] x, int off, int n) {
        double sum = 0;
        for (int i = off; i < off + n; i++) {
            sum += x[i];
        }
        float inverse = (float) (1.0 / sum);
        for (int i = off; i < off + n; i++) {
            x[i] *= inverse;
        }
    }

    @Override
    public void siluMul(float[] gate, int gateOff, float[] up, int upOff, int n) {
        for (int i = 0; i < n; i++) {
            float g = gate[gateOff + i];
            gate[gateOff + i] = g / (1f + expf(-g)) * up[upOff + i];
        }
    }

    @Override
    public void rope(float[] x, int off, int numHeads, int headDim, int rotDim, int pos, float[] cos, float[] sin,
            boolean neox) {
        checkRope(headDim, rotDim);
        int half = rotDim / 2;
        int table = pos * half;
        for (int h = 0; h < numHeads; h++) {
            int base = off + h * headDim;
            for (int i = 0; i < half; i++) {
                // Pair members: (2i, 2i+1) for the GGML "normal" layout, (i, i + half) for NeoX.
                int i0 = neox ? base + i : base + 2 * i;
                int i1 = neox ? i0 + half : i0 + 1;
                rotate(x, i0, i1, cos[table + i], sin[table + i]);
            }
        }
    }

    /** Rotates the pair {@code (x[i0], x[i1])} by the angle whose cosine and sine are given. */
    static void rotate(float[] x, int i0, int i1, float c, float s) {
        float x0 = x[i0];
        float x1 = x[i1];
        x[i0] = x0 * c - x1 * s;
        x[i1] = x0 * s + x1 * c;
    }

    /** Once per call, not per element: an odd or oversized rotDim would silently skip dimensions. */
    static void checkRope(int headDim, int rotDim) {
        if (rotDim < 0 || (rotDim & 1) != 0 || rotDim > headDim) {
            throw new IllegalArgumentException(
                    "rope: rotDim " + rotDim + " must be even and within headDim " + headDim);
        }
    }

    @Override
    public void attention(float[] q, int qOff, float[] keys, float[] values, int[] blockTable, int numTokens,
            int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores, float[] out,
            int outOff) {
        for (int t = 0; t < numTokens; t++) {
            scores[t] = dot(q, qOff, keys, kvOffset(blockTable, t, blockSize, headBase, blockStride, headDim), headDim)
                    * scale;
        }
        softmax(scores, 0, numTokens);
        java.util.Arrays.fill(out, outOff, outOff + headDim, 0f);
        for (int t = 0; t < numTokens; t++) {
            axpy(scores[t], values, kvOffset(blockTable, t, blockSize, headBase, blockStride, headDim), out, outOff,
                    headDim);
        }
    }

    @Override
    public void attentionF16(float[] q, int qOff, short[] keys, short[] values, int[] blockTable, int numTokens,
            int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores, float[] out,
            int outOff) {
        // llama.cpp's matmuls with an F16 cache round their F32 side to F16: the query for K·q,
        // the softmax weights for the sum over V. out holds the rounded query until the V pass.
        roundToF16(q, qOff, out, outOff, headDim);
        for (int t = 0; t < numTokens; t++) {
            int row = kvOffset(blockTable, t, blockSize, headBase, blockStride, headDim);
            float sum = 0f;
            for (int d = 0; d < headDim; d++) {
                sum += out[outOff + d] * Float.float16ToFloat(keys[row + d]);
            }
            scores[t] = sum * scale;
        }
        softmax(scores, 0, numTokens);
        roundToF16(scores, 0, scores, 0, numTokens);
        java.util.Arrays.fill(out, outOff, outOff + headDim, 0f);
        for (int t = 0; t < numTokens; t++) {
            int row = kvOffset(blockTable, t, blockSize, headBase, blockStride, headDim);
            for (int d = 0; d < headDim; d++) {
                out[outOff + d] += scores[t] * Float.float16ToFloat(values[row + d]);
            }
        }
    }

    /** {@code dst[dstOff + i] = fp16(src[srcOff + i])} as floats, rounded to nearest even. */
    static void roundToF16(float[] src, int srcOff, float[] dst, int dstOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dstOff + i] = Float.float16ToFloat(Float.floatToFloat16(src[srcOff + i]));
        }
    }

    /** Start of token {@code t}'s row in the KV head at {@code headBase} whose blocks are {@code blockStride} apart. */
    static int kvOffset(int[] blockTable, int t, int blockSize, int headBase, int blockStride, int headDim) {
        int block = blockTable[t / blockSize];
        return headBase + block * blockStride + t % blockSize * headDim;
    }
}
