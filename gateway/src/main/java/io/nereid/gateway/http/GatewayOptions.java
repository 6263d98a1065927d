package io.nereid.gateway.http;

import java.time.Duration;
import java.util.List;

/**
 * HTTP-layer settings of {@link GatewayServer}.
 *
 * @param apiKeys        accepted {@code Authorization: Bearer} keys; empty: no authentication
 * @param allowedOrigins CORS origins answered with {@code Access-Control-Allow-Origin} ({@code *}: any); empty: none
 * @param stallTimeout   work pending and no engine step for this long: {@code /health/ready} answers 503
 */
public record GatewayOptions(List<String> apiKeys, List<String> allowedOrigins, Duration stallTimeout) {

    public static final GatewayOptions DEFAULTS = new GatewayOptions(List.of(), List.of(), Duration.ofSeconds(30));

    public GatewayOptions {
        apiKeys = List.copyOf(apiKeys);
        allowedOrigins = List.copyOf(allowedOrigins);
        if (apiKeys.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("an API key must not be blank");
        }
        if (stallTimeout.isNegative() || stallTimeout.isZero()) {
            throw new IllegalArgumentException("--stall-timeout must be positive, got " + stallTimeout.toSeconds() + " s");
        }
    }
}
