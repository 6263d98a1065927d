package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * The operations the engine needs on a run of weights stored in one ggml format: decode it to
 * floats, and take its dot product with a float vector without materialising the floats.
 *
 * <p>{@code offset} is the byte offset of the run's first block in {@code w} and {@code n} its
 * length in elements, a multiple of {@link GgmlType#blockSize()}; callers (only
 * {@link WeightMatrix} and tests) validate both, so implementations do not. Implementations are
 * stateless and thread-safe, and do not allocate.
 *
 * <p>The vector kernels keep one more promise (see {@link F32Vector}): {@code dot} gives, bit
 * for bit, the vector {@link FloatDot} of the row {@code dequantize} writes, so a matmul may
 * decode rows once for many tokens or dot them in place for one, and a token's result is the
 * same either way.
 */
interface RowKernel {

    GgmlType type();

    /**
     * What computes a matrix of {@code blocks} blocks of this format at {@code data}: by default
     * this kernel on the bytes as they are; a format whose layout decodes slowly may instead hand
     * a copy in a faster layout to another kernel that gives the same bits (Q6_K:
     * {@link Q6_KPacked}). Called once per matrix, when it is bound.
     */
    default Bound bind(MemorySegment data, long blocks) {
        return new Bound(this, data, type().bytesPerBlock());
    }

    /** {@code kernel} reading {@code data}, {@code bytesPerBlock} bytes for each block of the format. */
    record Bound(RowKernel kernel, MemorySegment data, int bytesPerBlock) {
    }

    /** {@code sum(w[i] * x[xOff + i])} for {@code i < n}, {@code w[i]} the i-th decoded weight. */
    float dot(MemorySegment w, long offset, float[] x, int xOff, int n);

    /**
     * {@link #dot} in the fastest order for a lone token, which may differ from {@code dot}'s in
     * float rounding (so not batch invariant, see {@link WeightMatrix#matmul}): {@code dot}'s one
     * FMA chain makes a lone token wait on the FMA latency, so the vector kernels of the formats
     * where it measured faster keep several chains in flight (F32: four, vector {@code k}
     * into accumulator {@code k % 4}; Q8_0, Q4_0: a block's sum in two chains, scaled once per
     * block into one of two; repacked Q6_K: each 16-weight sum scaled once; repacked Q4_K and
     * Q5_K: llama.cpp's {@code ds * sum(q * x) - ms * sum(x)}). Still one fixed order: the same
     * bits on every call, thread and row range. By default {@code dot} (F16, BF16: their
     * {@link #dotTokens} gets a lone token four chains from four rows side by side, in {@code dot}'s
     * order; a matrix with its {@link HalfColumns} copy takes that instead in the faster order).
     */
    default float dotFast(MemorySegment w, long offset, float[] x, int xOff, int n) {
        return dot(w, offset, x, xOff, n);
    }

    /**
     * {@code out[outOff + r] = dotFast(w, offset + r * rowBytes, x, xOff, n)} for {@code r < rows}:
     * a lone token against a run of rows. The vector kernels repeat this loop in their own class,
     * so that C2 profiles and compiles it for that format alone: one shared loop sees every
     * format of a mixed model (Q4_0 with a Q6_K output) and its calls turn polymorphic, which
     * measured 76 against 53 tok/s for the same Q4_0 layers (110M, pure against mixed).
     *
     * @param scratch at least {@code n} floats a kernel may use for what it computes once from
     *     {@code x} for all the rows (repacked Q4_K: the input's 32-weight sums), or null to
     *     allocate them
     */
    default void dotFastRows(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int n,
            float[] out, int outOff, float[] scratch) {
        for (int r = 0; r < rows; r++) {
            out[outOff + r] = dotFast(w, offset + r * rowBytes, x, xOff, n);
        }
    }

    /**
     * {@link #dotFastRows} for two tokens at once: {@code out[outOff + r]} for the input at
     * {@code xOff} and {@code out[outOff + outStride + r]} for the one at {@code xOff + xStride},
     * each the bits of {@code dotFast}. What a step of two or three tokens runs on in the faster
     * order (a speculative verification of one or two drafts, a decode step of two sequences):
     * kernels that decode each weight once for both tokens override it, since a one-token dot is
     * compute-bound (the second token's pass over rows still in cache measured as slow as the
     * first).
     *
     * @param scratch as for {@link #dotFastRows}
     */
    default void dotFastRows2Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        dotFastRows(w, offset, rowBytes, rows, x, xOff, n, out, outOff, scratch);
        dotFastRows(w, offset, rowBytes, rows, x, xOff + xStride, n, out, outOff + outStride, scratch);
    }

    /**
     * {@link #dotFastRows2Tokens} for three tokens (inputs {@code xStride} apart, outputs
     * {@code outStride} apart), each the bits of {@code dotFast}: a speculative verification of two
     * drafts. By default two tokens together, then the third against the same rows.
     *
     * @param scratch as for {@link #dotFastRows}
     */
    default void dotFastRows3Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        dotFastRows2Tokens(w, offset, rowBytes, rows, x, xOff, xStride, n, out, outOff, outStride, scratch);
        dotFastRows(w, offset, rowBytes, rows, x, xOff + 2 * xStride, n, out, outOff + 2 * outStride, scratch);
    }

    /**
     * Whether {@link #dotTokens} serves the matmuls of fewer than
     * {@link WeightMatrix#PANEL_TOKENS} tokens (F16, BF16): in the batch-invariant order, and in the
     * faster one where the matrix has no {@link HalfColumns} copy.
     */
    default boolean dotsTokens() {
        return false;
    }

    /**
     * {@code out[outOff + t * outStride + r] = dot(w, offset + r * rowBytes, x, xOff + t * xStride, n)}
     * for {@code r < rows} and {@code t < tokens}, each the bits of {@code dot} (which for a kernel
     * that answers {@link #dotsTokens} is also {@code dotFast}'s and the tiles'), each weight
     * decoded once for all the tokens. Only where {@link #dotsTokens} is true.
     */
    default void dotTokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int xStride,
            int tokens, int n, float[] out, int outOff, int outStride) {
        throw new UnsupportedOperationException(type() + " has no dotTokens");
    }

    /**
     * One row against four vectors, each weight decoded once:
     * {@code out[outOff + t] = dot(w, offset, x, xOff + t * xStride, n)} for {@code t < 4}, the
     * same bits. What a matmul of a few tokens (a decode step of a few sequences) runs on: the
     * rows stream in memory order, as for one token, and nothing is decoded to scratch.
     */
    default void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        for (int t = 0; t < 4; t++) {
            out[outOff + t] = dot(w, offset, x, xOff + t * xStride, n);
        }
    }

    /**
     * {@link #dot4Tokens} for two rows, the one at {@code offset} into {@code out[outOff..outOff+3]}
     * and the next ({@code offset + rowBytes}) into {@code out[outOff+4..outOff+7]}: the same bits
     * as two calls, for kernels whose two rows share the loads of the four tokens' inputs.
     */
    default void dot4Tokens2Rows(MemorySegment w, long offset, long rowBytes, float[] x, int xOff, int xStride, int n,
            float[] out, int outOff) {
        dot4Tokens(w, offset, x, xOff, xStride, n, out, outOff);
        dot4Tokens(w, offset + rowBytes, x, xOff, xStride, n, out, outOff + 4);
    }

    /** {@code dst[dstOff + i] = w[i]} for {@code i < n}. */
    void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n);
}
