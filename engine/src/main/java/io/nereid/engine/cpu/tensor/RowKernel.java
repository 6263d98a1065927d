package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * The operations the engine needs on a run of weights stored in one ggml format: decode it to
 * floats, and take its dot product with a float vector without materialising the floats, for one
 * row or four at a time.
 *
 * <p>{@code offset} is the byte offset of the run's first block in {@code w} and {@code n} its
 * length in elements, a multiple of {@link GgmlType#blockSize()}; callers (only
 * {@link WeightMatrix} and tests) validate both, so implementations do not. Implementations are
 * stateless and thread-safe, and do not allocate.
 *
 * <p>The vector kernels keep one more promise (see {@link F32Vector}): {@code dot} and
 * {@code dot4} give, bit for bit, the vector {@link FloatDot} of the row {@code dequantize}
 * writes, so a matmul may decode rows once for many tokens or dot them in place for one, and a
 * token's result is the same either way.
 */
interface RowKernel {

    GgmlType type();

    /** {@code sum(w[i] * x[xOff + i])} for {@code i < n}, {@code w[i]} the i-th decoded weight. */
    float dot(MemorySegment w, long offset, float[] x, int xOff, int n);

    /**
     * {@code out[outOff + j] = dot(w, offset + j * rowBytes, x, xOff, n)} for {@code j < 4}: four
     * rows against one vector, each weight read once, four independent sums in flight.
     */
    default void dot4(MemorySegment w, long offset, long rowBytes, float[] x, int xOff, int n, float[] out, int outOff) {
        for (int j = 0; j < 4; j++) {
            out[outOff + j] = dot(w, offset + j * rowBytes, x, xOff, n);
        }
    }

    /**
     * Whether {@link #dot4} in place is the faster way to multiply one vector, rather than
     * {@link #dequantize} into a scratch row and a {@link FloatDot}. Both give the same bits; the
     * difference is C2: a kernel whose four-row body decodes a format with many operations
     * (F16's widening, the K-quants' bit fields) outgrows what C2 inlines in one method
     * ({@code NodeCountInliningCutoff}), and the vectors of whatever it leaves out of line are
     * boxed on the heap: measured 5 to 20 times slower than decoding a row and dotting it.
     */
    default boolean dotsInPlace() {
        return false;
    }

    /** {@code dst[dstOff + i] = w[i]} for {@code i < n}. */
    void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n);
}
