package io.nereid.engine.api;

import java.time.Duration;

/**
 * The engine cannot take the request now (HTTP 429 with {@code Retry-After}); trying again later
 * may succeed. Thrown by {@link Engine#submit} before anything is queued.
 */
public final class AdmissionException extends EngineException {

    /** Why the request was turned away. */
    public enum Reason { QUEUE_FULL, SHUTTING_DOWN }

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
