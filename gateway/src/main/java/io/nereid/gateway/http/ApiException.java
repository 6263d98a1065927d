package io.nereid.gateway.http;

/**
 * A request that fails with an HTTP status and OpenAI's error envelope
 * ({@code {"error":{"message","type","param","code"}}}). Thrown before any response byte is written.
 */
public final class ApiException extends RuntimeException {

    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private final long retryAfterSeconds;

    public ApiException(int status, String type, String param, String code, String message, long retryAfterSeconds) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    /** 400 invalid_request_error naming {@code param}. */
    public static ApiException invalid(String param, String message) {
        return new ApiException(400, "invalid_request_error", param, null, message, 0);
    }

    /** 400 for a field Nereid knows but does not implement yet. */
    public static ApiException unsupported(String param, String what) {
        return new ApiException(400, "invalid_request_error", param, "unsupported_parameter",
                "'" + param + "' is not supported by Nereid yet" + (what.isEmpty() ? "" : ": " + what), 0);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }

    /** Seconds for {@code Retry-After}, or 0 for none. */
    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
