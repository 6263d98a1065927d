package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** API keys and CORS on 127.0.0.1 with stories260K: {@code --api-key secret --allowed-origins https://app.example}. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayAuthTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer served;
    private static GatewayServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        served = TestServer.start("--max-num-seqs", "4", "--threads", "1", "--api-key", "secret", "--api-key", "other",
                "--allowed-origins", "https://app.example");
        server = served.server();
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (served != null) {
            served.close();
        }
    }

    private static HttpRequest.Builder at(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(Duration.ofSeconds(60));
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void everyRouteButHealthNeedsAKey() throws Exception {
        assertEquals(200, send(at("/health")).statusCode());
        assertEquals(200, send(at("/health/ready")).statusCode());
        for (String path : List.of("/v1/models", "/metrics")) {
            HttpResponse<String> r = send(at(path));
            assertEquals(401, r.statusCode(), path);
            io.nereid.gateway.http.OpenApiContract.assertValid("ErrorResponse", r.body());
            JsonNode e = JSON.readTree(r.body()).get("error");
            assertEquals("authentication_error", e.get("type").asText());
            assertEquals("invalid_api_key", e.get("code").asText());
            assertEquals(401, send(at(path).header("Authorization", "Bearer wrong")).statusCode(), path);
            assertEquals(200, send(at(path).header("Authorization", "Bearer secret")).statusCode(), path);
            assertEquals(200, send(at(path).header("Authorization", "Bearer other")).statusCode(), path);
        }
        HttpRequest.Builder tokenize = at("/tokenize").POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"hi\"}"));
        assertEquals(401, send(tokenize).statusCode());
        assertEquals(200, send(tokenize.header("Authorization", "Bearer secret")).statusCode());
        HttpRequest.Builder complete = at("/v1/completions").POST(HttpRequest.BodyPublishers.ofString(
                "{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":2}"));
        assertEquals(401, send(complete).statusCode());
        assertEquals(200, send(complete.header("Authorization", "Bearer secret")).statusCode());
    }

    @Test
    void anAllowedOriginGetsCorsHeadersAndItsPreflightAnsweredWithoutAKey() throws Exception {
        HttpResponse<String> pre = send(at("/v1/chat/completions").method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", "https://app.example").header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "authorization, content-type"));
        assertEquals(204, pre.statusCode(), pre.body());
        assertEquals("https://app.example", pre.headers().firstValue("Access-Control-Allow-Origin").orElse(null));
        assertEquals("authorization, content-type", pre.headers().firstValue("Access-Control-Allow-Headers").orElse(null));
        HttpResponse<String> get = send(at("/v1/models").header("Origin", "https://app.example")
                .header("Authorization", "Bearer secret"));
        assertEquals(200, get.statusCode());
        assertEquals("https://app.example", get.headers().firstValue("Access-Control-Allow-Origin").orElse(null));

        HttpResponse<String> other = send(at("/v1/models").header("Origin", "https://evil.example")
                .header("Authorization", "Bearer secret"));
        assertFalse(other.headers().firstValue("Access-Control-Allow-Origin").isPresent());
        assertEquals(403, send(at("/v1/models").method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", "https://evil.example").header("Access-Control-Request-Method", "GET")).statusCode());
    }
}
