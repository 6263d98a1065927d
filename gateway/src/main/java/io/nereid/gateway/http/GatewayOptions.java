package io.nereid.gateway.http;

import java.time.Duration;
import java.util.List;

/**
 * HTTP-layer settings of {@link GatewayServer}.
 *
 * @param apiKeys            accepted {@code Authorization: Bearer} keys; empty: no authentication
 * @param allowedOrigins     CORS origins answered with {@code Access-Control-Allow-Origin} ({@code *}: any); empty: none
 * @param stallTimeout       work pending and no engine step for this long: {@code /health/ready} answers 503
 * @param strict             unknown request fields are a 400 naming them (else ignored and named in
 *                           {@code x-nereid-ignored-fields})
 * @param clientStallTimeout a stream whose write queue stays full this long is dropped and its engine request cancelled
 * @param requestTimeout     a request whose body has not fully arrived this long after its head gets a 408 and its
 *                           connection is closed; a connection with no request in progress (new, or idle between
 *                           keep-alive requests) that delivers no complete request head for this long is closed
 * @param responses          where {@code /v1/responses} keeps the responses it stores
 * @param playground         whether {@code GET /} serves the chat playground ({@code --no-playground}: 404)
 */
public record GatewayOptions(List<String> apiKeys, List<String> allowedOrigins, Duration stallTimeout, boolean strict,
        Duration clientStallTimeout, Duration requestTimeout, ResponsesStore responses, boolean playground) {

    public static final GatewayOptions DEFAULTS = new GatewayOptions(List.of(), List.of(), Duration.ofSeconds(30));

    /**
     * The Responses API's store ({@code --responses-store}, {@code --responses-ttl},
     * {@code --responses-max-size}).
     *
     * @param file     the database file (H2; {@code .mv.db} is appended), or null: in memory, gone at exit
     * @param ttl      a stored response is deleted this long after it was created
     * @param maxBytes the stored responses' JSON may take this much; the oldest go first beyond it
     */
    public record ResponsesStore(java.nio.file.Path file, Duration ttl, long maxBytes) {
        /** In memory, 30 days, 256 MiB. */
        public static final ResponsesStore IN_MEMORY = new ResponsesStore(null, Duration.ofDays(30), 256L << 20);

        public ResponsesStore {
            if (ttl.isNegative() || ttl.isZero() || maxBytes <= 0) {
                throw new IllegalArgumentException("--responses-ttl and --responses-max-size must be positive");
            }
        }
    }

    /** Not strict, client stall and request timeouts 30 s, responses stored in memory. */
    public GatewayOptions(List<String> apiKeys, List<String> allowedOrigins, Duration stallTimeout) {
        this(apiKeys, allowedOrigins, stallTimeout, false, Duration.ofSeconds(30), Duration.ofSeconds(30),
                ResponsesStore.IN_MEMORY, true);
    }

    public GatewayOptions {
        apiKeys = List.copyOf(apiKeys);
        java.util.Objects.requireNonNull(responses, "responses");
        allowedOrigins = List.copyOf(allowedOrigins);
        if (apiKeys.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("an API key must not be blank");
        }
        if (stallTimeout.isNegative() || stallTimeout.isZero()) {
            throw new IllegalArgumentException("--engine-stall-timeout must be positive, got " + stallTimeout.toSeconds() + " s");
        }
        if (clientStallTimeout.isNegative() || clientStallTimeout.isZero()) {
            throw new IllegalArgumentException("--stall-timeout must be positive, got "
                    + clientStallTimeout.toMillis() + " ms");
        }
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("--request-timeout must be positive, got " + requestTimeout.toMillis()
                    + " ms");
        }
    }

    public GatewayOptions withStrict(boolean s) {
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, s, clientStallTimeout, requestTimeout, responses, playground);
    }

    public GatewayOptions withClientStallTimeout(Duration d) {
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, strict, d, requestTimeout, responses, playground);
    }

    public GatewayOptions withResponses(ResponsesStore r) {
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, strict, clientStallTimeout, requestTimeout, r,
                playground);
    }

    public GatewayOptions withRequestTimeout(Duration d) {
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, strict, clientStallTimeout, d, responses, playground);
    }
}
