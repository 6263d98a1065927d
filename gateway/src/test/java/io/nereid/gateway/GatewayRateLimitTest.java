package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.RateLimitException;
import com.openai.models.completions.CompletionCreateParams;
import io.nereid.engine.api.AdmissionException;
import io.nereid.gateway.http.GatewayServer;
import io.nereid.gateway.http.ModelService;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A full engine queue is a 429 {@code rate_limit_error} with {@code Retry-After}, streamed or not,
 * decided before any 200, counted by reason on /metrics; the OpenAI SDK sees a RateLimitException; the
 * next request after the queue frees up is served. The queue is made full deterministically: the served
 * model's engine (the real one, stories260K) is wrapped so that {@code submit} throws the engine's own
 * {@link AdmissionException} while {@link #full} is set (filling the real queue would depend on timing).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatewayRateLimitTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final AtomicBoolean full = new AtomicBoolean();
    private static ServingModel model;
    private static GatewayServer server;

    @BeforeAll
    static void start() throws Exception {
        ServeConfig c = ServeConfig.parse(List.of("--model", TestModels.stories260K().toString(), "--served-model-name",
                "stories260K", "--port", "0", "--threads", "1", "--chat-template", "chatml"), Map.of());
        model = ServingModel.open(c);
        server = GatewayServer.start(queueFullWhenSet(model), c.gateway(), "127.0.0.1", 0);
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

    @AfterEach
    void freeTheQueue() {
        full.set(false);
    }

    /** {@code m} with an engine whose submit throws QUEUE_FULL (retry after 3 s) while {@link #full} is set. */
    private static ModelService queueFullWhenSet(ModelService m) {
        return TestEngines.withSubmit(m, (request, sink) -> {
            if (full.get()) {
                throw new AdmissionException(AdmissionException.Reason.QUEUE_FULL, Duration.ofSeconds(3),
                        "the waiting queue is full (1 of 1 requests)");
            }
            return m.engine().submit(request, sink);
        });
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertRateLimited(HttpResponse<String> r) throws Exception {
        assertEquals(429, r.statusCode(), r.body());
        assertEquals("3", r.headers().firstValue("Retry-After").orElse(null));
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.headers().toString());
        JsonNode error = JSON.readTree(r.body()).get("error");
        assertEquals("rate_limit_error", error.get("type").asText());
        assertTrue(error.get("message").asText().contains("queue is full"), r.body());
        assertEquals("rate_limit_exceeded", error.get("code").asText());
    }

    private static double rejections() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        return r.body().lines().filter(l -> l.startsWith("nereid_admission_rejections_total{")
                && l.contains("reason=\"queue_full\"")).mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    @Test
    void aFullQueueIsA429WithRetryAfterStreamedOrNotAndTheNextRequestIsServed() throws Exception {
        double before = rejections();
        full.set(true);
        String completion = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0";
        String chat = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":4";
        assertRateLimited(post("/v1/completions", completion + "}"));
        assertRateLimited(post("/v1/completions", completion + ",\"stream\":true}"));   // before any 200: no event stream
        assertRateLimited(post("/v1/chat/completions", chat + ",\"stream\":true}"));
        assertEquals(before + 3, rejections(), 0.0);

        full.set(false);
        HttpResponse<String> ok = post("/v1/completions", completion + "}");
        assertEquals(200, ok.statusCode(), ok.body());
        assertEquals(4, JSON.readTree(ok.body()).get("usage").get("completion_tokens").asInt());
    }

    @Test
    void theOpenAiSdkSeesARateLimitException() {
        full.set(true);
        OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + server.port() + "/v1")
                .apiKey("unused").maxRetries(0).timeout(Duration.ofSeconds(30)).build();
        try {
            RateLimitException e = assertThrows(RateLimitException.class, () -> client.completions().create(
                    CompletionCreateParams.builder().model("stories260K").prompt("Once upon a time").maxTokens(4).build()));
            assertEquals(429, e.statusCode());
            assertEquals("3", e.headers().values("Retry-After").stream().findFirst().orElse(null));
        } finally {
            client.close();
        }
    }
}
