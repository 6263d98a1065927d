package io.nereid.engine.cpu;

import io.nereid.engine.cpu.tensor.WeightMatrix;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.ModelLoadException;
import io.nereid.engine.model.TensorSource;
import java.util.Optional;

/**
 * The tensors of one model, bound by GGUF name ({@code token_embd.weight},
 * {@code blk.N.attn_q.weight}, ...) from a {@link TensorSource} and checked against the config's
 * shapes. Matrices stay in the memory-mapped file in their own format; norm weights and biases
 * (small) are copied to float arrays. Immutable; valid while the files behind the source are open.
 */
public final class ModelWeights {

    /** One transformer block. Biases and Q/K norms are null where the architecture has none. */
    public record Layer(float[] attnNorm, WeightMatrix wq, WeightMatrix wk, WeightMatrix wv, WeightMatrix wo,
            float[] bq, float[] bk, float[] bv, float[] qNorm, float[] kNorm,
            float[] ffnNorm, WeightMatrix gate, WeightMatrix up, WeightMatrix down) {
    }

    private final WeightMatrix tokenEmbedding;   // (vocab, dim)
    private final Layer[] layers;
    private final float[] outputNorm;            // (dim)
    private final WeightMatrix output;           // (vocab, dim); token_embd when tied
    private final float[] ropeFreqFactors;       // (ropeDim / 2) or null: Llama 3.1 scaling baked in by the converter

    private ModelWeights(WeightMatrix tokenEmbedding, Layer[] layers, float[] outputNorm, WeightMatrix output,
            float[] ropeFreqFactors) {
        this.tokenEmbedding = tokenEmbedding;
        this.layers = layers;
        this.outputNorm = outputNorm;
        this.output = output;
        this.ropeFreqFactors = ropeFreqFactors;
    }

    public WeightMatrix tokenEmbedding() {
        return tokenEmbedding;
    }

    public Layer layer(int i) {
        return layers[i];
    }

    public float[] outputNorm() {
        return outputNorm;
    }

    public WeightMatrix output() {
        return output;
    }

    public Optional<float[]> ropeFreqFactors() {
        return Optional.ofNullable(ropeFreqFactors);
    }

    /** Bytes of the matrices' repacked copies ({@link WeightMatrix#copyBytes}), each matrix once. */
    public long copyBytes() {
        long sum = output != tokenEmbedding ? output.copyBytes() : 0;
        sum += tokenEmbedding.copyBytes();
        for (Layer l : layers) {
            for (WeightMatrix m : new WeightMatrix[] {l.wq(), l.wk(), l.wv(), l.wo(), l.gate(), l.up(), l.down()}) {
                sum += m.copyBytes();
            }
        }
        return sum;
    }

    /**
     * Binds and checks every tensor {@code c} needs.
     *
     * @throws ModelLoadException naming the file and tensor that is missing, mis-shaped or of an unsupported type
     */
    static ModelWeights bind(TensorSource source, ModelConfig c) {
        Binder b = new Binder(source);
        boolean tied = source.find("output.weight").isEmpty();
        // looked up a row at a time unless it is also the output: no interleaved copy for decode then
        WeightMatrix embd = b.matrix("token_embd.weight", c.vocabSize(), c.dim(), !tied);
        Layer[] layers = new Layer[c.layers()];
        for (int i = 0; i < c.layers(); i++) {
            String p = "blk." + i + ".";
            Architecture a = c.architecture();
            layers[i] = new Layer(
                    b.vector(p + "attn_norm.weight", c.dim()),
                    b.matrix(p + "attn_q.weight", c.qDim(), c.dim()),
                    b.matrix(p + "attn_k.weight", c.kvDim(), c.dim()),
                    b.matrix(p + "attn_v.weight", c.kvDim(), c.dim()),
                    b.matrix(p + "attn_output.weight", c.dim(), c.qDim()),
                    a.qkvBias() ? b.vector(p + "attn_q.bias", c.qDim()) : null,
                    a.qkvBias() ? b.vector(p + "attn_k.bias", c.kvDim()) : null,
                    a.qkvBias() ? b.vector(p + "attn_v.bias", c.kvDim()) : null,
                    a.qkNorm() ? b.vector(p + "attn_q_norm.weight", c.headDim()) : null,
                    a.qkNorm() ? b.vector(p + "attn_k_norm.weight", c.headDim()) : null,
                    b.vector(p + "ffn_norm.weight", c.dim()),
                    b.matrix(p + "ffn_gate.weight", c.ffnDim(), c.dim()),
                    b.matrix(p + "ffn_up.weight", c.ffnDim(), c.dim()),
                    b.matrix(p + "ffn_down.weight", c.dim(), c.ffnDim()));
        }
        float[] outNorm = b.vector("output_norm.weight", c.dim());
        WeightMatrix output = tied ? embd : b.matrix("output.weight", c.vocabSize(), c.dim());
        float[] freqs = source.find("rope_freqs.weight").isPresent()
                ? b.vector("rope_freqs.weight", c.ropeDim() / 2) : null;
        return new ModelWeights(embd, layers, outNorm, output, freqs);
    }

    /** Looks tensors up and checks their shapes, naming the file and tensor on any problem. */
    private record Binder(TensorSource source) {

        WeightMatrix matrix(String name, int rows, int cols) {
            return matrix(name, rows, cols, false);
        }

        /** {@code lookupOnly}: rows are only read ({@link WeightMatrix#forLookup}), never multiplied. */
        WeightMatrix matrix(String name, int rows, int cols, boolean lookupOnly) {
            TensorSource.Tensor t = require(name);
            long[] d = t.dims();
            if (d.length != 2 || d[0] != cols || d[1] != rows) {
                throw new ModelLoadException(source.describe(name) + " has shape " + t.shown() + ", expected "
                        + source.shape(new long[] {cols, rows}));
            }
            try {
                return lookupOnly ? WeightMatrix.forLookup(t.type(), d, t.data()) : WeightMatrix.of(t.type(), d, t.data());
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                throw new ModelLoadException(source.describe(name) + ": " + e.getMessage(), e);
            }
        }

        float[] vector(String name, int n) {
            TensorSource.Tensor t = require(name);
            long count = 1;
            for (long d : t.dims()) {
                count *= d;
            }
            if (count != n) {
                throw new ModelLoadException(source.describe(name) + " has shape " + t.shown() + ", expected " + n
                        + " elements");
            }
            float[] out = new float[n];
            try {
                WeightMatrix.of(t.type(), new long[] {n}, t.data()).getRowInto(0, out, 0);
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                throw new ModelLoadException(source.describe(name) + ": " + e.getMessage(), e);
            }
            return out;
        }

        private TensorSource.Tensor require(String name) {
            return source.find(name).orElseThrow(() -> new ModelLoadException(source.describe(name) + " is missing"));
        }
    }
}
