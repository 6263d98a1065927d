package io.nereid.engine.cpu;

import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.kernel.KernelSupport;
import io.nereid.engine.cpu.kernel.RopeTables;
import io.nereid.engine.cpu.tensor.MatmulInput;
import io.nereid.engine.cpu.tensor.WeightMatrix;
import io.nereid.engine.model.ModelConfig;
import java.util.List;

/**
 * One forward pass of a decoder-only transformer over a step: any mix of decode slices and
 * prefill chunks of different sequences. All tokens of the step go through each weight matrix
 * together ({@link WeightMatrix#matmul} reads a row once for all of them), which is what makes
 * batching pay on a CPU; attention is per token over its own sequence's paged K/V, in whichever
 * precision the {@link KvStorage} was built with (F16 rounds K and V as they are stored).
 *
 * <p>Per layer, every K/V of the step is written to the cache before any attention reads it, so
 * a block shared within the step (a prefix hit on a block being computed) is read after it is
 * written.
 *
 * <p>Thread-safety: one forward at a time (the engine thread calls it); inside, work is split
 * over the {@link RangeRunner} on disjoint outputs.
 */
public final class CpuForward {

    private final ModelConfig c;
    private final ModelWeights w;
    private final KernelSupport k;   // kernels; "kk" below is keys
    private final RangeRunner runner;
    private final RopeTables rope;
    private final int maxPositions;
    private final boolean batchInvariant;
    /** The kernel threads over a step's tokens: {@link WeightMatrix#prepare}'s conversions. */
    private final MatmulInput.Ranges tokenRanges;
    /** Each kernel thread's matmul scratch (decoded rows of the widest matrix) and attention scores. */
    private final ThreadLocal<Scratch> scratch;
    private Activations buffers;   // grown by forward, on the engine thread

    /**
     * Per-thread space, made on a thread's first use and kept: nothing is allocated per step but
     * the attention scores' growth. {@code row}: widened K or V rows; {@code qOffs}, {@code counts}:
     * an attention task's queries.
     */
    private static final class Scratch {
        final float[] rows;
        final float[] row;
        final int[] qOffs;
        final int[] counts;
        private float[] scores = new float[0];
        private float[] work = new float[0];

        Scratch(float[] rows, float[] row, int queries) {
            this.rows = rows;
            this.row = row;
            this.qOffs = new int[queries];
            this.counts = new int[queries];
        }

        /** At least {@code size} floats, grown (doubling) when a task needs more than any before on this thread. */
        float[] scores(int size) {
            if (scores.length < size) {
                scores = new float[Math.max(size, 2 * scores.length)];
            }
            return scores;
        }

        /** {@link KernelSupport#attentionF16Panels}' scratch, grown like the scores. */
        float[] work(int size) {
            if (work.length < size) {
                work = new float[Math.max(size, 2 * work.length)];
            }
            return work;
        }
    }

    /**
     * Consecutive tokens of one sequence whose attention runs as one task per KV head, with the
     * heads of its GQA group: each K/V row is widened once for up to {@code RUN * group} queries.
     */
    private static final int RUN = 4;

    /**
     * Without batch invariance, a prompt's consecutive tokens run in tasks of up to this many
     * queries (at least {@link #RUN} tokens), which attend in {@link KernelSupport#attentionF16Panels}'
     * faster order once a task has more than {@link #RUN} tokens and at least
     * {@link #PANEL_MIN_QUERIES} queries: 64 fill one group of {@code PanelDot} at 512 bits.
     * Slices of up to {@link #RUN} tokens (decode, a speculative step of up to three drafts) keep
     * the bits each token gets alone.
     */
    private static final int PANEL_QUERIES = 64;
    private static final int PANEL_MIN_QUERIES = 16;
    /** The most floats of scores a panel task may take (16 MB): 64 queries over 65,536 positions. */
    private static final long PANEL_SCORES = 1 << 22;

    /**
     * @param batchInvariant every matmul in the one reduction order of {@link WeightMatrix}, so a
     *     token's logits do not depend on the step's other tokens; else one-token matmuls run
     *     their faster order ({@link WeightMatrix#matmul(MatmulInput, float[], int, int, float[], boolean)})
     */
    public CpuForward(ModelConfig config, ModelWeights weights, KernelSupport kernels, RangeRunner runner, int maxPositions,
            boolean batchInvariant) {
        this.c = config;
        this.batchInvariant = batchInvariant;
        this.tokenRanges = (n, body) -> runner.run(0, n, 1, body::run);
        this.w = weights;
        this.k = kernels;
        this.runner = runner;
        this.maxPositions = maxPositions;
        double[] frequencies = RopeTables.inverseFrequencies(config.ropeDim(), config.ropeTheta(), config.ropeScaling());
        float[] factors = weights.ropeFreqFactors().orElse(null);
        for (int i = 0; factors != null && i < frequencies.length; i++) {
            frequencies[i] /= factors[i];
        }
        this.rope = RopeTables.fromFrequencies(maxPositions, config.ropeDim(), frequencies);
        int widest = Math.max(Math.max(config.dim(), config.qDim()), config.ffnDim());
        int group = config.heads() / config.kvHeads();
        int queries = Math.max(RUN, PANEL_QUERIES / group) * group;   // the most one attention task takes
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(new float[WeightMatrix.scratchSize(widest)],
                new float[KernelSupport.QUERIES_ROWS * config.headDim()], queries));
        this.buffers = new Activations(0);
    }

    /** A step's activations, for up to {@code capacity} tokens; grown when a step has more, else reused. */
    private final class Activations {
        final int capacity;
        final float[] x;
        final float[] xb;
        final float[] q;
        final float[] kk;
        final float[] v;
        final float[] att;
        final float[] proj;
        final float[] gate;
        final float[] up;
        final int[] sliceOf;
        final int[] posOf;
        /** Where each attention run starts: up to {@link #RUN} consecutive tokens of one slice. */
        final int[] runStart;
        /** The matmul inputs' converted forms (Q8_0, Q8_K, F16, ...), one input at a time. */
        final MatmulInput.Buffers inputs;

        Activations(int capacity) {
            this.capacity = capacity;
            x = new float[capacity * c.dim()];
            xb = new float[capacity * c.dim()];
            q = new float[capacity * c.qDim()];
            kk = new float[capacity * c.kvDim()];
            v = new float[capacity * c.kvDim()];
            att = new float[capacity * c.qDim()];
            proj = new float[capacity * c.dim()];
            gate = new float[capacity * c.ffnDim()];
            up = new float[capacity * c.ffnDim()];
            sliceOf = new int[capacity];
            posOf = new int[capacity];
            runStart = new int[capacity + 1];
            inputs = new MatmulInput.Buffers(capacity * Math.max(Math.max(c.dim(), c.qDim()), c.ffnDim()));
        }
    }

    public ModelConfig config() {
        return c;
    }

    /**
     * Runs the step and returns, for each slice in order, the logits of its last
     * {@link Slice#logitRows()} tokens (that many rows of vocabSize floats, row-major), or null when
     * it wants none.
     */
    public float[][] forward(List<Slice> slices, KvStorage kv) {
        return logits(slices, run(slices, kv));
    }

    /**
     * As {@link #forward}, with the final hidden states (after the output norm, {@code dim} floats per
     * position) of the slices that ask for them ({@link Slice#hidden()}).
     */
    public io.nereid.engine.backend.StepOutput step(List<Slice> slices, KvStorage kv) {
        float[] x = run(slices, kv);
        float[][] hidden = new float[slices.size()][];
        int dim = c.dim();
        for (int si = 0, t = 0; si < slices.size(); si++) {
            Slice s = slices.get(si);
            if (s.hidden()) {
                float[] h = new float[s.tokens().length * dim];
                for (int j = 0; j < s.tokens().length; j++) {
                    k.rmsNorm(h, j * dim, x, (t + j) * dim, w.outputNorm(), dim, c.rmsEps());
                }
                hidden[si] = h;
            }
            t += s.tokens().length;
        }
        return new io.nereid.engine.backend.StepOutput(logits(slices, x), c.vocabSize(), hidden, dim);
    }

    /** The layers over every token of the step: the residual stream, {@code dim} floats per token. */
    private float[] run(List<Slice> slices, KvStorage kv) {
        int total = 0;
        for (Slice s : slices) {
            if (s.endPos() > maxPositions) {
                throw new IllegalArgumentException("position " + (s.endPos() - 1) + " beyond the " + maxPositions
                        + "-position context");
            }
            total += s.tokens().length;
        }
        final int n = total;
        int dim = c.dim();
        if (buffers.capacity < n) {
            buffers = new Activations(Math.max(n, 2 * buffers.capacity));
        }
        Activations a = buffers;
        // Token t of the step: its slice, its position.
        int[] sliceOf = a.sliceOf;
        int[] posOf = a.posOf;
        float[] x = a.x;
        for (int si = 0, t = 0; si < slices.size(); si++) {
            Slice s = slices.get(si);
            for (int j = 0; j < s.tokens().length; j++, t++) {
                sliceOf[t] = si;
                posOf[t] = s.startPos() + j;
                int token = s.tokens()[j];
                if (token < 0 || token >= c.vocabSize()) {
                    throw new IllegalArgumentException("token id " + token + " outside the vocabulary");
                }
                w.tokenEmbedding().getRowInto(token, x, t * dim);
            }
        }
        float[] xb = a.xb;
        float[] q = a.q;
        float[] kk = a.kk;
        float[] v = a.v;
        for (int l = 0; l < c.layers(); l++) {
            ModelWeights.Layer layer = w.layer(l);
            rmsNorm(xb, x, layer.attnNorm(), n);
            MatmulInput attnIn = MatmulInput.of(xb, n, dim, a.inputs);
            matmul3(layer.wq(), layer.wk(), layer.wv(), attnIn, q, kk, v);
            if (layer.bq() != null) {
                addBias(q, layer.bq(), n);
                addBias(kk, layer.bk(), n);
                addBias(v, layer.bv(), n);
            }
            runner.run(0, n, 8, (from, to) -> {
                for (int t = from; t < to; t++) {
                    if (layer.qNorm() != null) {
                        for (int h = 0; h < c.heads(); h++) {
                            int off = t * c.qDim() + h * c.headDim();
                            k.rmsNorm(q, off, q, off, layer.qNorm(), c.headDim(), c.rmsEps());
                        }
                        for (int h = 0; h < c.kvHeads(); h++) {
                            int off = t * c.kvDim() + h * c.headDim();
                            k.rmsNorm(kk, off, kk, off, layer.kNorm(), c.headDim(), c.rmsEps());
                        }
                    }
                    boolean neox = c.neoxRope();
                    rope.apply(k, q, t * c.qDim(), c.heads(), c.headDim(), posOf[t], neox);
                    rope.apply(k, kk, t * c.kvDim(), c.kvHeads(), c.headDim(), posOf[t], neox);
                }
            });
            writeKv(slices, sliceOf, posOf, kv, l, kk, v, n);
            attention(slices, sliceOf, posOf, a.runStart, kv, l, q, a.att, n);
            matmul(layer.wo(), MatmulInput.of(a.att, n, c.qDim(), a.inputs), a.proj);
            addInto(x, a.proj, n * dim);
            rmsNorm(xb, x, layer.ffnNorm(), n);
            gateUp(layer.gate(), layer.up(), MatmulInput.of(xb, n, dim, a.inputs), a.gate, a.up, n);
            matmul(layer.down(), MatmulInput.of(a.gate, n, c.ffnDim(), a.inputs), a.proj);
            addInto(x, a.proj, n * dim);
        }
        return x;
    }

    private void rmsNorm(float[] out, float[] x, float[] weight, int n) {
        int dim = c.dim();
        runner.run(0, n, 8, (from, to) -> {
            for (int t = from; t < to; t++) {
                k.rmsNorm(out, t * dim, x, t * dim, weight, dim, c.rmsEps());
            }
        });
    }

    private static void addInto(float[] x, float[] y, int n) {
        for (int i = 0; i < n; i++) {
            x[i] += y[i];
        }
    }

    private float[][] logits(List<Slice> slices, float[] x) {
        int dim = c.dim();
        int vocab = c.vocabSize();
        float[][] out = new float[slices.size()][];
        int wanted = 0;
        for (Slice s : slices) {
            wanted += rowsWanted(s);
        }
        if (wanted == 0) {
            return out;
        }
        // Only the rows wanted (usually each slice's last token) go through the output matrix, all at once.
        float[] normed = new float[wanted * dim];
        for (int si = 0, t = 0, row = 0; si < slices.size(); si++) {
            Slice s = slices.get(si);
            t += s.tokens().length;
            for (int r = t - rowsWanted(s); r < t; r++, row++) {
                k.rmsNorm(normed, row * dim, x, r * dim, w.outputNorm(), dim, c.rmsEps());
            }
        }
        float[] logits = new float[wanted * vocab];
        matmul(w.output(), MatmulInput.of(normed, wanted, dim, buffers.inputs), logits);
        for (int si = 0; si < slices.size(); si++) {
            if (rowsWanted(slices.get(si)) == wanted) { // one slice wants them all (a decode, a verification): no copy
                out[si] = logits;
                return out;
            }
        }
        for (int si = 0, row = 0; si < slices.size(); si++) {
            int rows = rowsWanted(slices.get(si));
            if (rows > 0) {
                out[si] = java.util.Arrays.copyOfRange(logits, row * vocab, (row + rows) * vocab);
                row += rows;
            }
        }
        return out;
    }

    private static int rowsWanted(Slice s) {
        return s.logitRows();
    }

    /** A chunk of a matmul has at least this many rows, in whole groups of the matrix's {@link WeightMatrix#rowAlignment}. */
    private static final int MIN_ROWS = 16;

    /** The rows of {@code m}'s groups for a matmul of {@code in}: a thread's chunk is whole groups. */
    private int unit(WeightMatrix m, MatmulInput in) {
        return m.rowAlignment(in.tokens(), batchInvariant);
    }

    private static int groups(WeightMatrix m, int unit) {
        return (m.rows() + unit - 1) / unit;
    }

    private static int minGroups(int unit) {
        return Math.max(1, MIN_ROWS / unit);
    }

    /** Rows of groups {@code [from, to)} of {@code unit} rows of {@code m}, clipped to its rows. */
    private void matmulGroups(WeightMatrix m, int unit, MatmulInput in, float[] out, int from, int to) {
        if (from < to) {
            m.matmul(in, out, unit * from, Math.min(m.rows(), unit * to), scratch.get().rows, batchInvariant);
        }
    }

    private void matmul(WeightMatrix m, MatmulInput in, float[] out) {
        m.prepare(in, batchInvariant, tokenRanges);
        int unit = unit(m, in);
        // Chunks of whole groups: each weight row is read once for all tokens of the step.
        runner.run(0, groups(m, unit), minGroups(unit), (from, to) -> matmulGroups(m, unit, in, out, from, to));
    }

    /** Three matrices of one input (the query, key and value projections) as one parallel loop. */
    private void matmul3(WeightMatrix a, WeightMatrix b, WeightMatrix d, MatmulInput in, float[] outA, float[] outB,
            float[] outD) {
        a.prepare(in, batchInvariant, tokenRanges);
        b.prepare(in, batchInvariant, tokenRanges);
        d.prepare(in, batchInvariant, tokenRanges);
        int ua = unit(a, in), ub = unit(b, in), ud = unit(d, in);
        int ga = groups(a, ua);
        int gb = groups(b, ub);
        // the largest of the minimums (that of the matrix with the smallest groups): none of its chunks is shorter
        // than MIN_ROWS, and a matrix of larger groups gets longer ones
        int min = Math.max(minGroups(ua), Math.max(minGroups(ub), minGroups(ud)));
        runner.run(0, ga + gb + groups(d, ud), min, (from, to) -> {
            matmulGroups(a, ua, in, outA, from, Math.min(to, ga));
            matmulGroups(b, ub, in, outB, Math.max(from, ga) - ga, Math.min(to, ga + gb) - ga);
            matmulGroups(d, ud, in, outD, Math.max(from, ga + gb) - ga - gb, to - ga - gb);
        });
    }

    /** The gate and up projections and {@code silu(gate) * up} on the same rows, as one parallel loop. */
    private void gateUp(WeightMatrix gate, WeightMatrix up, MatmulInput in, float[] g, float[] u, int n) {
        gate.prepare(in, batchInvariant, tokenRanges);
        up.prepare(in, batchInvariant, tokenRanges);
        int ffn = c.ffnDim();
        // up's rows in the same chunks, which silu(gate) * up then takes: groups of the larger unit of the two
        // (powers of two, so whole groups of either)
        int unit = Math.max(unit(gate, in), unit(up, in));
        runner.run(0, groups(gate, unit), minGroups(unit), (from, to) -> {
            matmulGroups(gate, unit, in, g, from, to);
            matmulGroups(up, unit, in, u, from, to);
            int r0 = unit * from;
            int len = Math.min(ffn, unit * to) - r0;
            for (int t = 0; t < n; t++) {
                k.siluMul(g, t * ffn + r0, u, t * ffn + r0, len);
            }
        });
    }

    private void addBias(float[] y, float[] bias, int tokens) {
        for (int t = 0; t < tokens; t++) {
            k.axpy(1f, bias, 0, y, t * bias.length, bias.length);
        }
    }

    private void writeKv(List<Slice> slices, int[] sliceOf, int[] posOf, KvStorage kv, int layer, float[] keys,
            float[] values, int n) {
        int bs = kv.blockSize();
        for (int t = 0; t < n; t++) {
            int[] table = slices.get(sliceOf[t]).blockTable();
            int p = posOf[t];
            for (int h = 0; h < c.kvHeads(); h++) {
                kv.write(layer, table[p / bs], h, p % bs, keys, values, t * c.kvDim() + h * c.headDim());
            }
        }
    }

    private void attention(List<Slice> slices, int[] sliceOf, int[] posOf, int[] runStart, KvStorage kv, int layer,
            float[] q, float[] out, int n) {
        int heads = c.heads();
        int kvHeads = c.kvHeads();
        int group = heads / kvHeads;
        float scale = (float) (1.0 / Math.sqrt(c.headDim()));
        int longestInStep = 0;
        for (int t = 0; t < n; t++) {
            longestInStep = Math.max(longestInStep, posOf[t] + 1);
        }
        // a task's scores take queries x positions floats per thread: long contexts keep short runs
        boolean panels = !batchInvariant && (long) PANEL_QUERIES * longestInStep <= PANEL_SCORES;
        int runTokens = panels ? Math.max(RUN, PANEL_QUERIES / group) : RUN;
        int runs = 0;
        for (int t = 0; t < n; runs++) {
            runStart[runs] = t;
            int end = Math.min(n, t + runTokens);
            for (t++; t < end && sliceOf[t] == sliceOf[t - 1]; t++) {
                // consecutive tokens of one slice: consecutive positions of one sequence
            }
        }
        runStart[runs] = n;
        runner.run(0, runs * kvHeads, 1, (from, to) -> {
            Scratch s = scratch.get();
            for (int task = from; task < to; task++) {
                int run = task / kvHeads;
                int kvHead = task % kvHeads;
                int queries = 0;
                for (int t = runStart[run]; t < runStart[run + 1]; t++) {
                    for (int h = kvHead * group; h < (kvHead + 1) * group; h++, queries++) {
                        s.qOffs[queries] = t * c.qDim() + h * c.headDim();
                        s.counts[queries] = posOf[t] + 1;
                    }
                }
                int longest = posOf[runStart[run + 1] - 1] + 1;   // the run's last token sees the most
                int[] table = slices.get(sliceOf[runStart[run]]).blockTable();
                int tokens = runStart[run + 1] - runStart[run];
                if (panels && tokens > RUN && queries >= PANEL_MIN_QUERIES) {
                    kv.attentionPanels(k, layer, q, s.qOffs, s.counts, queries, table, kvHead, scale,
                            s.scores(queries * longest), longest,
                            s.work(KernelSupport.panelWork(queries, longest, c.headDim())), out, s.qOffs);
                } else {
                    kv.attentionQueries(k, layer, q, s.qOffs, s.counts, queries, table, kvHead, scale,
                            s.scores(queries * longest), longest, s.row, out, s.qOffs);
                }
            }
        });
    }
}
