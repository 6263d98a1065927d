package io.nereid.engine.api;

/**
 * How a model makes embeddings, as its files declare it: GGUF {@code {arch}.pooling_type} (llama.cpp,
 * which L2-normalises what it serves), or a sentence-transformers directory ({@code modules.json}:
 * its Pooling module's {@code pooling_mode_*}, and whether a Normalize module follows).
 *
 * @param pooling    how the final hidden states become one vector
 * @param normalize  whether the vector is L2-normalised
 * @param matryoshka the sizes the vector may be cut to ({@code dimensions}), as the model declares them
 *                   (HF {@code matryoshka_dimensions}; {@code is_matryoshka}: any size, an empty list); null:
 *                   the model declares none, only its full size is served
 */
public record EmbeddingSpec(Pooling pooling, boolean normalize, java.util.List<Integer> matryoshka) {
    /** vLLM's default for a decoder model served as an embedding model: last-token pooling, normalised. */
    public static final EmbeddingSpec DECODER_DEFAULT = new EmbeddingSpec(Pooling.LAST, true);

    /** No Matryoshka sizes. */
    public EmbeddingSpec(Pooling pooling, boolean normalize) {
        this(pooling, normalize, null);
    }

    public EmbeddingSpec {
        matryoshka = matryoshka == null ? null : java.util.List.copyOf(matryoshka);
    }

    /** Whether the vector may be cut to {@code dims} of {@code full} entries. */
    public boolean truncatesTo(int dims, int full) {
        return dims == full || (matryoshka != null && dims > 0 && dims <= full
                && (matryoshka.isEmpty() || matryoshka.contains(dims)));
    }
}
