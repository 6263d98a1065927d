package io.nereid.engine.api;

/**
 * How a model makes embeddings, as its files declare it: GGUF {@code {arch}.pooling_type} (llama.cpp,
 * which L2-normalises what it serves), or a sentence-transformers directory ({@code modules.json}:
 * its Pooling module's {@code pooling_mode_*}, and whether a Normalize module follows).
 *
 * @param pooling   how the final hidden states become one vector
 * @param normalize whether the vector is L2-normalised
 */
public record EmbeddingSpec(Pooling pooling, boolean normalize) {
    /** vLLM's default for a decoder model served as an embedding model: last-token pooling, normalised. */
    public static final EmbeddingSpec DECODER_DEFAULT = new EmbeddingSpec(Pooling.LAST, true);
}
