package io.nereid.engine.model;

import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufMetadata;
import java.util.Objects;

/**
 * Hyper-parameters of a decoder-only transformer, read once from GGUF metadata
 * ({@code <arch>.embedding_length} etc.) with llama.cpp's defaults where a key is optional, or
 * from a Hugging Face {@code config.json} ({@link HfModelConfig}).
 *
 * @param dim            model width (embedding_length)
 * @param layers         block_count
 * @param heads          attention.head_count
 * @param kvHeads        attention.head_count_kv (GQA), default {@code heads}
 * @param headDim        attention.key_length, default {@code dim / heads}
 * @param ffnDim         feed_forward_length
 * @param vocabSize      rows of token_embd
 * @param contextLength  context_length as written (may be wrong in converted files; callers may override)
 * @param rmsEps         attention.layer_norm_rms_epsilon, default 1e-5
 * @param ropeTheta      rope.freq_base, default 10000
 * @param ropeDim        rope.dimension_count, default {@code headDim}
 * @param ropeScaling    how rotary frequencies are stretched: GGUF rope.scaling.type linear, or a
 *                       config.json {@code rope_scaling}; Llama 3.1 scaling in a GGUF is baked into
 *                       {@code rope_freqs.weight} instead ({@link ModelWeights#ropeFreqFactors})
 * @param neoxRope       rotate the pairs {@code (i, i + ropeDim/2)} of a head (NeoX, Hugging Face
 *                       {@code rotate_half}) rather than {@code (2i, 2i + 1)} (GGML "normal"). A
 *                       llama GGUF uses normal RoPE because llama.cpp's converter permutes the rows
 *                       of Q and K; the same model from a Hugging Face directory is unpermuted and
 *                       needs NeoX.
 */
public record ModelConfig(Architecture architecture, int dim, int layers, int heads, int kvHeads, int headDim, int ffnDim,
        int vocabSize, int contextLength, float rmsEps, float ropeTheta, int ropeDim, RopeScaling ropeScaling,
        boolean neoxRope) {

    public ModelConfig {
        Objects.requireNonNull(architecture, "architecture");
        Objects.requireNonNull(ropeScaling, "ropeScaling");
        if (dim <= 0 || layers <= 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 || ffnDim <= 0 || vocabSize <= 0) {
            throw new IllegalArgumentException("non-positive hyper-parameter in " + this);
        }
        if (heads % kvHeads != 0) {
            throw new IllegalArgumentException("head_count " + heads + " is not a multiple of head_count_kv " + kvHeads);
        }
        if (ropeDim > headDim || ropeDim % 2 != 0) {
            throw new IllegalArgumentException("rope dimension " + ropeDim + " must be even and <= head dim " + headDim);
        }
    }

    public int qDim() {
        return heads * headDim;
    }

    public int kvDim() {
        return kvHeads * headDim;
    }

    static ModelConfig fromGguf(GgufMetadata meta, int vocabSize) {
        String source = meta.source();
        String archName = meta.architecture().orElseThrow(
                () -> new ModelLoadException(source + ": general.architecture is missing"));
        Architecture arch = Architecture.fromGguf(archName, source);
        String p = archName + ".";
        try {
            int dim = meta.getInt(p + "embedding_length");
            int heads = meta.getInt(p + "attention.head_count");
            int kvHeads = meta.findInt(p + "attention.head_count_kv").orElse(heads);
            int headDim = meta.findInt(p + "attention.key_length").orElse(dim / heads);
            RopeScaling scaling = new RopeScaling.None();
            if (meta.findString(p + "rope.scaling.type").filter("linear"::equals).isPresent()) {
                scaling = new RopeScaling.Linear(meta.getFloat(p + "rope.scaling.factor"));
            }
            return new ModelConfig(arch, dim, meta.getInt(p + "block_count"), heads, kvHeads, headDim,
                    meta.getInt(p + "feed_forward_length"), vocabSize, meta.findInt(p + "context_length").orElse(2048),
                    meta.findFloat(p + "attention.layer_norm_rms_epsilon").orElse(1e-5f),
                    meta.findFloat(p + "rope.freq_base").orElse(10000f),
                    meta.findInt(p + "rope.dimension_count").orElse(headDim), scaling, arch.neoxRope());
        } catch (GgufException | IllegalArgumentException e) {
            throw new ModelLoadException(source + ": bad hyper-parameters: " + e.getMessage(), e);
        }
    }
}
