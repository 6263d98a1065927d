package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class AccessControlTest {

    private static AccessControl with(List<String> keys, List<String> origins) {
        return new AccessControl(new GatewayOptions(keys, origins, Duration.ofSeconds(5)), (ctx, e) -> { });
    }

    @Test
    void withoutKeysEverythingIsOpen() {
        assertTrue(with(List.of(), List.of()).authorized("/v1/models", null));
    }

    @Test
    void withKeysOnlyHealthIsOpenAndAnyConfiguredKeyPasses() {
        AccessControl a = with(List.of("k1", "k2"), List.of());
        assertTrue(a.authorized("/health", null));
        assertTrue(a.authorized("/health/ready", null));
        for (String path : List.of("/v1/models", "/v1/chat/completions", "/tokenize", "/detokenize", "/metrics",
                "/openapi.json", "/healthz")) {
            assertFalse(a.authorized(path, null), path);
            assertFalse(a.authorized(path, "Bearer k3"), path);
            assertFalse(a.authorized(path, "Basic k1"), path);
            assertTrue(a.authorized(path, "Bearer k1"), path);
            assertTrue(a.authorized(path, "bearer k2"), path);
        }
    }

    @Test
    void originsMatchExactlyOrByWildcard() {
        assertFalse(with(List.of(), List.of()).originAllowed("https://a.example"));
        assertTrue(with(List.of(), List.of("https://a.example")).originAllowed("https://a.example"));
        assertFalse(with(List.of(), List.of("https://a.example")).originAllowed("https://b.example"));
        assertTrue(with(List.of(), List.of("*")).originAllowed("https://b.example"));
    }
}
