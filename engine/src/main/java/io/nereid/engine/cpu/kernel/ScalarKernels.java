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
        // The sum of squares is complete before the first write, so out may alias x.
        float scale = rmsScale(dot(x, xOff, x, xOff, n), n, eps);
        for (int i = 0; i < n; i++) {
            out[outOff + i] = x[xOff + i] * scale * weight[i];
        }
    }

    /** {@code 1 / sqrt(sumOfSquares / n + eps)}; shared so both implementations round alike. */
    static float rmsScale(float sumOfSquares, int n, float eps) {
        return (float) (1.0 / Math.sqrt(sumOfSquares / n + eps));
    }

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
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            float e = (float) Math.exp(x[off + i] - max);
            x[off + i] = e;
            sum += e;
        }
        for (int i = 0; i < n; i++) {
            x[off + i] /= sum;
        }
    }

    @Override
    public void siluMul(float[] gate, int gateOff, float[] up, int upOff, int n) {
        for (int i = 0; i < n; i++) {
            float g = gate[gateOff + i];
            gate[gateOff + i] = g / (1f + (float) Math.exp(-g)) * up[upOff + i];
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
            int blockSize, int numKvHeads, int kvHead, int headDim, float scale, float[] scores, float[] out,
            int outOff) {
        for (int t = 0; t < numTokens; t++) {
            scores[t] = dot(q, qOff, keys, kvOffset(blockTable, t, blockSize, numKvHeads, kvHead, headDim), headDim)
                    * scale;
        }
        softmax(scores, 0, numTokens);
        java.util.Arrays.fill(out, outOff, outOff + headDim, 0f);
        for (int t = 0; t < numTokens; t++) {
            axpy(scores[t], values, kvOffset(blockTable, t, blockSize, numKvHeads, kvHead, headDim), out, outOff,
                    headDim);
        }
    }

    @Override
    public void attentionF16(float[] q, int qOff, short[] keys, short[] values, int[] blockTable, int numTokens,
            int blockSize, int numKvHeads, int kvHead, int headDim, float scale, float[] scores, float[] out,
            int outOff) {
        for (int t = 0; t < numTokens; t++) {
            int row = kvOffset(blockTable, t, blockSize, numKvHeads, kvHead, headDim);
            float sum = 0f;
            for (int d = 0; d < headDim; d++) {
                sum += q[qOff + d] * Float.float16ToFloat(keys[row + d]);
            }
            scores[t] = sum * scale;
        }
        softmax(scores, 0, numTokens);
        java.util.Arrays.fill(out, outOff, outOff + headDim, 0f);
        for (int t = 0; t < numTokens; t++) {
            int row = kvOffset(blockTable, t, blockSize, numKvHeads, kvHead, headDim);
            for (int d = 0; d < headDim; d++) {
                out[outOff + d] += scores[t] * Float.float16ToFloat(values[row + d]);
            }
        }
    }

    /** Start of token {@code t}'s row for {@code kvHead} in the {@code [block][kvHead][slot][headDim]} layout. */
    static int kvOffset(int[] blockTable, int t, int blockSize, int numKvHeads, int kvHead, int headDim) {
        int block = blockTable[t / blockSize];
        return ((block * numKvHeads + kvHead) * blockSize + t % blockSize) * headDim;
    }
}
