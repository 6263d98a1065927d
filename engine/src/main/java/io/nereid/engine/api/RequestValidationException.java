package io.nereid.engine.api;

/**
 * The request can never be served as given (prompt + max_tokens beyond the context, more KV blocks
 * than the whole pool, bad parameters): a client error (HTTP 400). Thrown by
 * {@link Engine#submit} before anything is queued.
 */
public final class RequestValidationException extends EngineException {

    private final String param;

    public RequestValidationException(String param, String message) {
        super(message);
        this.param = param;
    }

    /** The request field at fault (OpenAI's {@code param}), or null. */
    public String param() {
        return param;
    }
}
