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
 */
public record BackendConfig(ModelSource model, KvPrecision kvPrecision, int threads, boolean batchInvariant) {

    public BackendConfig {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
    }

    /** Without batch invariance: each batch shape computed in its fastest order. */
    public BackendConfig(ModelSource model, KvPrecision kvPrecision, int threads) {
        this(model, kvPrecision, threads, false);
    }
}
