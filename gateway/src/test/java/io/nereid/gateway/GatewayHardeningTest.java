package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** stories260K on 127.0.0.1 with {@code --strict --client-stall-timeout 1}. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayHardeningTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static ServingModel model;
    private static GatewayServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        Path p = Path.of("").toAbsolutePath().getParent().resolveSibling("shared").resolve("fixtures/models/stories260K.gguf");
        ServeConfig c = ServeConfig.parse(List.of("--model", p.toString(), "--port", "0", "--max-num-seqs", "4",
                "--threads", "1", "--strict", "--client-stall-timeout", "1"), Map.of());
        model = ServingModel.open(c);
        server = GatewayServer.start(model, c.gateway(), "127.0.0.1", 0);
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (model != null) {
            model.close();
        }
    }

    static HttpRequest.Builder at(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(Duration.ofSeconds(60));
    }

    static HttpResponse<String> post(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = at(path).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void strictRejectsUnknownFieldsNamingThem() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":2,"
                + "\"unknown_thing\":1,\"other\":true}");
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals("invalid_request_error", e.get("type").asText());
        assertEquals("unknown_field", e.get("code").asText());
        assertEquals("unknown_thing", e.get("param").asText());
        assertTrue(e.get("message").asText().contains("unknown_thing, other"), r.body());
        assertFalse(r.headers().firstValue("x-nereid-ignored-fields").isPresent());

        HttpResponse<String> ok = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once\","
                + "\"max_tokens\":2,\"temperature\":0,\"user\":\"u\",\"stream_options\":null}");
        assertEquals(200, ok.statusCode(), ok.body());
    }
}
