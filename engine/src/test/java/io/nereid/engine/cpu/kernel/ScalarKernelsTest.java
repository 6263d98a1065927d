package io.nereid.engine.cpu.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The reference kernels against values worked out by hand, plus the boundary inputs. */
class ScalarKernelsTest {

    private static final float EPS = 1e-6f;
    private final KernelSupport k = ScalarKernels.INSTANCE;

    @Test
    void dotAndAxpyHonourOffsets() {
        float[] a = {9, 1, 2, 3};
        float[] b = {4, 5, 6, 9, 9};
        assertEquals(32f, k.dot(a, 1, b, 0, 3));
        assertEquals(0f, k.dot(a, 0, b, 0, 0));

        float[] y = {1, 1, 1, 1};
        k.axpy(2f, a, 1, y, 1, 3); // y[1..3] += 2 * {1, 2, 3}
        assertArrayEquals(new float[] {1, 3, 5, 7}, y);
    }

    @Test
    void softmaxOfOneTwoThree() {
        float[] x = {7, 1, 2, 3};
        k.softmax(x, 1, 3);
        // e^{x - 3} / (e^-2 + e^-1 + 1)
        assertArrayEquals(new float[] {7, 0.09003057f, 0.24472847f, 0.66524096f}, x, EPS);
    }

    @Test
    void softmaxOfHugeLogitsHasNoNanOrInfinity() {
        float[] x = {3e38f, -3e38f, 3e38f, Float.MAX_VALUE, -Float.MAX_VALUE};
        k.softmax(x, 0, 3);
        assertArrayEquals(new float[] {0.5f, 0f, 0.5f}, java.util.Arrays.copyOf(x, 3));
        assertEquals(Float.MAX_VALUE, x[3], "elements past n are untouched");

        float[] allVeryNegative = {-1e30f, -1e30f};
        k.softmax(allVeryNegative, 0, 2);
        assertArrayEquals(new float[] {0.5f, 0.5f}, allVeryNegative);

        float[] single = {-5e37f};
        k.softmax(single, 0, 1);
        assertEquals(1f, single[0]);
    }

    @Test
    void rmsNormOfAKnownVector() {
        float[] x = {1, 2, 3, 4};
        float[] w = {1, 0.5f, 2, -1};
        float[] out = new float[5];
        k.rmsNorm(out, 1, x, 0, w, 4, 0f);
        // rms = sqrt((1 + 4 + 9 + 16) / 4) = sqrt(7.5) = 2.7386128
        assertArrayEquals(new float[] {0, 0.36514837f, 0.36514837f, 2.1908902f, -1.4605935f}, out, EPS);
    }

    @Test
    void rmsNormInPlaceMatchesOutOfPlace() {
        float[] x = {1, 2, 3, 4};
        float[] w = {1, 0.5f, 2, -1};
        float[] out = new float[4];
        k.rmsNorm(out, 0, x, 0, w, 4, 1e-5f);
        k.rmsNorm(x, 0, x, 0, w, 4, 1e-5f);
        assertArrayEquals(out, x);
    }

    @Test
    void rmsNormOfZeroVectorIsZeroThanksToEps() {
        float[] x = new float[8];
        float[] w = {1, 2, 3, 4, 5, 6, 7, 8};
        k.rmsNorm(x, 0, x, 0, w, 8, 1e-5f);
        assertArrayEquals(new float[8], x);
    }

    @Test
    void siluMulOfKnownValues() {
        float[] gate = {1, 0, -1, 1e4f, -1e4f};
        float[] up = {2, 5, 1, 1, 1};
        k.siluMul(gate, 0, up, 0, 5);
        // silu(1) = 1 / (1 + e^-1) = 0.7310586; silu(-1) = -1 / (1 + e) = -0.26894142
        assertArrayEquals(new float[] {1.4621172f, 0f, -0.26894142f, 1e4f, -0f}, gate, EPS);
    }

    @Test
    void ropeRotatesAdjacentPairsForNormalLayout() {
        // Two heads of headDim 4, rotDim 4; tables for positions 0 and 1 with freqs {1, 0.01}.
        float[][] cs = tables(2, new double[] {1, 0.01});
        float[] x = {1, 0, 0, 0, 0, 0, 1, 0};
        k.rope(x, 0, 2, 4, 4, 1, cs[0], cs[1], false);
        float c1 = (float) Math.cos(1), s1 = (float) Math.sin(1);
        float c2 = (float) Math.cos(0.01), s2 = (float) Math.sin(0.01);
        assertArrayEquals(new float[] {c1, s1, 0, 0, 0, 0, c2, s2}, x, EPS);
    }

    @Test
    void ropeRotatesHalfSplitPairsForNeox() {
        float[][] cs = tables(2, new double[] {1, 0.01});
        float[] x = {1, 0, 0, 0, 0, 1, 0, 0};
        k.rope(x, 0, 2, 4, 4, 1, cs[0], cs[1], true);
        float c1 = (float) Math.cos(1), s1 = (float) Math.sin(1);
        float c2 = (float) Math.cos(0.01), s2 = (float) Math.sin(0.01);
        // head 0: pair (0, 2) = (1, 0) -> (c1, s1); head 1: pair (1, 3) = (1, 0) -> (c2, s2)
        assertArrayEquals(new float[] {c1, 0, s1, 0, 0, c2, 0, s2}, x, EPS);
    }

    @Test
    void ropeAtPositionZeroIsIdentityAndLeavesUnrotatedDimensions() {
        float[][] cs = tables(2, new double[] {1});
        float[] x = {1, 2, 3, 4};
        k.rope(x, 0, 1, 4, 2, 0, cs[0], cs[1], false);
        assertArrayEquals(new float[] {1, 2, 3, 4}, x);
        k.rope(x, 0, 1, 4, 2, 1, cs[0], cs[1], true);
        float c = (float) Math.cos(1), s = (float) Math.sin(1);
        assertArrayEquals(new float[] {1 * c - 2 * s, 1 * s + 2 * c, 3, 4}, x, EPS);
    }

    @Test
    void ropeRejectsAnOddOrOversizedRotDim() {
        float[] x = new float[8];
        assertThrows(IllegalArgumentException.class, () -> k.rope(x, 0, 1, 4, 3, 0, x, x, false));
        assertThrows(IllegalArgumentException.class, () -> k.rope(x, 0, 1, 4, 6, 0, x, x, false));
    }

    @Test
    void attentionOverTwoTokensInPagedBlocks() {
        // blockSize 1, 2 KV heads, headDim 2; the sequence's tokens 0, 1 live in blocks 1, 0, head 1.
        int blockSize = 1, numKvHeads = 2, headDim = 2;
        float[] keys = new float[2 * numKvHeads * blockSize * headDim];
        float[] values = new float[keys.length];
        java.util.Arrays.fill(keys, Float.NaN); // anything read from the wrong head poisons the result
        java.util.Arrays.fill(values, Float.NaN);
        int[] blockTable = {1, 0};
        put(keys, 1, 1, new float[] {1, 0});   // token 0 -> block 1
        put(keys, 0, 1, new float[] {0, 1});   // token 1 -> block 0
        put(values, 1, 1, new float[] {1, 2});
        put(values, 0, 1, new float[] {3, 4});
        float[] q = {1, 0};
        float[] out = new float[3];
        // head 1's blocks start at 2 and lie 4 apart (the blocks interleave the heads)
        k.attention(q, 0, keys, values, blockTable, 2, blockSize, 1 * blockSize * headDim, numKvHeads * blockSize * headDim,
                headDim, 1f, new float[2], out, 1);
        // scores {1, 0} -> p = {e/(e+1), 1/(e+1)} = {0.7310586, 0.26894142}; out = p0*v0 + p1*v1
        assertArrayEquals(new float[] {0, 1.5378828f, 2.5378828f}, out, EPS);
    }

    @Test
    void attentionOfOneTokenCopiesItsValue() {
        float[] keys = {5, -3, 2};
        float[] values = {0.5f, 7, -2};
        float[] out = {Float.NaN, Float.NaN, Float.NaN};
        k.attention(new float[] {100, 100, 100}, 0, keys, values, new int[] {0}, 1, 1, 0, 3, 3, 1f,
                new float[1], out, 0);
        assertArrayEquals(values, out);
        for (float v : out) {
            assertFalse(Float.isNaN(v));
        }
    }

    @Test
    void attentionF16EqualsAttentionOverTheWidenedValues() {
        // Two blocks of 2 slots, 2 KV heads, headDim 3; 3 tokens in blocks 1, 0 of head 0.
        int blockSize = 2, numKvHeads = 2, headDim = 3;
        short[] keys = new short[2 * numKvHeads * blockSize * headDim];
        short[] values = new short[keys.length];
        java.util.Random r = new java.util.Random(5);
        for (int i = 0; i < keys.length; i++) {
            keys[i] = Float.floatToFloat16(r.nextFloat() * 4 - 2);
            values[i] = Float.floatToFloat16(r.nextFloat() * 4 - 2);
        }
        float[] wideKeys = new float[keys.length];
        float[] wideValues = new float[keys.length];
        for (int i = 0; i < keys.length; i++) {
            wideKeys[i] = Float.float16ToFloat(keys[i]);
            wideValues[i] = Float.float16ToFloat(values[i]);
        }
        float[] q = {0.5f, -1.0001f, 2, 7.0003f};
        int[] blockTable = {1, 0};
        float[] expected = new float[4];
        float[] actual = new float[4];
        // llama.cpp's F16 roundings: the query before K·q, the softmax weights before the sum over V
        float[] roundedQ = q.clone();
        ScalarKernels.roundToF16(q, 1, roundedQ, 1, headDim);
        float[] scores = new float[3];
        for (int t = 0; t < 3; t++) {
            int row = ScalarKernels.kvOffset(blockTable, t, blockSize, 0, numKvHeads * blockSize * headDim, headDim);
            for (int d = 0; d < headDim; d++) {
                scores[t] += roundedQ[1 + d] * wideKeys[row + d];
            }
            scores[t] *= 0.5f;
        }
        k.softmax(scores, 0, 3);
        ScalarKernels.roundToF16(scores, 0, scores, 0, 3);
        for (int t = 0; t < 3; t++) {
            int row = ScalarKernels.kvOffset(blockTable, t, blockSize, 0, numKvHeads * blockSize * headDim, headDim);
            for (int d = 0; d < headDim; d++) {
                expected[1 + d] += scores[t] * wideValues[row + d];
            }
        }
        k.attentionF16(q, 1, keys, values, blockTable, 3, blockSize, 0, numKvHeads * blockSize * headDim, headDim, 0.5f,
                new float[3],
                actual, 1);
        assertArrayEquals(expected, actual);
    }

    /** cos/sin tables {@code [pos * freqs.length + i]} for positions {@code [0, positions)}. */
    static float[][] tables(int positions, double[] freqs) {
        float[] cos = new float[positions * freqs.length];
        float[] sin = new float[cos.length];
        for (int p = 0; p < positions; p++) {
            for (int i = 0; i < freqs.length; i++) {
                cos[p * freqs.length + i] = (float) Math.cos(p * freqs[i]);
                sin[p * freqs.length + i] = (float) Math.sin(p * freqs[i]);
            }
        }
        return new float[][] {cos, sin};
    }

    /** Writes one row of a {@code [block][kvHead=2][slot=1][headDim=2]} cache. */
    private static void put(float[] cache, int block, int kvHead, float[] row) {
        System.arraycopy(row, 0, cache, (block * 2 + kvHead) * 2, 2);
    }
}
