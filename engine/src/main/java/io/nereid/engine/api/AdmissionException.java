package io.nereid.engine.api;

import java.time.Duration;

/**
 * The engine cannot take the request now (HTTP 429 with {@code Retry-After}, or 503 while it shuts down or after it
 * failed); trying again later, possibly on another replica, may succeed. Thrown by {@link Engine#submit} before
 * anything is queued.
 */
public final class AdmissionException extends EngineException {

    /** Why the request was turned away. */
    public enum Reason {
        /** The waiting queue is full (429). */
        QUEUE_FULL,
        /** The engine is closing (503). */
        SHUTTING_DOWN,
        /** The engine stopped after a failure and serves nothing more (503): see {@link EngineHealth#failure()}. */
        ENGINE_FAILED
    }

    private final Reason reason;
    private final Duration retryAfter;

    public AdmissionException(Reason reason, Duration retryAfter, String message) {
        super(message);
        this.reason = reason;
        this.retryAfter = retryAfter;
    }

    public Reason reason() {
        return reason;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
