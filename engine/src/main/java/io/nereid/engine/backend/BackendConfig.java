package io.nereid.engine.backend;

import io.nereid.engine.model.ModelSource;

/**
 * How to open a backend.
 *
 * @param model          the opened model files: config, tensors (the caller keeps and closes it)
 * @param kvPrecision    element type of the KV cache
 * @param threads        compute threads the backend may use on the host
 * @param batchInvariant a token's logits must be the same bits whatever else shares its step
 *                       ({@code --deterministic}): one reduction order for every batch shape, at
 *                       some cost in single-sequence decode speed. A backend that cannot promise
 *                       it refuses to open with the reason.
 * @param eager          {@code --enforce-eager}, as vLLM's: every kernel launched as the step runs, never a
 *                       recorded CUDA graph (a backend that records none, as the CPU's, has nothing to do)
 */
public record BackendConfig(ModelSource model, KvPrecision kvPrecision, int threads, boolean batchInvariant,
        boolean eager) {

    public BackendConfig {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
    }

    /** Graphs where the backend records them. */
    public BackendConfig(ModelSource model, KvPrecision kvPrecision, int threads, boolean batchInvariant) {
        this(model, kvPrecision, threads, batchInvariant, false);
    }

    /** Without batch invariance: each batch shape computed in its fastest order. */
    public BackendConfig(ModelSource model, KvPrecision kvPrecision, int threads) {
        this(model, kvPrecision, threads, false, false);
    }
}
