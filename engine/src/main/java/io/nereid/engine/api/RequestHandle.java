package io.nereid.engine.api;

/** A submitted request. Thread-safe. */
public interface RequestHandle {

    String id();

    /**
     * Stops the request: its choices finish with {@link FinishReason#CANCELLED} (unless already
     * finished) and its KV blocks are freed within one engine iteration. Idempotent; callable from
     * any thread.
     */
    void cancel();
}
