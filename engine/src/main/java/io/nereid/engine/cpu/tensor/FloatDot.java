package io.nereid.engine.cpu.tensor;

/**
 * Dot product of two float arrays: the inner loop of a batched matmul once a weight row has been
 * decoded into a scratch row. Implemented by the F32 kernels, scalar and vector.
 */
interface FloatDot {

    /** {@code sum(a[aOff + i] * b[bOff + i])} for {@code i < n}. */
    float dot(float[] a, int aOff, float[] b, int bOff, int n);

    /**
     * One row against four vectors: {@code out[outOff + t * outStride] =
     * sum(row[rowOff + i] * x[xOff + t * xStride + i])} for {@code t < 4}, {@code i < n}. Each row
     * element is loaded once for four products, which is what a batched matmul is bound by once
     * the row is decoded.
     */
    void dot4(float[] row, int rowOff, float[] x, int xOff, int xStride, int n, float[] out, int outOff, int outStride);

    /**
     * Four rows against four vectors, sixteen products: {@code out[outOff + t * outStride + j] =
     * sum(w[wOff + j * wStride + i] * x[xOff + t * xStride + i])} for {@code j, t < 4},
     * {@code i < n}. Each loaded element of a row or a vector serves four products, so a step
     * issues two loads per multiply-add where {@link #dot4} issues five per four: the tile a
     * batched matmul runs on decoded rows. {@code lanes[lanesOff, lanesOff + }{@value #TILE_LANES}{@code )}
     * is scratch for the sixteen accumulators.
     */
    void dot4x4(float[] w, int wOff, int wStride, float[] x, int xOff, int xStride, int n, float[] out, int outOff,
            int outStride, float[] lanes, int lanesOff);

    /** The scratch {@link #dot4x4} needs: sixteen accumulators of up to 16 lanes. */
    int TILE_LANES = 16 * 16;
}
