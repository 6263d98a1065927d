package io.nereid.engine.api;

import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.tokenizer.Tokenizer;
import java.util.Optional;

/**
 * A model being served: the {@link Engine} over it and what a front end needs besides (tokenizer,
 * chat template, context, sizes for metrics). Made by {@link Engines#open}; {@link #close} stops the
 * engine (in-flight requests finish as cancelled), frees the backend and unmaps the model.
 * Thread-safe; the tokenizer and template are immutable.
 */
public interface LoadedModel extends AutoCloseable {

    Engine engine();

    Tokenizer tokenizer();

    /** The model's own chat template (compiled once), if it has one. */
    Optional<ChatTemplate> chatTemplate();

    /** The model's shape. */
    ModelInfo info();

    /** Prompt + generated tokens one sequence may hold: the context, capped by the KV cache. */
    int maxModelLen();

    /** The KV cache the engine allocated. */
    KvCacheInfo kvCache();

    /**
     * Host memory the backend took for copies of the weights on top of the model's files
     * (repacked K-quants on the CPU), 0 when it reads them in place.
     */
    default long weightCopyBytes() {
        return 0;
    }

    /**
     * How the model makes embeddings when its files say it is an embedding model (GGUF
     * {@code pooling_type}, sentence-transformers {@code modules.json}); empty otherwise.
     */
    default Optional<EmbeddingSpec> embedding() {
        return Optional.empty();
    }

    /** Whether this is the generated random-weight demo model. */
    boolean demo();

    @Override
    void close();

    /**
     * The model's shape, as front ends show it.
     *
     * @param architecture  {@code llama}, {@code qwen2}, {@code qwen3}
     * @param contextLength the model's own context length
     */
    record ModelInfo(String architecture, int layers, int dim, int vocabSize, int contextLength) {
    }

    /**
     * @param blocks    blocks in the pool (the null block included, as vLLM's num_gpu_blocks)
     * @param blockSize tokens per block
     * @param bytes     memory the blocks take
     * @param precision element type, e.g. {@code f16}
     */
    record KvCacheInfo(int blocks, int blockSize, long bytes, String precision) {
    }
}
