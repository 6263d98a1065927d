package io.nereid.engine.cpu.kernel;

/**
 * The element-wise and attention kernels of the CPU forward pass, behind one interface so that
 * a scalar reference and a Vector API implementation can be swapped and checked against each
 * other (Lucene's vectorization provider pattern). Matrix products of weights live with the
 * tensor types ({@code io.nereid.engine.tensor}), since they depend on the weight format.
 *
 * <p>Arrays are passed with explicit offsets so callers can work inside large scratch buffers
 * without copying. Implementations are stateless and thread-safe; every method may be called
 * concurrently from the kernel pool on disjoint output ranges. None allocates on the hot path.
 */
public interface KernelSupport {

    /** K or V rows {@link #attentionF16Queries} widens at a time: its {@code row} scratch holds this many. */
    int QUERIES_ROWS = 16;

    /** Positions {@link #attentionF16Panels} multiplies with their values at a time (its scratch holds their V rows). */
    int PANEL_POSITIONS = 512;

    /** {@code sum(a[aOff + i] * b[bOff + i])} for {@code i < n}. */
    float dot(float[] a, int aOff, float[] b, int bOff, int n);

    /** {@code y[yOff + i] += alpha * x[xOff + i]}. */
    void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int n);

    /**
     * RMS norm: {@code out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]} over {@code n} elements
     * ({@code out} may alias {@code x} at the same offset).
     */
    void rmsNorm(float[] out, int outOff, float[] x, int xOff, float[] weight, int n, float eps);

    /** In-place numerically stable softmax of {@code x[off, off + n)}. */
    void softmax(float[] x, int off, int n);

    /** In-place {@code gate[i] = silu(gate[i]) * up[i]}, silu(v) = v / (1 + e^-v). */
    void siluMul(float[] gate, int gateOff, float[] up, int upOff, int n);

    /**
     * Rotary position embedding, in place, for {@code numHeads} heads of {@code headDim} starting at
     * {@code off}, using precomputed {@code cos[p * rotDim/2 + i]}, {@code sin[...]} for position
     * {@code pos} ({@code rotDim <= headDim} dimensions rotate, the rest pass through).
     *
     * @param neox false: pairs are adjacent {@code (2i, 2i+1)} (GGML "normal", Llama); true: pairs
     *             are {@code (i, i + rotDim/2)} (GGML NeoX, Qwen 2/3)
     */
    void rope(float[] x, int off, int numHeads, int headDim, int rotDim, int pos, float[] cos, float[] sin, boolean neox);

    /**
     * Causal attention of one query head over the first {@code numTokens} positions of one
     * sequence stored in paged blocks: {@code out = softmax(q·K^T * scale) · V}.
     *
     * <p>K/V layout: the KV head's rows of a block are {@code blockSize} consecutive rows of
     * {@code headDim}, its blocks {@code blockStride} elements apart from {@code headBase}: element
     * {@code d} of position {@code t} is at {@code headBase + blockTable[t / blockSize] * blockStride
     * + (t % blockSize) * headDim + d} (the storage chooses the layout: {@code KvStorage} keeps each
     * head's blocks side by side, {@code blockStride = blockSize * headDim}).
     *
     * @param scores scratch of at least {@code numTokens} floats
     */
    void attention(float[] q, int qOff, float[] keys, float[] values, int[] blockTable, int numTokens, int blockSize,
            int headBase, int blockStride, int headDim, float scale, float[] scores, float[] out, int outOff);

    /**
     * {@link #attention} over an F16 cache: the same layout, block table and result, with each K/V
     * element an IEEE 754 binary16 value in a {@code short} (as written by
     * {@link Float#floatToFloat16}) and widened exactly to float (as by {@link Float#float16ToFloat})
     * before it is multiplied. The query, scores and output stay F32.
     *
     * @param scores scratch of at least {@code numTokens} floats
     */
    void attentionF16(float[] q, int qOff, short[] keys, short[] values, int[] blockTable, int numTokens,
            int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores, float[] out,
            int outOff);

    /**
     * {@link #attentionF16} of several queries that read the same KV head of one sequence (the
     * heads of a GQA group, consecutive tokens of a prompt): query {@code i} at
     * {@code q[qOffs[i]]} over the first {@code counts[i]} positions, into
     * {@code out[outOffs[i]]}; the same bits as one {@code attentionF16} call per query. A
     * vector implementation widens each K and V row once for all the queries instead of once
     * per query.
     *
     * @param scores scratch of at least {@code queries * scoresStride} floats, {@code scoresStride}
     *     at least the largest count
     * @param row scratch of at least {@link #QUERIES_ROWS} {@code * headDim} floats
     */
    default void attentionF16Queries(float[] q, int[] qOffs, int[] counts, int queries, short[] keys, short[] values,
            int[] blockTable, int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores,
            int scoresStride, float[] row, float[] out, int[] outOffs) {
        for (int i = 0; i < queries; i++) {
            attentionF16(q, qOffs[i], keys, values, blockTable, counts[i], blockSize, headBase, blockStride, headDim,
                    scale, scores, out, outOffs[i]);
        }
    }

    /**
     * Floats of {@code work} {@link #attentionF16Panels} needs for {@code queries} queries over
     * {@code longest} positions.
     */
    static int panelWork(int queries, int longest, int headDim) {
        int padded = (queries + 15) / 16 * 16;
        return headDim * (padded + QUERIES_ROWS + Math.min(longest, PANEL_POSITIONS))
                + PanelDot.ROWS * PanelDot.MAX_VECTORS * 16;
    }

    /**
     * {@link #attentionF16Queries} in the faster order for many queries of one sequence (the
     * tokens of a prompt chunk times a GQA group): the same roundings (query, probabilities to
     * F16; softmax as {@link #softmax}), but the products summed in another order, so a query's
     * result is not the bits it gets alone or in another group (use {@link #attentionF16Queries}
     * where that matters). Also requires {@code scoresStride} equal to the largest count.
     *
     * @param work scratch of at least {@link #panelWork} floats
     */
    default void attentionF16Panels(float[] q, int[] qOffs, int[] counts, int queries, short[] keys, short[] values,
            int[] blockTable, int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores,
            int scoresStride, float[] work, float[] out, int[] outOffs) {
        attentionF16Queries(q, qOffs, counts, queries, keys, values, blockTable, blockSize, headBase, blockStride,
                headDim, scale, scores, scoresStride, work, out, outOffs);
    }
}
