package io.nereid.engine.cpu.kernel;

import io.nereid.engine.model.RopeScaling;

/**
 * Precomputed rotary-embedding tables for one model: {@code cos[p * rotDim/2 + i]} and
 * {@code sin[...]} of the angle {@code p * f_i} for positions {@code p < maxPositions}, where
 * {@code f_i = scaling(theta^(-2i/rotDim))}. This is the layout {@link KernelSupport#rope} reads.
 *
 * <p>Angles are computed in double and rounded once to float, so large positions keep full
 * precision (Hugging Face multiplies in float32, which differs from this by a few ulps of the angle
 * past a few thousand positions). Memory: {@code 2 * maxPositions * rotDim/2} floats, e.g. 64 MiB
 * for 131072 positions and rotDim 128.
 *
 * <p>Immutable after construction and safe to share between threads.
 */
public final class RopeTables {

    private final int maxPositions;
    private final int rotDim;
    private final float[] cos; // (maxPositions, rotDim/2)
    private final float[] sin; // (maxPositions, rotDim/2)

    private RopeTables(int maxPositions, int rotDim, float[] cos, float[] sin) {
        this.maxPositions = maxPositions;
        this.rotDim = rotDim;
        this.cos = cos;
        this.sin = sin;
    }

    /**
     * @param maxPositions positions {@code [0, maxPositions)} get a row
     * @param rotDim       rotated dimensions per head (even; {@code head_dim * partial_rotary_factor})
     * @param theta        the RoPE base ({@code rope_theta}, e.g. 10000 or 500000)
     */
    public static RopeTables compute(int maxPositions, int rotDim, double theta, RopeScaling scaling) {
        if (maxPositions <= 0 || rotDim <= 0 || (rotDim & 1) != 0 || !(theta > 1)) {
            throw new IllegalArgumentException("rope tables: need maxPositions > 0, an even rotDim > 0 and theta > 1,"
                    + " got maxPositions " + maxPositions + ", rotDim " + rotDim + ", theta " + theta);
        }
        int half = rotDim / 2;
        if ((long) maxPositions * half > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("rope tables: " + maxPositions + " positions x " + half
                    + " frequencies do not fit in one array");
        }
        return fromFrequencies(maxPositions, rotDim, inverseFrequencies(rotDim, theta, scaling));
    }

    /**
     * Tables for given inverse frequencies (radians per position), e.g. after dividing by the
     * per-pair factors a GGUF stores in {@code rope_freqs.weight} (Llama 3.1 scaling baked in).
     */
    public static RopeTables fromFrequencies(int maxPositions, int rotDim, double[] frequencies) {
        int half = rotDim / 2;
        if (frequencies.length != half) {
            throw new IllegalArgumentException("rope tables: " + frequencies.length + " frequencies for rotDim " + rotDim);
        }
        float[] cos = new float[maxPositions * half];
        float[] sin = new float[cos.length];
        for (int p = 0; p < maxPositions; p++) {
            for (int i = 0; i < half; i++) {
                double angle = p * frequencies[i];
                cos[p * half + i] = (float) Math.cos(angle);
                sin[p * half + i] = (float) Math.sin(angle);
            }
        }
        return new RopeTables(maxPositions, rotDim, cos, sin);
    }

    /** {@code scaling(theta^(-2i/rotDim))} for {@code i < rotDim/2}, in radians per position. */
    public static double[] inverseFrequencies(int rotDim, double theta, RopeScaling scaling) {
        double[] frequencies = new double[rotDim / 2];
        for (int i = 0; i < frequencies.length; i++) {
            frequencies[i] = scaling.scale(Math.pow(theta, -2.0 * i / rotDim));
        }
        return frequencies;
    }

    /**
     * Rotates {@code numHeads} heads of {@code headDim} at {@code x[off...]} in place for position
     * {@code pos} with {@code kernels}; see {@link KernelSupport#rope} for the pairings.
     */
    public void apply(KernelSupport kernels, float[] x, int off, int numHeads, int headDim, int pos, boolean neox) {
        if (pos < 0 || pos >= maxPositions) {
            throw new IndexOutOfBoundsException("rope: position " + pos + " outside [0, " + maxPositions + ")");
        }
        kernels.rope(x, off, numHeads, headDim, rotDim, pos, cos, sin, neox);
    }

    public int maxPositions() {
        return maxPositions;
    }

    public int rotDim() {
        return rotDim;
    }

    /** The shared table itself, for tests; never modified. */
    float[] cos() {
        return cos;
    }

    /** The shared table itself, for tests; never modified. */
    float[] sin() {
        return sin;
    }
}
