package io.nereid.gateway.http;

import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * The first handler of every route: CORS and API keys.
 *
 * <p>CORS: a request whose {@code Origin} is in {@code allowedOrigins} (or any origin with
 * {@code *}) gets {@code Access-Control-Allow-Origin}; a preflight ({@code OPTIONS} with
 * {@code Access-Control-Request-Method}) is answered here, 204 for an allowed origin, 403 otherwise.
 * Auth: with keys configured, every route but {@code /health}, {@code /health/*}, {@code /v2/health/*}
 * and the playground's static page ({@code /}, {@code /playground/*}: no data; every API call it
 * makes sends the key the user entered) needs
 * {@code Authorization: Bearer KEY} (also {@code /metrics}, {@code /tokenize}, {@code /v1/models},
 * which vLLM leaves open), else 401 in the OpenAI envelope. Keys are compared in constant time.
 * Runs on the event loop; stateless after construction.
 */
final class AccessControl implements Handler<RoutingContext> {

    private final List<byte[]> keys;
    private final List<String> allowedOrigins;
    private final ErrorWriter errors;

    /** Writes an error response (the server's envelope writer). */
    interface ErrorWriter {
        void write(RoutingContext ctx, ApiException e);
    }

    AccessControl(GatewayOptions options, ErrorWriter errors) {
        this.keys = options.apiKeys().stream().map(k -> k.getBytes(StandardCharsets.UTF_8)).toList();
        this.allowedOrigins = options.allowedOrigins();
        this.errors = errors;
    }

    @Override
    public void handle(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        String origin = req.getHeader(HttpHeaders.ORIGIN);
        boolean originAllowed = origin != null && originAllowed(origin);
        if (originAllowed) {
            ctx.response().putHeader("Access-Control-Allow-Origin", allowedOrigins.contains("*") ? "*" : origin)
                    .putHeader("Vary", "Origin")
                    .putHeader("Access-Control-Expose-Headers", "x-nereid-ignored-fields, x-request-id, retry-after");
        }
        if (req.method() == HttpMethod.OPTIONS && req.getHeader("Access-Control-Request-Method") != null) {
            if (!originAllowed) {
                errors.write(ctx, new ApiException(403, "invalid_request_error", null, "cors_origin_not_allowed",
                        "origin '" + origin + "' is not allowed (see --allowed-origins)", 0));
                return;
            }
            String headers = req.getHeader("Access-Control-Request-Headers");
            ctx.response().setStatusCode(204).putHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
                    .putHeader("Access-Control-Allow-Headers", headers != null ? headers
                            : "Authorization, Content-Type, X-Request-Id")
                    .putHeader("Access-Control-Max-Age", "600").end();
            return;
        }
        if (!authorized(ctx.normalizedPath(), req.getHeader(HttpHeaders.AUTHORIZATION))) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer");
            errors.write(ctx, new ApiException(401, "authentication_error", null, "invalid_api_key",
                    req.getHeader(HttpHeaders.AUTHORIZATION) == null
                            ? "missing API key: send 'Authorization: Bearer YOUR_KEY'" : "invalid API key", 0));
            return;
        }
        ctx.next();
    }

    boolean originAllowed(String origin) {
        return allowedOrigins.contains("*") || allowedOrigins.contains(origin);
    }

    /** Whether a request for {@code path} with this {@code Authorization} header value may pass. */
    boolean authorized(String path, String authorization) {
        return path.equals("/health") || path.startsWith("/health/") || path.startsWith("/v2/health/")
                || path.equals("/") || path.startsWith("/playground/") || keyAccepted(authorization);
    }

    /**
     * Whether {@code authorization} ({@code Bearer KEY}, the HTTP header or gRPC metadata) carries
     * a configured key; always true without keys.
     */
    boolean keyAccepted(String authorization) {
        if (keys.isEmpty()) {
            return true;
        }
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        byte[] given = authorization.substring(7).trim().getBytes(StandardCharsets.UTF_8);
        boolean ok = false;
        for (byte[] k : keys) {
            ok |= MessageDigest.isEqual(k, given);   // no early exit: time does not depend on which key matched
        }
        return ok;
    }
}
