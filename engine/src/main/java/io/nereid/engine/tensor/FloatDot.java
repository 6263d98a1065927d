package io.nereid.engine.tensor;

/**
 * Dot product of two float arrays: the inner loop of a batched matmul once a weight row has been
 * decoded into a scratch row. Implemented by the F32 kernels, scalar and vector.
 */
interface FloatDot {

    /** {@code sum(a[aOff + i] * b[bOff + i])} for {@code i < n}. */
    float dot(float[] a, int aOff, float[] b, int bOff, int n);
}
