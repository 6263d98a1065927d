package io.nereid.engine.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.util.Objects;

/**
 * The activations a {@link WeightMatrix#matmul} multiplies: {@code tokens} vectors of
 * {@code cols} floats, row-major in an array, together with the forms that weight formats derive
 * from them, computed on first use and kept, so that one input shared by several matrices (the
 * query, key and value projections) and by every thread of a matmul is converted once.
 *
 * <p>Q8_0 weights multiply activations quantized to Q8_0 (per block of 32, {@code d = amax / 127},
 * quants rounded half away from zero, {@code d} kept as a float), as llama.cpp does: one token
 * alone is dotted with integer products, several tokens with the same values decoded back to
 * floats, so a token's result does not depend on how many others share its step beyond float
 * rounding.
 *
 * <p>Thread-safety: any number of threads may use one input at once. The array is not copied:
 * it must not change while the input is in use.
 */
public final class MatmulInput {

    /** Q8_0 form of every token: quants, one scale per block, and the quants times their scale. */
    record Q8(byte[] quants, float[] scales, float[] values) {
    }

    private final float[] x;
    private final int tokens;
    private final int cols;
    private volatile Q8 q8;

    private MatmulInput(float[] x, int tokens, int cols) {
        this.x = x;
        this.tokens = tokens;
        this.cols = cols;
    }

    /**
     * The first {@code tokens * cols} elements of {@code x}, not copied.
     *
     * @throws IllegalArgumentException if {@code tokens} or {@code cols} is negative
     * @throws IndexOutOfBoundsException if {@code x} is shorter than {@code tokens * cols}
     */
    public static MatmulInput of(float[] x, int tokens, int cols) {
        Objects.requireNonNull(x, "x");
        if (tokens < 0 || cols < 0) {
            throw new IllegalArgumentException("tokens " + tokens + " and cols " + cols + " must be >= 0");
        }
        Objects.checkFromIndexSize(0, Math.multiplyExact(tokens, cols), x.length);
        return new MatmulInput(x, tokens, cols);
    }

    public int tokens() {
        return tokens;
    }

    public int cols() {
        return cols;
    }

    float[] floats() {
        return x;
    }

    /** The Q8_0 form, computed by the first caller; {@code cols} must be a multiple of 32. */
    Q8 q8() {
        Q8 q = q8;
        if (q == null) {
            synchronized (this) {
                q = q8;
                if (q == null) {
                    q8 = q = quantize();
                }
            }
        }
        return q;
    }

    private Q8 quantize() {
        int n = tokens * cols;
        byte[] quants = new byte[n];
        float[] scales = new float[n / Q8_0Format.BLOCK];
        float[] values = new float[n];
        boolean vector = RowKernels.get(GgmlType.Q8_0) instanceof Q8_0Vector;
        for (int b = 0; b < scales.length; b++) {
            int off = b * Q8_0Format.BLOCK;
            if (vector) {
                scales[b] = Q8_0Vector.quantizeBlock(x, off, quants, values);
            } else {
                scales[b] = Q8_0Format.quantizeBlock(x, off, quants, off);
                for (int j = off; j < off + Q8_0Format.BLOCK; j++) {
                    values[j] = quants[j] * scales[b];
                }
            }
        }
        return new Q8(quants, scales, values);
    }
}
