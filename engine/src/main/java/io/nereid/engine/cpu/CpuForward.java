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

    public CpuForward(ModelConfig config, ModelWeights weights, KernelSupport kernels, RangeRunner runner, int maxPositions) {
        this.c = config;
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
        // Token t of the step: its slice, its position.
        int[] sliceOf = new int[n];
        int[] posOf = new int[n];
        float[] x = new float[n * dim];
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
        float[] xb = new float[n * dim];
        float[] q = new float[n * c.qDim()];
        float[] kk = new float[n * c.kvDim()];
        float[] v = new float[n * c.kvDim()];
        float[] att = new float[n * c.qDim()];
        float[] proj = new float[n * dim];
        float[] gate = new float[n * c.ffnDim()];
        float[] up = new float[n * c.ffnDim()];
        // the Q8_0 form of each matmul input, one input after another
        MatmulInput.Buffers q8 = new MatmulInput.Buffers(n * Math.max(dim, Math.max(c.qDim(), c.ffnDim())));
        for (int l = 0; l < c.layers(); l++) {
            ModelWeights.Layer layer = w.layer(l);
            for (int t = 0; t < n; t++) {
                k.rmsNorm(xb, t * dim, x, t * dim, layer.attnNorm(), dim, c.rmsEps());
            }
            MatmulInput attnIn = MatmulInput.of(xb, n, dim, q8);
            matmul(layer.wq(), attnIn, q);
            matmul(layer.wk(), attnIn, kk);
            matmul(layer.wv(), attnIn, v);
            if (layer.bq() != null) {
                addBias(q, layer.bq(), n);
                addBias(kk, layer.bk(), n);
                addBias(v, layer.bv(), n);
            }
            for (int t = 0; t < n; t++) {
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
            writeKv(slices, sliceOf, posOf, kv, l, kk, v, n);
            attention(slices, sliceOf, posOf, kv, l, q, att, n);
            matmul(layer.wo(), MatmulInput.of(att, n, c.qDim(), q8), proj);
            for (int i = 0; i < n * dim; i++) {
                x[i] += proj[i];
            }
            for (int t = 0; t < n; t++) {
                k.rmsNorm(xb, t * dim, x, t * dim, layer.ffnNorm(), dim, c.rmsEps());
            }
            MatmulInput ffnIn = MatmulInput.of(xb, n, dim, q8);
            matmul(layer.gate(), ffnIn, gate);
            matmul(layer.up(), ffnIn, up);
            runner.run(0, n, 1, (from, to) -> {
                for (int t = from; t < to; t++) {
                    k.siluMul(gate, t * c.ffnDim(), up, t * c.ffnDim(), c.ffnDim());
                }
            });
            matmul(layer.down(), MatmulInput.of(gate, n, c.ffnDim(), q8), proj);
            for (int i = 0; i < n * dim; i++) {
                x[i] += proj[i];
            }
        }
        return logits(slices, x, q8);
    }

    private float[][] logits(List<Slice> slices, float[] x, MatmulInput.Buffers q8) {
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
        matmul(w.output(), MatmulInput.of(normed, wanted, dim, q8), logits);
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

    private void matmul(WeightMatrix m, MatmulInput in, float[] out) {
        // Chunks of rows: each weight row is read once for all tokens of the step.
        runner.run(0, m.rows(), 16, (from, to) -> m.matmul(in, out, from, to));
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

    private void attention(List<Slice> slices, int[] sliceOf, int[] posOf, KvStorage kv, int layer, float[] q,
            float[] out, int n) {
        int heads = c.heads();
        int group = heads / c.kvHeads();
        float scale = (float) (1.0 / Math.sqrt(c.headDim()));
        runner.run(0, n * heads, 4, (from, to) -> {
            float[] scores = new float[maxPositions];
            for (int task = from; task < to; task++) {
                int t = task / heads;
                int h = task % heads;
                int off = t * c.qDim() + h * c.headDim();
                kv.attention(k, layer, q, off, slices.get(sliceOf[t]).blockTable(), posOf[t] + 1, h / group, scale,
                        scores, out, off);
            }
        });
    }
}
