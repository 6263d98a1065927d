package io.nereid.engine.cpu.kernel;

import java.lang.management.ManagementFactory;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link KernelSupport} on the Vector API at one {@link VectorWidth} of {@code L} float lanes. Each
 * kernel is a thin wrapper: inputs shorter than one vector go to {@link ScalarKernels}; otherwise a
 * vector body covers {@code f.loopBound(n)} elements and a scalar loop the tail.
 *
 * <p>Results differ from the scalar reference only by rounding: sums are reassociated (several
 * accumulators, lane reductions), FMA rounds once, and {@code EXP} is the platform's vector exp.
 *
 * <p>Every method starts by reading its species from the width ({@code VectorSpecies<Float> f =
 * W.floats()}), so that C2 sees them as constants (see {@link VectorWidth} for why).
 *
 * <p>Immutable and thread-safe. Package-private: obtain it from {@link Kernels#provider()}, which
 * only loads this class when the {@code jdk.incubator.vector} module is present.
 */
final class VectorMathKernels implements KernelSupport {

    /**
     * Whether the CPU has FMA. Without it {@code FloatVector.fma} falls back to {@link Math#fma}
     * per lane, which is orders of magnitude slower than a multiply and an add (Lucene makes the
     * same check).
     */
    private static final boolean FAST_FMA = vmOptionIsTrue("UseFMA");

    private static final ScalarKernels SCALAR = ScalarKernels.INSTANCE;

    // For the adjacent-pair ("normal") rope: lane i reads table entry i/2, swaps with lane i^1,
    // and the swapped term is negated in even lanes: (x0, x1) -> (x0 c - x1 s, x1 c + x0 s).
    // PAIR_INDEX serves every width: a gather reads only its first L entries.
    private static final int[] PAIR_INDEX = new int[16];

    static {
        for (int i = 0; i < PAIR_INDEX.length; i++) {
            PAIR_INDEX[i] = i / 2;
        }
    }

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();
    private static final VectorShuffle<Float> SWAP_PAIRS = VectorShuffle.fromOp(W.floats(), i -> i ^ 1);
    private static final FloatVector ALTERNATING_SIGN = alternatingSign();

    VectorMathKernels() {
    }

    private static FloatVector alternatingSign() {
        float[] sign = new float[W.floats().length()];
        for (int i = 0; i < sign.length; i++) {
            sign[i] = (i & 1) == 0 ? -1f : 1f;
        }
        return FloatVector.fromArray(W.floats(), sign, 0);
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int i = 0;
        float sum = 0f;
        if (n >= lanes) {
            i = f.loopBound(n);
            sum = dotBody(a, aOff, b, bOff, i);
        }
        for (; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    /** {@code limit} is a multiple of {@code lanes}. */
    private float dotBody(float[] a, int aOff, float[] b, int bOff, int limit) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        // Four independent accumulators: an FMA into one register must wait for the previous one
        // (about 4 cycles), while the core can start two per cycle. Four chains overlap instead of
        // serialising on one sum.
        FloatVector acc0 = FloatVector.zero(f);
        FloatVector acc1 = FloatVector.zero(f);
        FloatVector acc2 = FloatVector.zero(f);
        FloatVector acc3 = FloatVector.zero(f);
        int i = 0;
        int unrolled = limit - limit % (4 * lanes);
        for (; i < unrolled; i += 4 * lanes) {
            acc0 = fma(load(a, aOff + i), load(b, bOff + i), acc0);
            acc1 = fma(load(a, aOff + i + lanes), load(b, bOff + i + lanes), acc1);
            acc2 = fma(load(a, aOff + i + 2 * lanes), load(b, bOff + i + 2 * lanes), acc2);
            acc3 = fma(load(a, aOff + i + 3 * lanes), load(b, bOff + i + 3 * lanes), acc3);
        }
        for (; i < limit; i += lanes) {
            acc0 = fma(load(a, aOff + i), load(b, bOff + i), acc0);
        }
        return sum(acc0.add(acc1).add(acc2.add(acc3)));
    }

    @Override
    public void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int i = 0;
        if (n >= lanes) {
            // No accumulator: every lane's update is independent, so one chain is enough.
            FloatVector va = FloatVector.broadcast(f, alpha);
            for (int bound = f.loopBound(n); i < bound; i += lanes) {
                fma(va, load(x, xOff + i), load(y, yOff + i)).intoArray(y, yOff + i);
            }
        }
        for (; i < n; i++) {
            y[yOff + i] += alpha * x[xOff + i];
        }
    }

    @Override
    public void rmsNorm(float[] out, int outOff, float[] x, int xOff, float[] weight, int n, float eps) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        if (n < lanes) {
            SCALAR.rmsNorm(out, outOff, x, xOff, weight, n, eps);
            return;
        }
        // The sum of squares is complete before the first write, so out may alias x.
        float scale = ScalarKernels.rmsScale(x, xOff, n, eps);
        FloatVector vs = FloatVector.broadcast(f, scale);
        int i = 0;
        for (int bound = f.loopBound(n); i < bound; i += lanes) {
            load(x, xOff + i).mul(vs).mul(load(weight, i)).intoArray(out, outOff + i);
        }
        for (; i < n; i++) {
            out[outOff + i] = x[xOff + i] * scale * weight[i];
        }
    }

    @Override
    public void softmax(float[] x, int off, int n) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        if (n < lanes) {
            SCALAR.softmax(x, off, n);
            return;
        }
        int bound = f.loopBound(n);
        // Subtracting the maximum keeps every exponent <= 0 (see ScalarKernels#softmax).
        FloatVector vmax = FloatVector.broadcast(f, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (; i < bound; i += lanes) {
            vmax = vmax.max(load(x, off + i));
        }
        float max = vmax.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) {
            max = Math.max(max, x[off + i]);
        }

        for (i = 0; i < bound; i += lanes) {
            exp(load(x, off + i).sub(max)).intoArray(x, off + i);
        }
        for (; i < n; i++) {
            x[off + i] = ScalarKernels.expf(x[off + i] - max);
        }
        ScalarKernels.normalize(x, off, n);
    }

    /** {@link ScalarKernels#expf} on every lane: the same operations, so the same bits. */
    private static FloatVector exp(FloatVector x) {
        FloatVector c = x.max(ScalarKernels.EXP_LO).min(ScalarKernels.EXP_HI);
        FloatVector n = c.mul(ScalarKernels.LOG2E).add(ScalarKernels.ROUNDER).sub(ScalarKernels.ROUNDER);
        FloatVector r = n.fma(FloatVector.broadcast(W.floats(), -ScalarKernels.LN2_HI), c);
        r = n.fma(FloatVector.broadcast(W.floats(), -ScalarKernels.LN2_LO), r);
        FloatVector p = FloatVector.broadcast(W.floats(), ScalarKernels.EXP_P0);
        p = p.fma(r, FloatVector.broadcast(W.floats(), ScalarKernels.EXP_P1));
        p = p.fma(r, FloatVector.broadcast(W.floats(), ScalarKernels.EXP_P2));
        p = p.fma(r, FloatVector.broadcast(W.floats(), ScalarKernels.EXP_P3));
        p = p.fma(r, FloatVector.broadcast(W.floats(), ScalarKernels.EXP_P4));
        p = p.fma(r, FloatVector.broadcast(W.floats(), ScalarKernels.EXP_P5));
        p = p.fma(r.mul(r), r.add(1f));
        IntVector bits = ((IntVector) n.convert(VectorOperators.F2I, 0)).add(127).lanewise(VectorOperators.LSHL, 23);
        FloatVector scaled = p.mul(bits.reinterpretAsFloats());
        return scaled.blend(0f, x.compare(VectorOperators.LT, ScalarKernels.EXP_LO));
    }

    private static float sum(FloatVector v) {
        return LaneSums.sum(v);
    }

    @Override
    public void siluMul(float[] gate, int gateOff, float[] up, int upOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int i = 0;
        if (n >= lanes) {
            for (int bound = f.loopBound(n); i < bound; i += lanes) {
                FloatVector g = load(gate, gateOff + i);
                // g / (1 + e^-g): for g -> -inf, e^-g overflows to +inf and the quotient is -0, not NaN.
                FloatVector denominator = exp(g.neg()).add(1f);
                g.div(denominator).mul(load(up, upOff + i)).intoArray(gate, gateOff + i);
            }
        }
        for (; i < n; i++) {
            float g = gate[gateOff + i];
            gate[gateOff + i] = g / (1f + ScalarKernels.expf(-g)) * up[upOff + i];
        }
    }

    @Override
    public void rope(float[] x, int off, int numHeads, int headDim, int rotDim, int pos, float[] cos, float[] sin,
            boolean neox) {
        int lanes = W.floats().length();
        ScalarKernels.checkRope(headDim, rotDim);
        int half = rotDim / 2;
        if ((neox ? half : rotDim) < lanes) {
            SCALAR.rope(x, off, numHeads, headDim, rotDim, pos, cos, sin, neox);
            return;
        }
        int table = pos * half;
        for (int h = 0; h < numHeads; h++) {
            int base = off + h * headDim;
            if (neox) {
                ropeNeox(x, base, half, cos, sin, table);
            } else {
                ropeAdjacent(x, base, half, cos, sin, table);
            }
        }
    }

    /** Pairs {@code (i, i + half)}: both halves load as plain vectors against one table slice. */
    private void ropeNeox(float[] x, int base, int half, float[] cos, float[] sin, int table) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int i = 0;
        for (int bound = f.loopBound(half); i < bound; i += lanes) {
            FloatVector c = load(cos, table + i);
            FloatVector s = load(sin, table + i);
            FloatVector x0 = load(x, base + i);
            FloatVector x1 = load(x, base + half + i);
            x0.mul(c).sub(x1.mul(s)).intoArray(x, base + i);
            x0.mul(s).add(x1.mul(c)).intoArray(x, base + half + i);
        }
        for (; i < half; i++) {
            ScalarKernels.rotate(x, base + i, base + half + i, cos[table + i], sin[table + i]);
        }
    }

    /** Pairs {@code (2i, 2i + 1)}: each vector holds lanes/2 pairs, table entries duplicated per pair. */
    private void ropeAdjacent(float[] x, int base, int half, float[] cos, float[] sin, int table) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int rotDim = 2 * half;
        int j = 0;
        for (int bound = f.loopBound(rotDim); j < bound; j += lanes) {
            FloatVector c = FloatVector.fromArray(f, cos, table + j / 2, PAIR_INDEX, 0);
            FloatVector s = FloatVector.fromArray(f, sin, table + j / 2, PAIR_INDEX, 0);
            FloatVector v = load(x, base + j);
            FloatVector swapped = v.rearrange(SWAP_PAIRS);
            v.mul(c).add(swapped.mul(s).mul(ALTERNATING_SIGN)).intoArray(x, base + j);
        }
        for (int i = j / 2; i < half; i++) {
            ScalarKernels.rotate(x, base + 2 * i, base + 2 * i + 1, cos[table + i], sin[table + i]);
        }
    }

    @Override
    public void attention(float[] q, int qOff, float[] keys, float[] values, int[] blockTable, int numTokens,
            int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores, float[] out,
            int outOff) {
        int lanes = W.floats().length();
        if (headDim < lanes) {
            SCALAR.attention(q, qOff, keys, values, blockTable, numTokens, blockSize, headBase, blockStride, headDim,
                    scale, scores, out, outOff);
            return;
        }
        // Walk block by block so the row offset is one multiply per block, not a divide per token.
        for (int t = 0, b = 0; t < numTokens; b++) {
            int row = rowOffset(blockTable[b], headBase, blockStride);
            for (int end = Math.min(numTokens, t + blockSize); t < end; t++, row += headDim) {
                scores[t] = dot(q, qOff, keys, row, headDim) * scale;
            }
        }
        softmax(scores, 0, numTokens);
        java.util.Arrays.fill(out, outOff, outOff + headDim, 0f);
        // out += p_t * v_t, token by token: the headDim-long accumulator stays in L1, and each
        // lane's update is independent, so the FMAs do not chain on each other within a token.
        for (int t = 0, b = 0; t < numTokens; b++) {
            int row = rowOffset(blockTable[b], headBase, blockStride);
            for (int end = Math.min(numTokens, t + blockSize); t < end; t++, row += headDim) {
                axpy(scores[t], values, row, out, outOff, headDim);
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: {@link #attentionF16Queries} of one query, with its scratch allocated (the forward
     * pass calls that with its own).
     */
    @Override
    public void attentionF16(float[] q, int qOff, short[] keys, short[] values, int[] blockTable, int numTokens,
            int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores, float[] out,
            int outOff) {
        attentionF16Queries(q, new int[] {qOff}, new int[] {numTokens}, 1, keys, values, blockTable, blockSize,
                headBase, blockStride, headDim, scale, scores, numTokens, new float[QUERIES_ROWS * headDim], out,
                new int[] {outOff});
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: llama.cpp's roundings to F16 (see {@link ScalarKernels#attentionF16}) in two
     * passes over the positions, {@value KernelSupport#QUERIES_ROWS} at a time: their K (then V)
     * rows are widened once into {@code row} for every query that reaches them (exactly, so the
     * order of the queries and how they are grouped change no bit). Scores four positions at a
     * time, each a dot in two FMA chains whose lanes are added up with the other three's
     * ({@link LaneSums#sum4}, the same pairs as {@code sum}); the output accumulated in
     * registers across the positions, a strip of four vectors at a time.
     */
    @Override
    public void attentionF16Queries(float[] q, int[] qOffs, int[] counts, int queries, short[] keys, short[] values,
            int[] blockTable, int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores,
            int scoresStride, float[] row, float[] out, int[] outOffs) {
        if (headDim < W.floats().length()) {
            for (int i = 0; i < queries; i++) {
                SCALAR.attentionF16(q, qOffs[i], keys, values, blockTable, counts[i], blockSize, headBase, blockStride,
                        headDim, scale, scores, out, outOffs[i]);
            }
            return;
        }
        int longest = 0;
        for (int i = 0; i < queries; i++) {
            ScalarKernels.roundToF16(q, qOffs[i], out, outOffs[i], headDim);   // out holds the query, as there
            longest = Math.max(longest, counts[i]);
        }
        for (int t0 = 0, n; t0 < longest; t0 += n) {
            n = widen(keys, blockTable, t0, longest, blockSize, headBase, blockStride, headDim, row);
            for (int i = 0; i < queries; i++) {
                scoreRows(out, outOffs[i], row, Math.min(n, counts[i] - t0), headDim, scale, scores,
                        i * scoresStride + t0);
            }
        }
        for (int i = 0; i < queries; i++) {
            softmax(scores, i * scoresStride, counts[i]);
            ScalarKernels.roundToF16(scores, i * scoresStride, scores, i * scoresStride, counts[i]);
            java.util.Arrays.fill(out, outOffs[i], outOffs[i] + headDim, 0f);
        }
        for (int t0 = 0, n; t0 < longest; t0 += n) {
            n = widen(values, blockTable, t0, longest, blockSize, headBase, blockStride, headDim, row);
            for (int i = 0; i < queries; i++) {
                addRows(scores, i * scoresStride + t0, row, Math.min(n, counts[i] - t0), headDim, out, outOffs[i]);
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: both products in {@link PanelDot}'s outer-product form, with no lane sums. Scores:
     * the keys (widened {@value KernelSupport#QUERIES_ROWS} at a time) are the rows, the queries
     * (rounded to F16, transposed once) the lanes. Output: the probabilities of six queries are the
     * rows and the values (widened {@link KernelSupport#PANEL_POSITIONS} positions at a time, in
     * groups of up to {@code 4 L} dimensions) the lanes, the chunks' sums added up, so each query's
     * output comes out as its row. Positions past a query's count get probability 0. Falls back to
     * {@link #attentionF16Queries} where the shapes do not fit (a head size not a multiple of the
     * lanes, or a stride other than the longest count).
     */
    @Override
    public void attentionF16Panels(float[] q, int[] qOffs, int[] counts, int queries, short[] keys, short[] values,
            int[] blockTable, int blockSize, int headBase, int blockStride, int headDim, float scale, float[] scores,
            int scoresStride, float[] work, float[] out, int[] outOffs) {
        int lanes = PanelDot.lanes();
        int longest = 0;
        for (int i = 0; i < queries; i++) {
            longest = Math.max(longest, counts[i]);
        }
        if (headDim % lanes != 0 || scoresStride != longest) {
            attentionF16Queries(q, qOffs, counts, queries, keys, values, blockTable, blockSize, headBase, blockStride,
                    headDim, scale, scores, scoresStride, work, out, outOffs);
            return;
        }
        int group = PanelDot.MAX_VECTORS * lanes;
        int padded = (queries + lanes - 1) / lanes * lanes;
        int qt = 0;                                     // the queries transposed, in groups of 4 L
        int rows = qt + padded * headDim;               // QUERIES_ROWS widened K rows
        int vt = rows + KernelSupport.QUERIES_ROWS * headDim;   // a chunk of positions' V rows, by dimension groups
        int sums = vt + Math.min(longest, KernelSupport.PANEL_POSITIONS) * headDim;   // one call's sums
        for (int i = 0; i < queries; i++) {
            ScalarKernels.roundToF16(q, qOffs[i], out, outOffs[i], headDim);   // out holds the query, as there
        }
        for (int g0 = 0; g0 < padded; g0 += group) {
            int tg = Math.min(group, padded - g0);
            for (int j = 0; j < tg; j++) {
                int i = g0 + j;
                for (int d = 0; d < headDim; d++) {
                    work[qt + g0 * headDim + d * tg + j] = i < queries ? out[outOffs[i] + d] : 0f;
                }
            }
        }
        for (int t0 = 0, n; t0 < longest; t0 += n) {
            n = widen(keys, blockTable, t0, longest, blockSize, headBase, blockStride, headDim, work, rows);
            for (int j0 = 0; j0 < n; j0 += PanelDot.ROWS) {
                int nj = Math.min(PanelDot.ROWS, n - j0);
                for (int g0 = 0; g0 < padded; g0 += group) {
                    int tg = Math.min(group, padded - g0);
                    PanelDot.multiply(tg / lanes, work, rows + j0 * headDim, headDim, headDim, nj, work,
                            qt + g0 * headDim, work, sums);
                    for (int i = g0, end = Math.min(queries, g0 + tg); i < end; i++) {
                        for (int j = 0; j < nj; j++) {
                            scores[i * scoresStride + t0 + j0 + j] = work[sums + j * tg + i - g0] * scale;
                        }
                    }
                }
            }
        }
        for (int i = 0; i < queries; i++) {
            int at = i * scoresStride;
            softmax(scores, at, counts[i]);
            ScalarKernels.roundToF16(scores, at, scores, at, counts[i]);
            java.util.Arrays.fill(scores, at + counts[i], at + longest, 0f);
        }
        for (int i = 0; i < queries; i++) {
            java.util.Arrays.fill(out, outOffs[i], outOffs[i] + headDim, 0f);
        }
        for (int c0 = 0; c0 < longest; c0 += KernelSupport.PANEL_POSITIONS) {   // bounded scratch
            int c1 = Math.min(longest, c0 + KernelSupport.PANEL_POSITIONS);
            for (int t0 = c0, n; t0 < c1; t0 += n) {       // V rows into groups of up to 4 L dimensions
                n = widen(values, blockTable, t0, c1, blockSize, headBase, blockStride, headDim, work, rows);
                for (int d0 = 0; d0 < headDim; d0 += group) {
                    int dw = Math.min(group, headDim - d0);
                    for (int t = 0; t < n; t++) {
                        System.arraycopy(work, rows + t * headDim + d0, work, vt + d0 * (c1 - c0) + (t0 - c0 + t) * dw,
                                dw);
                    }
                }
            }
            for (int i0 = 0; i0 < queries; i0 += PanelDot.ROWS) {
                int ni = Math.min(PanelDot.ROWS, queries - i0);
                for (int d0 = 0; d0 < headDim; d0 += group) {
                    int dw = Math.min(group, headDim - d0);
                    PanelDot.multiply(dw / lanes, scores, i0 * scoresStride + c0, scoresStride, c1 - c0, ni, work,
                            vt + d0 * (c1 - c0), work, sums);
                    for (int j = 0; j < ni; j++) {
                        int o = outOffs[i0 + j] + d0;
                        for (int d = 0; d < dw; d++) {
                            out[o + d] += work[sums + j * dw + d];
                        }
                    }
                }
            }
        }
    }

    /**
     * The rows of positions {@code [t0, t0 + n)} widened into {@code dst}, {@code headDim} floats
     * each, {@code n} as many as fit ({@value KernelSupport#QUERIES_ROWS}) before the block or the sequence
     * ends; returns {@code n}.
     */
    private int widen(short[] a, int[] blockTable, int t0, int longest, int blockSize, int headBase, int blockStride,
            int headDim, float[] dst) {
        return widen(a, blockTable, t0, longest, blockSize, headBase, blockStride, headDim, dst, 0);
    }

    /** {@link #widen(short[], int[], int, int, int, int, int, int, float[])} into {@code dst} from {@code dstOff}. */
    private int widen(short[] a, int[] blockTable, int t0, int longest, int blockSize, int headBase, int blockStride,
            int headDim, float[] dst, int dstOff) {
        int b = t0 / blockSize, slot = t0 % blockSize;
        int n = Math.min(Math.min(KernelSupport.QUERIES_ROWS, blockSize - slot), longest - t0);
        int from = rowOffset(blockTable[b], headBase, blockStride) + slot * headDim;
        // a block's rows of one KV head are contiguous: one plain loop, which C2 compiles to
        // vcvtph2ps (16 halves an instruction at 512 bits, 8 at 256). The Vector API has no
        // half-float conversion; widening with integer operations (as F16Vector does) cost about
        // ten operations a vector, 17 % of a 1,500-token decode (JFR). Both exact: the same floats.
        int count = n * headDim;
        // a block whose successor lies below it is read back to front (these n rows of it: the whole block at the
        // default block size of 16): a downward run of blocks (KvStorage keeps a head's blocks side by side) then
        // streams downwards, which the prefetchers follow; read front to back, each block's run jumped back over
        // two blocks, and attention ran 3x slower (bench/kernels/AttentionProbe)
        if (b + 1 < blockTable.length && blockTable[b + 1] < blockTable[b]) {
            widenDown(a, from, dst, dstOff, count);
        } else {
            for (int i = 0; i < count; i++) {
                dst[dstOff + i] = Float.float16ToFloat(a[from + i]);
            }
        }
        return n;
    }

    /** {@code dst[dstOff + i] = a[from + i]} widened, {@code i} from {@code count - 1} down to 0. */
    private static void widenDown(short[] a, int from, float[] dst, int dstOff, int count) {
        for (int i = count - 1; i >= 0; i--) {
            dst[dstOff + i] = Float.float16ToFloat(a[from + i]);
        }
    }

    /**
     * {@code scores[at + t] = dot(query, row t) * scale} for {@code t < n} (none when
     * {@code n <= 0}), four rows at a time.
     */
    private void scoreRows(float[] q, int qOff, float[] rows, int n, int headDim, float scale, float[] scores, int at) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int limit = f.loopBound(headDim);
        int unrolled = limit - limit % (2 * lanes);
        int t = 0;
        for (; t + 4 <= n; t += 4) {
            int r0 = t * headDim, r1 = r0 + headDim, r2 = r1 + headDim, r3 = r2 + headDim;
            FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
            FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            int d = 0;
            for (; d < unrolled; d += 2 * lanes) {
                FloatVector x = load(q, qOff + d), y = load(q, qOff + d + lanes);
                a0 = fma(x, load(rows, r0 + d), a0);
                b0 = fma(y, load(rows, r0 + d + lanes), b0);
                a1 = fma(x, load(rows, r1 + d), a1);
                b1 = fma(y, load(rows, r1 + d + lanes), b1);
                a2 = fma(x, load(rows, r2 + d), a2);
                b2 = fma(y, load(rows, r2 + d + lanes), b2);
                a3 = fma(x, load(rows, r3 + d), a3);
                b3 = fma(y, load(rows, r3 + d + lanes), b3);
            }
            for (; d < limit; d += lanes) {
                FloatVector x = load(q, qOff + d);
                a0 = fma(x, load(rows, r0 + d), a0);
                a1 = fma(x, load(rows, r1 + d), a1);
                a2 = fma(x, load(rows, r2 + d), a2);
                a3 = fma(x, load(rows, r3 + d), a3);
            }
            LaneSums.sum4(a0.add(b0), a1.add(b1), a2.add(b2), a3.add(b3), scores, at + t);
            for (int j = 0; j < 4; j++) {
                float sum = scores[at + t + j];
                for (int e = limit, r = (t + j) * headDim; e < headDim; e++) { // a head size not a multiple of L
                    sum += q[qOff + e] * rows[r + e];
                }
                scores[at + t + j] = sum * scale;
            }
        }
        for (; t < n; t++) {
            scores[at + t] = dotF32(q, qOff, rows, t * headDim, headDim) * scale;
        }
    }

    /**
     * {@code y += p[at + t] * row t} for {@code t < n} (none when {@code n <= 0}), row after row,
     * each lane one FMA per row: {@code y} held in registers four vectors at a time across the rows.
     */
    private void addRows(float[] p, int at, float[] rows, int n, int headDim, float[] y, int yOff) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        int d = 0;
        for (; d + 4 * lanes <= headDim; d += 4 * lanes) {
            FloatVector y0 = load(y, yOff + d), y1 = load(y, yOff + d + lanes);
            FloatVector y2 = load(y, yOff + d + 2 * lanes), y3 = load(y, yOff + d + 3 * lanes);
            for (int t = 0, r = d; t < n; t++, r += headDim) {
                FloatVector a = FloatVector.broadcast(f, p[at + t]);
                y0 = fma(a, load(rows, r), y0);
                y1 = fma(a, load(rows, r + lanes), y1);
                y2 = fma(a, load(rows, r + 2 * lanes), y2);
                y3 = fma(a, load(rows, r + 3 * lanes), y3);
            }
            y0.intoArray(y, yOff + d);
            y1.intoArray(y, yOff + d + lanes);
            y2.intoArray(y, yOff + d + 2 * lanes);
            y3.intoArray(y, yOff + d + 3 * lanes);
        }
        for (int bound = f.loopBound(headDim); d < bound; d += lanes) {
            FloatVector y0 = load(y, yOff + d);
            for (int t = 0, r = d; t < n; t++, r += headDim) {
                y0 = fma(FloatVector.broadcast(f, p[at + t]), load(rows, r), y0);
            }
            y0.intoArray(y, yOff + d);
        }
        for (; d < headDim; d++) { // a head size not a multiple of L
            for (int t = 0; t < n; t++) {
                y[yOff + d] += p[at + t] * rows[t * headDim + d];
            }
        }
    }

    /** {@code sum(q[i] * k[kOff + i])} in two FMA chains, {@link #scoreRows}' order for one row. */
    private float dotF32(float[] q, int qOff, float[] k, int kOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int lanes = f.length();
        FloatVector acc0 = FloatVector.zero(f);
        FloatVector acc1 = FloatVector.zero(f);
        int limit = f.loopBound(n);
        int i = 0;
        for (int unrolled = limit - limit % (2 * lanes); i < unrolled; i += 2 * lanes) {
            acc0 = fma(load(q, qOff + i), load(k, kOff + i), acc0);
            acc1 = fma(load(q, qOff + i + lanes), load(k, kOff + i + lanes), acc1);
        }
        for (; i < limit; i += lanes) {
            acc0 = fma(load(q, qOff + i), load(k, kOff + i), acc0);
        }
        float sum = sum(acc0.add(acc1));
        for (; i < n; i++) {
            sum += q[qOff + i] * k[kOff + i];
        }
        return sum;
    }

    /** Slot 0 of {@code block} in the KV head at {@code headBase} whose blocks are {@code blockStride} apart. */
    private static int rowOffset(int block, int headBase, int blockStride) {
        return headBase + block * blockStride;
    }

    private FloatVector load(float[] a, int off) {
        return FloatVector.fromArray(W.floats(), a, off);
    }

    private static FloatVector fma(FloatVector a, FloatVector b, FloatVector acc) {
        return FAST_FMA ? a.fma(b, acc) : a.mul(b).add(acc);
    }

    /** A HotSpot boolean flag, false when it cannot be read (another VM, no jdk.management). */
    private static boolean vmOptionIsTrue(String name) {
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            return bean != null && Boolean.parseBoolean(bean.getVMOption(name).getValue());
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }
}
