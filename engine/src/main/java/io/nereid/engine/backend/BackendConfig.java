package io.nereid.engine.backend;

import io.nereid.engine.model.ModelSource;

/**
 * How to open a backend.
 *
 * @param model       the opened model files: config, tensors (the caller keeps and closes it)
 * @param kvPrecision element type of the KV cache
 * @param threads     compute threads the backend may use on the host
 */
public record BackendConfig(ModelSource model, KvPrecision kvPrecision, int threads) {

    public BackendConfig {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
    }
}
