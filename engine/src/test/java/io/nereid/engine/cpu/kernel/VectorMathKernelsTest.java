package io.nereid.engine.cpu.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nereid.engine.model.RopeScaling;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every vector kernel against the scalar reference, at each width of
 * {@link VectorWidthsUnderTest} (the one in use, or 128, 256 and 512 bits in the {@code vector-*}
 * test executions), at sizes that hit every tail: below one vector, exactly one, one past, around
 * the four-accumulator unroll and large odd sizes. Inputs sit at odd offsets inside larger arrays
 * whose guard elements must come back untouched.
 *
 * <p>Tolerances are error bounds scaled by the size (a reassociated float sum of n terms differs
 * by at most about {@code n * ulp(1) * sum|terms|}), never a fixed epsilon.
 */
@Tag(VectorWidthsUnderTest.TAG)
@ParameterizedClass(name = "{0}", allowZeroInvocations = true)
@MethodSource("io.nereid.engine.cpu.kernel.VectorWidthsUnderTest#widths")
class VectorMathKernelsTest {

    private static final KernelSupport SCALAR = ScalarKernels.INSTANCE;
    private static final double ULP = Math.ulp(1f);
    private static final int OFF = 3;
    private static final float GUARD = 12345f;

    private final VectorWidth width;
    private final VectorMathKernels vector;

    VectorMathKernelsTest(VectorWidth width) {
        this.width = width;
        this.vector = new VectorMathKernels();
    }

    /** Sizes that leave every tail, plus, for 4, 8 and 16 lanes, the edges of one vector and of the 4x unroll. */
    static IntStream sizes() {
        var sizes = new TreeSet<>(List.of(1, 13, 31, 32, 33, 255, 4095, 4097));
        for (int l : new int[] {4, 8, 16}) {
            sizes.addAll(List.of(l - 1, l, l + 1, 4 * l - 1, 4 * l, 4 * l + 1));
        }
        return sizes.stream().mapToInt(Integer::intValue);
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void dot(int n) {
        Random r = new Random(n);
        float[] a = guarded(r, n, 1);
        float[] b = guarded(r, n, 1);
        double sumAbs = 0;
        for (int i = 0; i < n; i++) {
            sumAbs += Math.abs((double) a[OFF + i] * b[OFF + 1 + i]);
        }
        float expected = SCALAR.dot(a, OFF, b, OFF + 1, n);
        float actual = vector.dot(a, OFF, b, OFF + 1, n);
        assertClose(expected, actual, n * ULP * sumAbs, "dot n=" + n);
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void axpy(int n) {
        Random r = new Random(n);
        float[] x = guarded(r, n, 1);
        float[] y = guarded(r, n, 0);
        float[] ys = y.clone();
        float[] yv = y.clone();
        float alpha = -0.75f;
        SCALAR.axpy(alpha, x, OFF, ys, OFF, n);
        vector.axpy(alpha, x, OFF, yv, OFF, n);
        for (int i = 0; i < y.length; i++) {
            // FMA rounds once, multiply-add twice: at most an ulp of each term apart.
            double tol = 2 * ULP * (Math.abs(y[i]) + Math.abs(alpha * x[i]));
            assertClose(ys[i], yv[i], tol, "axpy n=" + n + " i=" + i);
        }
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void rmsNorm(int n) {
        Random r = new Random(n);
        float[] x = guarded(r, n, 0);
        float[] w = random(r, n, 2);
        float[] outS = guarded(r, n, 0);
        float[] outV = outS.clone();
        SCALAR.rmsNorm(outS, OFF, x, OFF, w, n, 1e-5f);
        vector.rmsNorm(outV, OFF, x, OFF, w, n, 1e-5f);
        assertAllClose(outS, outV, (n + 4) * ULP, "rmsNorm n=" + n);

        float[] inPlace = x.clone();
        vector.rmsNorm(inPlace, OFF, inPlace, OFF, w, n, 1e-5f);
        assertArrayEquals(outV, inPlace, "rmsNorm in place equals out of place, n=" + n);
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void rmsNormOfZeroVectorIsZero(int n) {
        float[] x = new float[n];
        float[] w = random(new Random(n), n, 1);
        vector.rmsNorm(x, 0, x, 0, w, n, 1e-6f);
        assertArrayEquals(new float[n], x, 0f, "zero, possibly -0 where the weight is negative, never NaN");
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void softmax(int n) {
        Random r = new Random(n);
        float[] x = guarded(r, n, 8);
        float[] s = x.clone();
        float[] v = x.clone();
        SCALAR.softmax(s, OFF, n);
        vector.softmax(v, OFF, n);
        // Each probability is exp(...) / sum: a few ulps from exp and the division, n from the sum.
        assertAllClose(s, v, (n + 8) * ULP, "softmax n=" + n);
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void softmaxOfHugeMagnitudesStaysFiniteAndSumsToOne(int n) {
        Random r = new Random(n);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (r.nextBoolean() ? 1 : -1) * (Float.MAX_VALUE / (1 + r.nextInt(4)));
        }
        float[] s = x.clone();
        SCALAR.softmax(s, 0, n);
        vector.softmax(x, 0, n);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            assertTrue(Float.isFinite(x[i]) && x[i] >= 0, "softmax[" + i + "] = " + x[i]);
            sum += x[i];
        }
        assertEquals(1.0, sum, (n + 8) * ULP);
        assertAllClose(s, x, (n + 8) * ULP, "softmax huge n=" + n);
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void siluMul(int n) {
        Random r = new Random(n);
        float[] gate = guarded(r, n, 10);
        gate[OFF] = 1e4f; // e^-g underflows to 0
        if (n > 1) {
            gate[OFF + n - 1] = -1e4f; // e^-g overflows to +inf: the result must be -0, not NaN
        }
        float[] up = guarded(r, n, 3);
        float[] s = gate.clone();
        float[] v = gate.clone();
        SCALAR.siluMul(s, OFF, up, OFF, n);
        vector.siluMul(v, OFF, up, OFF, n);
        assertAllClose(s, v, 8 * ULP, "siluMul n=" + n);
    }

    /** Heads of {@code headDim = n + (n & 1)} (rope needs an even rotDim), all dimensions rotated or half. */
    @ParameterizedTest
    @MethodSource("sizes")
    void rope(int n) {
        int headDim = n + (n & 1);
        for (int rotDim : new int[] {headDim, headDim / 2 - (headDim / 2 & 1)}) {
            RopeTables tables = RopeTables.compute(40, Math.max(2, rotDim), 10000, new RopeScaling.None());
            if (rotDim == 0) {
                continue;
            }
            for (boolean neox : new boolean[] {false, true}) {
                Random r = new Random(n);
                int heads = 3;
                float[] x = guarded(r, heads * headDim, 1);
                float[] s = x.clone();
                float[] v = x.clone();
                tables.apply(SCALAR, s, OFF, heads, headDim, 37, neox);
                tables.apply(vector, v, OFF, heads, headDim, 37, neox);
                assertAllClose(s, v, 4 * ULP, "rope headDim=" + headDim + " rotDim=" + rotDim + " neox=" + neox);
            }
        }
    }

    static Stream<Arguments> attentionShapes() {
        List<Arguments> shapes = new ArrayList<>();
        for (int numTokens : new int[] {1, 13, 33, 100}) {
            for (int headDim : new int[] {8, 64, 128}) {
                for (int blockSize : new int[] {16, 24, 32}) {
                    for (int numKvHeads : new int[] {1, 4}) {
                        shapes.add(Arguments.of(numTokens, headDim, blockSize, numKvHeads));
                    }
                }
            }
        }
        return shapes.stream();
    }

    /** {@link #attentionShapes} and a sequence longer than the panels' chunk of positions. */
    static Stream<Arguments> panelShapes() {
        return Stream.concat(attentionShapes(), Stream.of(Arguments.of(KernelSupport.PANEL_POSITIONS + 77, 64, 16, 2)));
    }

    /**
     * One sequence's K/V rows for {@code kvHead}, NaN in every row it does not own, in one of two layouts the kernels
     * take through {@code headBase} and {@code blockStride}: {@link #random} interleaves the heads block by block
     * ({@code [block][kvHead][slot][headDim]}: other heads' rows between this head's blocks) and shuffles the
     * blocks; {@link #headByHead} is KvStorage's ({@code [kvHead][block][slot][headDim]}) with the blocks running
     * up or down.
     */
    private record PagedCase(int[] blockTable, int numTokens, int blockSize, int numKvHeads, int kvHead, int headDim,
            int headBase, int blockStride, float[] keys, float[] values, float[] q, float scale) {

        static PagedCase random(int numTokens, int headDim, int blockSize, int numKvHeads) {
            Random r = new Random(31L * numTokens + headDim + 7L * blockSize + numKvHeads);
            int blocksNeeded = (numTokens + blockSize - 1) / blockSize;
            int numBlocks = blocksNeeded + 3;
            List<Integer> ids = new ArrayList<>(IntStream.range(0, numBlocks).boxed().toList());
            Collections.shuffle(ids, r);
            int[] blockTable = ids.subList(0, blocksNeeded).stream().mapToInt(Integer::intValue).toArray();
            int kvHead = numKvHeads - 1;
            return filled(r, blockTable, numBlocks, numTokens, headDim, blockSize, numKvHeads, kvHead,
                    kvHead * blockSize * headDim, numKvHeads * blockSize * headDim);
        }

        static PagedCase headByHead(int numTokens, int headDim, int blockSize, int numKvHeads, boolean down) {
            Random r = new Random(17L * numTokens + headDim + 5L * blockSize + numKvHeads);
            int blocksNeeded = (numTokens + blockSize - 1) / blockSize;
            int numBlocks = blocksNeeded + 2;
            int[] blockTable = new int[blocksNeeded];
            for (int i = 0; i < blocksNeeded; i++) {
                blockTable[i] = down ? numBlocks - 1 - i : 1 + i;
            }
            int kvHead = numKvHeads - 1;
            return filled(r, blockTable, numBlocks, numTokens, headDim, blockSize, numKvHeads, kvHead,
                    kvHead * numBlocks * blockSize * headDim, blockSize * headDim);
        }

        private static PagedCase filled(Random r, int[] blockTable, int numBlocks, int numTokens, int headDim,
                int blockSize, int numKvHeads, int kvHead, int headBase, int blockStride) {
            // NaN everywhere except the rows this sequence and head own: a wrong row poisons the output.
            float[] keys = new float[numBlocks * numKvHeads * blockSize * headDim];
            float[] values = new float[keys.length];
            Arrays.fill(keys, Float.NaN);
            Arrays.fill(values, Float.NaN);
            for (int t = 0; t < numTokens; t++) {
                int row = ScalarKernels.kvOffset(blockTable, t, blockSize, headBase, blockStride, headDim);
                for (int d = 0; d < headDim; d++) {
                    keys[row + d] = r.nextFloat() * 2 - 1;
                    values[row + d] = r.nextFloat() * 2 - 1;
                }
            }
            return new PagedCase(blockTable, numTokens, blockSize, numKvHeads, kvHead, headDim, headBase, blockStride,
                    keys, values, guarded(r, headDim, 1), (float) (1 / Math.sqrt(headDim)));
        }

        float[] run(KernelSupport k) {
            return into(out -> k.attention(q, OFF, keys, values, blockTable, numTokens, blockSize, headBase(), blockStride(),
                    headDim, scale, new float[numTokens], out, OFF));
        }

        float[] runF16(KernelSupport k) {
            short[] hk = toHalves(keys);
            short[] hv = toHalves(values);
            return into(out -> k.attentionF16(q, OFF, hk, hv, blockTable, numTokens, blockSize, headBase(), blockStride(),
                    headDim, scale, new float[numTokens], out, OFF));
        }

        private float[] into(java.util.function.Consumer<float[]> kernel) {
            float[] out = new float[headDim + 2 * OFF];
            Arrays.fill(out, GUARD);
            kernel.accept(out);
            return out;
        }

        /**
         * A score's error (headDim-term dot) becomes a relative error of its probability; the
         * output mixes probabilities of values in [-1, 1], adding a numTokens-term sum.
         */
        double tolerance() {
            double scoreError = headDim * ULP * headDim * scale;
            return 2 * scoreError + 2 * (numTokens + 8) * ULP;
        }
    }

    private static short[] toHalves(float[] a) {
        short[] h = new short[a.length];
        for (int i = 0; i < a.length; i++) {
            h[i] = Float.floatToFloat16(a[i]);
        }
        return h;
    }

    private static void assertAttentionClose(float[] expected, float[] actual, double tol) {
        for (int i = 0; i < expected.length; i++) {
            assertTrue(Float.isFinite(expected[i]), "reference out[" + i + "] = " + expected[i]);
            assertClose(expected[i], actual[i], tol, "attention out[" + i + "]");
        }
    }

    @ParameterizedTest(name = "tokens={0} headDim={1} blockSize={2} kvHeads={3}")
    @MethodSource("attentionShapes")
    void attention(int numTokens, int headDim, int blockSize, int numKvHeads) {
        PagedCase c = PagedCase.random(numTokens, headDim, blockSize, numKvHeads);
        assertAttentionClose(c.run(SCALAR), c.run(vector), c.tolerance());
    }

    @ParameterizedTest(name = "tokens={0} headDim={1} blockSize={2} kvHeads={3}")
    @MethodSource("attentionShapes")
    void attentionF16(int numTokens, int headDim, int blockSize, int numKvHeads) {
        PagedCase c = PagedCase.random(numTokens, headDim, blockSize, numKvHeads);
        // Same inputs once widened, so the same rounding bound as the F32 kernels.
        assertAttentionClose(c.runF16(SCALAR), c.runF16(vector), c.tolerance());
    }

    /**
     * KvStorage's layout with the blocks running up and running down (a block whose successor lies below it is
     * widened back to front): the same values as the scalar kernel, and the same bits either way round.
     */
    @ParameterizedTest(name = "tokens={0} headDim={1} blockSize={2} kvHeads={3}")
    @MethodSource("attentionShapes")
    void attentionF16HeadByHeadWithBlocksRunningUpOrDown(int numTokens, int headDim, int blockSize, int numKvHeads) {
        PagedCase up = PagedCase.headByHead(numTokens, headDim, blockSize, numKvHeads, false);
        PagedCase down = PagedCase.headByHead(numTokens, headDim, blockSize, numKvHeads, true);
        float[] upOut = up.runF16(vector);
        float[] downOut = down.runF16(vector);
        assertAttentionClose(up.runF16(SCALAR), upOut, up.tolerance());
        assertAttentionClose(down.runF16(SCALAR), downOut, down.tolerance());
        assertArrayEquals(upOut, downOut, "the same rows in blocks running down give the same bits");
    }

    /**
     * Several queries over one KV head at once (the heads of a GQA group, consecutive tokens of a
     * prompt) give each query the bits of its own {@code attentionF16} call: the forward pass
     * groups them by how the step's tokens fall, so anything else would make a token's logits
     * depend on the step it is in. (That call's values are checked against the scalar kernel
     * above.)
     */
    @ParameterizedTest(name = "tokens={0} headDim={1} blockSize={2} kvHeads={3}")
    @MethodSource("attentionShapes")
    void attentionF16QueriesAreEachQuerysOwnCall(int numTokens, int headDim, int blockSize, int numKvHeads) {
        PagedCase c = PagedCase.random(numTokens, headDim, blockSize, numKvHeads);
        short[] hk = toHalves(c.keys());
        short[] hv = toHalves(c.values());
        Random r = new Random(numTokens * 17L + headDim);
        int run = Math.min(4, numTokens);
        int group = 3;
        int queries = run * group;
        float[] q = new float[OFF + queries * headDim];
        for (int i = 0; i < q.length; i++) {
            q[i] = r.nextFloat() * 2 - 1;
        }
        Run runQueries = Run.of(numTokens, run, group, headDim);
        int[] qOffs = runQueries.qOffs();
        int[] counts = runQueries.counts();
        int[] outOffs = runQueries.outOffs();
        int stride = numTokens + 5;
        float[] together = new float[2 * OFF + queries * headDim + OFF];
        Arrays.fill(together, GUARD);
        float[] rows = new float[KernelSupport.QUERIES_ROWS * headDim];
        vector.attentionF16Queries(q, qOffs, counts, queries, hk, hv, c.blockTable(), blockSize, c.headBase(),
                c.blockStride(), headDim, c.scale(), new float[queries * stride], stride, rows, together, outOffs);
        for (int i = 0; i < queries; i++) {
            float[] alone = new float[headDim];
            vector.attentionF16(q, qOffs[i], hk, hv, c.blockTable(), counts[i], blockSize, c.headBase(), c.blockStride(),
                    headDim, c.scale(), new float[numTokens], alone, 0);
            for (int d = 0; d < headDim; d++) {
                assertEquals(Float.floatToRawIntBits(alone[d]), Float.floatToRawIntBits(together[outOffs[i] + d]),
                        "query " + i + " (" + counts[i] + " positions) element " + d + ": " + alone[d] + " alone, "
                                + together[outOffs[i] + d] + " together");
            }
        }
        for (int g = 0; g < 2 * OFF; g++) {
            assertEquals(GUARD, together[g], "before the outputs");
        }
        for (int g = together.length - OFF; g < together.length; g++) {
            assertEquals(GUARD, together[g], "after the outputs");
        }
    }

    /**
     * The faster order for a prompt's many queries ({@code attentionF16Panels}): each query's
     * output against the scalar reference's own call, within the same rounding bound, for runs of
     * 23 tokens (one partial group of transposed queries at 512 bits) and 35 tokens times a GQA
     * group of 2 (70 queries: a whole group and a partial one), with each token's causal count,
     * also over more positions than one chunk; head sizes below the lanes (8) take the fallback.
     * Nothing outside the outputs is written.
     */
    @ParameterizedTest(name = "tokens={0} headDim={1} blockSize={2} kvHeads={3}")
    @MethodSource("panelShapes")
    void attentionF16PanelsMatchEachQuerysScalarCall(int numTokens, int headDim, int blockSize, int numKvHeads) {
        PagedCase c = PagedCase.random(numTokens, headDim, blockSize, numKvHeads);
        short[] hk = toHalves(c.keys());
        short[] hv = toHalves(c.values());
        for (int[] runAndGroup : new int[][] {{23, 1}, {35, 2}}) {
            int run = Math.min(runAndGroup[0], numTokens);
            int group = runAndGroup[1];
            int queries = run * group;
            Random r = new Random(numTokens * 31L + headDim + queries);
            float[] q = random(r, OFF + queries * headDim, 1);
            Run runQueries = Run.of(numTokens, run, group, headDim);
            int[] qOffs = runQueries.qOffs();
            int[] counts = runQueries.counts();
            int[] outOffs = runQueries.outOffs();
            float[] out = new float[2 * OFF + queries * headDim + OFF];
            Arrays.fill(out, GUARD);
            vector.attentionF16Panels(q, qOffs, counts, queries, hk, hv, c.blockTable(), blockSize, c.headBase(),
                    c.blockStride(), headDim, c.scale(), new float[queries * numTokens], numTokens,
                    new float[KernelSupport.panelWork(queries, numTokens, headDim)], out, outOffs);
            for (int i = 0; i < queries; i++) {
                float[] alone = new float[headDim];
                SCALAR.attentionF16(q, qOffs[i], hk, hv, c.blockTable(), counts[i], blockSize, c.headBase(),
                        c.blockStride(), headDim, c.scale(), new float[numTokens], alone, 0);
                for (int d = 0; d < headDim; d++) {
                    assertClose(alone[d], out[outOffs[i] + d], c.tolerance(),
                            queries + " queries: query " + i + " (" + counts[i] + " positions) element " + d);
                }
            }
            for (int g = 0; g < 2 * OFF; g++) {
                assertEquals(GUARD, out[g], "before the outputs");
            }
            for (int g = out.length - OFF; g < out.length; g++) {
                assertEquals(GUARD, out[g], "after the outputs");
            }
        }
    }

    // --- helpers ---------------------------------------------------------------------------------

    /**
     * The queries of a run of {@code run} consecutive tokens ending at position {@code numTokens - 1},
     * each with {@code group} heads: query {@code i} at {@code OFF + i * headDim}, its causal count,
     * and its output at {@code 2 * OFF} onwards in another order than the queries.
     */
    private record Run(int[] qOffs, int[] counts, int[] outOffs) {
        static Run of(int numTokens, int run, int group, int headDim) {
            int queries = run * group;
            int[] qOffs = new int[queries];
            int[] counts = new int[queries];
            int[] outOffs = new int[queries];
            for (int t = 0, i = 0; t < run; t++) {
                for (int h = 0; h < group; h++, i++) {
                    qOffs[i] = OFF + i * headDim;
                    counts[i] = numTokens - run + 1 + t;   // consecutive positions, the last one the longest
                    outOffs[i] = 2 * OFF + (queries - 1 - i) * headDim;
                }
            }
            return new Run(qOffs, counts, outOffs);
        }
    }

    /** n values in [-scale, scale) at [OFF, OFF + n) with GUARD on both sides (OFF + 1 after). */
    private static float[] guarded(Random r, int n, float scale) {
        float[] a = new float[n + 2 * OFF + 1];
        Arrays.fill(a, GUARD);
        System.arraycopy(random(r, n, scale), 0, a, OFF, n);
        return a;
    }

    private static float[] random(Random r, int n, float scale) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (r.nextFloat() * 2 - 1) * (scale == 0 ? 1 : scale);
        }
        return a;
    }

    /** Element-wise: {@code |v - s| <= relTol * |s|}, guards included (exactly equal there). */
    private static void assertAllClose(float[] expected, float[] actual, double relTol, String what) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            assertClose(expected[i], actual[i], relTol * Math.abs(expected[i]) + Float.MIN_NORMAL, what + " [" + i + "]");
        }
    }

    private static void assertClose(float expected, float actual, double tol, String what) {
        if (Float.isNaN(expected) || !(Math.abs((double) expected - actual) <= tol)) {
            fail(what + ": expected " + expected + " but was " + actual + " (tolerance " + tol + ")");
        }
    }
}
