package io.nereid.engine.api;

import java.util.Locale;

/**
 * How an embedding is made from a prompt's final hidden states (after the output norm), as
 * sentence-transformers and llama.cpp ({@code pooling_type}) name them.
 */
public enum Pooling {
    /** The mean over every prompt position. */
    MEAN,
    /** The first position's (BERT's [CLS]). */
    CLS,
    /** The last position's (decoder embedding models, e.g. Qwen3-Embedding; vLLM's default for them). */
    LAST;

    /** {@code mean}, {@code cls} or {@code last}, or null for another name. */
    public static Pooling named(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "mean" -> MEAN;
            case "cls" -> CLS;
            case "last", "lasttoken", "last_token" -> LAST;
            default -> null;
        };
    }
}
