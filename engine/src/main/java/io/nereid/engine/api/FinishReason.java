package io.nereid.engine.api;

/** Why a choice ended normally; failures go through {@link TokenSink#onError} instead. */
public enum FinishReason {
    /** An end-of-sequence token, a stop token id or a stop string. */
    STOP,
    /** {@code max_tokens} reached. */
    LENGTH,
    /** {@link RequestHandle#cancel()} (e.g. the client went away). */
    CANCELLED,
    /** The request's deadline passed. */
    DEADLINE
}
