package io.nereid.gateway;

import static io.nereid.gateway.http.OpenApiContract.assertValid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.OpenApiContract;
import io.nereid.gateway.http.SseChunks;
import io.nereid.openapi.ErrorResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Real responses of the server (stories260K, chatml, 127.0.0.1) validate against their schemas in openapi.json. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayOpenApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "\"model\":\"stories260K\"";
    private static final String CHAT = "{" + MODEL + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":6,"
            + "\"logprobs\":true,\"top_logprobs\":2,\"n\":2";
    private static final String COMPLETION = "{" + MODEL + ",\"prompt\":\"Once upon a time\",\"max_tokens\":6,\"logprobs\":2,"
            + "\"stop\":[\"zzz\"]";
    private static TestServer served;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        served = TestServer.start("--chat-template", "chatml", "--threads", "1");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (served != null) {
            served.close();
        }
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        HttpResponse<String> r = client.send(b.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(r.headers().firstValue("x-request-id").isPresent(), "x-request-id on " + r.uri());
        return r;
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(served.url(path))));
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(served.url(path)))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    private static String ok(HttpResponse<String> r, String contentType) {
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith(contentType), r.headers().toString());
        return r.body();
    }

    private static void error(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
        assertValid("ErrorResponse", r.body());
    }

    /** The JSON of each data event before the final [DONE]. */
    private static List<JsonNode> events(HttpResponse<String> r) throws Exception {
        String body = ok(r, "text/event-stream");
        assertTrue(body.endsWith(SseChunks.DONE), body);
        List<JsonNode> out = new ArrayList<>();
        for (String frame : body.substring(0, body.length() - SseChunks.DONE.length()).split("\n\n")) {
            assertTrue(frame.startsWith("data: "), frame);
            out.add(JSON.readTree(frame.substring(6)));
        }
        return out;
    }

    @Test
    void wholeCompletionsMatchTheirSchemas() throws Exception {
        assertValid("ChatCompletion", ok(post("/v1/chat/completions", CHAT + "}"), "application/json"));
        HttpResponse<String> r = post("/v1/completions", COMPLETION + ",\"not_a_field\":1}");
        assertValid("TextCompletion", ok(r, "application/json"));
        assertEquals("not_a_field", r.headers().firstValue("x-nereid-ignored-fields").orElse(null));
        assertValid("TextCompletion", ok(post("/v1/completions", "{" + MODEL + ",\"prompt\":[1,2,3],\"max_tokens\":2}"),
                "application/json"));
    }

    @Test
    void everyStreamedChunkMatchesItsSchemaAndTheUsageChunkIsItsOwnKind() throws Exception {
        String usage = ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
        stream("/v1/chat/completions", CHAT + usage, "ChatCompletion");
        stream("/v1/completions", COMPLETION + usage, "TextCompletion");
        for (JsonNode e : events(post("/v1/completions", "{" + MODEL + ",\"prompt\":\"x\",\"max_tokens\":3,\"stream\":true}"))) {
            assertValid("TextCompletionChunk", e);
        }
    }

    /** Every event is a {@code KIND}Chunk but the last, a {@code KIND}UsageChunk; all are {@code KIND}StreamEvents. */
    private static void stream(String path, String body, String kind) throws Exception {
        List<JsonNode> events = events(post(path, body));
        for (JsonNode e : events.subList(0, events.size() - 1)) {
            assertValid(kind + "Chunk", e);
            assertValid(kind + "StreamEvent", e);
        }
        assertValid(kind + "UsageChunk", events.getLast());
        assertValid(kind + "StreamEvent", events.getLast());
        assertFalse(OpenApiContract.errors(kind + "Chunk", events.getLast()).isEmpty(), "the usage chunk is no content chunk");
    }

    @Test
    void theInBandErrorEventIsAStreamEventOfBothRoutes() throws Exception {
        String event = SseChunks.error(ErrorResponse.of("generation failed: x", "server_error", null, null));
        JsonNode payload = JSON.readTree(event.substring("data: ".length()));
        assertValid("ChatCompletionStreamEvent", payload);
        assertValid("TextCompletionStreamEvent", payload);
    }

    @Test
    void errorBodiesMatchTheEnvelope() throws Exception {
        error(post("/v1/completions", "{not json"), 400);
        error(post("/v1/chat/completions", CHAT + ",\"temperature\":3}"), 400);
        error(post("/v1/chat/completions", CHAT + ",\"tools\":[{\"type\":\"function\"}]}"), 400);
        error(post("/v1/completions", "{" + MODEL + ",\"prompt\":\"x\",\"max_tokens\":100000}"), 400);
        error(post("/v1/completions", "{\"model\":\"gpt-4\",\"prompt\":\"x\"}"), 404);
        error(get("/v1/models/gpt-4"), 404);
        error(get("/no/such/route"), 404);
        error(post("/tokenize", "{}"), 400);
        error(post("/detokenize", "{\"tokens\":[-1]}"), 400);
        error(post("/tokenize", "{\"prompt\":\"" + "x".repeat(9 << 20) + "\"}"), 413);
    }

    @Test
    void modelsTokenizeHealthAndMetricsMatchTheirSchemas() throws Exception {
        assertValid("ModelList", ok(get("/v1/models"), "application/json"));
        assertValid("Model", ok(get("/v1/models/stories260K"), "application/json"));
        assertValid("Tokens", ok(post("/tokenize", "{" + MODEL + ",\"prompt\":\"Once upon a time\"}"), "application/json"));
        assertValid("Tokens", ok(post("/tokenize", "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"),
                "application/json"));
        assertValid("DetokenizedPrompt", ok(post("/detokenize", "{\"tokens\":[1,2,3]}"), "application/json"));
        assertValid("Ready", ok(get("/health/ready"), "application/json"));
        assertEquals("", ok(get("/health"), ""));
        assertTrue(ok(get("/metrics"), "text/plain").contains("vllm:num_requests_running"));
    }

    @Test
    void everyOperationDocumentsTheRequestIdItsAuthErrorsAndItsBodyErrors() {
        JsonNode doc = OpenApiContract.document();
        List<String> operations = new ArrayList<>();
        doc.get("paths").properties().forEach(path -> path.getValue().properties().forEach(op -> {
            if (op.getKey().equals("parameters")) {
                return;
            }
            String at = op.getKey() + " " + path.getKey();
            operations.add(at);
            JsonNode responses = op.getValue().get("responses");
            responses.properties().forEach(r ->
                    assertTrue(OpenApiContract.resolve(r.getValue()).path("headers").has("x-request-id"), at + " " + r.getKey()));
            boolean open = op.getValue().has("security") && op.getValue().get("security").isEmpty();
            assertEquals(!open, responses.has("401"), at);
            assertEquals(path.getKey().startsWith("/health") || path.getKey().startsWith("/v2/health/")
                    || path.getKey().equals("/") || path.getKey().startsWith("/playground/"), open, at);
            if (op.getKey().equals("post")) {
                assertTrue(responses.has("400") && responses.has("413") && responses.has("404"), at);
                // the OpenAI routes ignore unknown fields (and name them); KServe's refuse unknown inputs
                assertEquals(!path.getKey().startsWith("/v2/"),
                        OpenApiContract.resolve(responses.get("200")).get("headers").has("x-nereid-ignored-fields"), at);
            }
        }));
        for (String completion : List.of("post /v1/completions", "post /v1/chat/completions")) {
            JsonNode responses = doc.at("/paths/" + completion.substring(5).replace("/", "~1") + "/post/responses");
            assertTrue(OpenApiContract.resolve(responses.get("429")).get("headers").has("Retry-After"), completion);
            assertTrue(responses.get("200").get("content").has("text/event-stream"), completion);
        }
        assertTrue(operations.size() >= 10, operations.toString());
        assertEquals("bearer", doc.at("/components/securitySchemes/bearer/scheme").asText());
    }
}
