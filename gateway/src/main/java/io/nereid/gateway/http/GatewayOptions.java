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
 */
public record GatewayOptions(List<String> apiKeys, List<String> allowedOrigins, Duration stallTimeout, boolean strict,
        Duration clientStallTimeout, Duration requestTimeout) {

    public static final GatewayOptions DEFAULTS = new GatewayOptions(List.of(), List.of(), Duration.ofSeconds(30));

    /** Not strict, client stall and request timeouts 30 s. */
    public GatewayOptions(List<String> apiKeys, List<String> allowedOrigins, Duration stallTimeout) {
        this(apiKeys, allowedOrigins, stallTimeout, false, Duration.ofSeconds(30), Duration.ofSeconds(30));
    }

    public GatewayOptions {
        apiKeys = List.copyOf(apiKeys);
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
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, s, clientStallTimeout, requestTimeout);
    }

    public GatewayOptions withClientStallTimeout(Duration d) {
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, strict, d, requestTimeout);
    }

    public GatewayOptions withRequestTimeout(Duration d) {
        return new GatewayOptions(apiKeys, allowedOrigins, stallTimeout, strict, clientStallTimeout, d);
    }
}
