package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Random;

/** Random weights and activations in every supported format, reproducible from a seed. */
final class TestRows {

    private TestRows() {
    }

    /** {@code n} floats, normally distributed with standard deviation {@code scale}. */
    static float[] gaussian(Random random, int n, float scale) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) random.nextGaussian() * scale;
        }
        return x;
    }

    /**
     * {@code n} weights in {@code type}: quantized gaussians for the formats of 32-value blocks
     * and the plain ones, random bytes with small finite fp16 scales for the K-quants (every bit
     * pattern of the quants and packed scales is valid there, and random bytes reach patterns that
     * their quantizers never write).
     */
    static byte[] randomRow(GgmlType type, int n, Random random) {
        if (type.blockSize() < KScales.QK_K) {
            return Quantizer.quantize(type, gaussian(random, n, 1f));
        }
        int blocks = n / type.blockSize();
        byte[] bytes = new byte[blocks * type.bytesPerBlock()];
        random.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        for (int b = 0; b < blocks; b++) {
            long block = (long) b * type.bytesPerBlock();
            switch (type) {
                case Q4_K, Q5_K -> {
                    Bytes.putF16(s, block, 0.001f + random.nextFloat() * 0.01f);     // d
                    Bytes.putF16(s, block + 2, 0.001f + random.nextFloat() * 0.01f); // dmin
                }
                case Q6_K -> Bytes.putF16(s, block + 208, 0.0005f + random.nextFloat() * 0.005f);
                default -> throw new IllegalArgumentException("no random rows for " + type);
            }
        }
        return bytes;
    }

    /** {@code sum(|a[i] * b[i]|)} in double: the scale of a dot product's rounding error. */
    static double absDot(float[] a, int aOff, float[] b, int bOff, int n) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Math.abs((double) a[aOff + i] * b[bOff + i]);
        }
        return sum;
    }

    /** {@code sum(a[i] * b[i])} in double. */
    static double exactDot(float[] a, int aOff, float[] b, int bOff, int n) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += (double) a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    /**
     * Tolerance for a float dot product of {@code n} terms against an exact one: the classic
     * recursive-summation bound {@code n * eps * sum|terms|}, with eps = 2^-24, doubled for the
     * per-block scale multiplies of the quantized formats.
     */
    static double dotTolerance(int n, double absDot) {
        return 2.0 * (n + 2) * 0x1p-24 * absDot + 1e-30;
    }

    /**
     * The sum of |term| that bounds a dot product's rounding error for {@code type}, given the
     * decoded row. Q4_K/Q5_K dots are factored as {@code d1 * sum(q x) - m1 * sum(x)}, whose
     * terms can cancel: with {@code |d1 q| <= |w| + m1} they add at most {@code 2 m1 |x|} per
     * weight, and {@code m1 = dmin * min <= 0.011 * 63 < 0.7} in {@link #randomRow}.
     */
    static double dotMagnitude(GgmlType type, float[] row, int rowOff, float[] x, int xOff, int n) {
        double m = absDot(row, rowOff, x, xOff, n);
        if (type == GgmlType.Q4_K || type == GgmlType.Q5_K) {
            for (int i = 0; i < n; i++) {
                m += 1.4 * Math.abs(x[xOff + i]);
            }
        }
        return m;
    }

    /**
     * The activations a matmul of {@code type} weights multiplies, the first {@code n} of
     * {@code x} in llama.cpp's form for the type ({@link MatmulInput.Form#of}).
     */
    static float[] matmulActivations(GgmlType type, float[] x, int n) {
        float[] values = new float[x.length];
        MatmulInput.convert(MatmulInput.Form.of(type), x, n, values);
        return values;
    }
}
