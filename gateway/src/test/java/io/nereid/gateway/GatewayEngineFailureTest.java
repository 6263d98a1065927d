package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * "Kill the engine": failures injected on the engine thread of a real server (stories260K) through
 * its backend. A failed step ends only the requests in it (in-band after a streamed 200, a 500
 * before any byte of a whole response) and the server goes on; a backend that fails for good stops
 * the engine, after which every request still gets an answer and every probe says so.
 * The cases run in order: the last one leaves the engine dead.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayEngineFailureTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String STREAM = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":100,"
            + "\"ignore_eos\":true,\"stream\":true}";
    private static final String WHOLE = "{\"model\":\"stories260K\",\"prompt\":\"Lily\",\"max_tokens\":100,\"ignore_eos\":true}";
    private static final String GREEDY = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":12,"
            + "\"temperature\":0}";
    private static final AtomicReference<FaultInjectingBackend> backend = new AtomicReference<>();
    private static TestServer served;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        served = TestServer.withBackend(real -> {
            backend.set(new FaultInjectingBackend(real));
            return backend.get();
        }, "--threads", "1");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (served != null) {
            served.close();
        }
    }

    @Test
    @Order(1)
    void aFailedStepEndsOnlyTheRequestsInItAndTheServerGoesOn() throws Exception {
        FaultInjectingBackend b = backend.get();
        b.holdNext();
        CompletableFuture<HttpResponse<String>> stream = post("/v1/completions", STREAM);
        b.awaitHeld();                      // the stream's prefill is on the engine thread: its 200 is out
        CompletableFuture<HttpResponse<String>> whole = post("/v1/completions", WHOLE);
        awaitWaiting(1);                    // the whole request is queued behind it
        b.failTheOneAfterTheHeld();        // the step with the stream's decode and the whole request's prefill
        b.release();

        HttpResponse<String> s = stream.get(60, TimeUnit.SECONDS);
        assertEquals(200, s.statusCode());
        String[] frames = s.body().split("\n\n");
        assertEquals("data: [DONE]", frames[frames.length - 1], s.body());
        JsonNode error = JSON.readTree(frames[frames.length - 2].substring("data: ".length())).get("error");
        assertTrue(error.get("message").asText().contains("injected backend fault"), s.body());
        assertEquals("server_error", error.get("type").asText());

        HttpResponse<String> w = whole.get(60, TimeUnit.SECONDS);
        assertEquals(500, w.statusCode(), w.body());
        assertTrue(JSON.readTree(w.body()).get("error").get("message").asText().contains("injected backend fault"));

        assertEquals(200, get("/health").statusCode());
        assertEquals(200, get("/health/ready").statusCode());
        assertEquals(1.0, metric("nereid_engine_alive"));
        HttpResponse<String> again = post("/v1/completions", GREEDY).get(60, TimeUnit.SECONDS);
        assertEquals(200, again.statusCode(), again.body());
        assertEquals(TestModels.ONCE_UPON_A_TIME_12, JSON.readTree(again.body()).get("choices").get(0).get("text").asText());
    }

    @Test
    @Order(2)
    void aBackendBrokenForGoodStopsTheEngineAndEveryRequestAndProbeIsAnsweredTruthfully() throws Exception {
        backend.get().breakForGood();
        // Each request's step fails; the third failure in a row stops the engine. Every one is answered.
        List<HttpResponse<String>> failed = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            failed.add(post("/v1/completions", i % 2 == 0 ? WHOLE : STREAM).get(60, TimeUnit.SECONDS));
        }
        assertEquals(500, failed.get(0).statusCode(), failed.get(0).body());
        assertEquals(200, failed.get(1).statusCode());
        assertTrue(failed.get(1).body().contains("\"error\"") && failed.get(1).body().endsWith("data: [DONE]\n\n"),
                failed.get(1).body());
        assertEquals(500, failed.get(2).statusCode(), failed.get(2).body());

        String reason = served.server().engineFailure().get(10, TimeUnit.SECONDS);
        assertTrue(reason.contains("3 steps in a row"), reason);

        for (String probe : List.of("/health", "/health/ready")) {
            HttpResponse<String> r = get(probe);
            assertEquals(503, r.statusCode(), probe + ": " + r.body());
            assertEquals("engine_failed", JSON.readTree(r.body()).get("error").get("code").asText(), r.body());
        }
        assertEquals(0.0, metric("nereid_engine_alive"));
        for (String body : List.of(WHOLE, STREAM)) {
            HttpResponse<String> refused = post("/v1/completions", body).get(60, TimeUnit.SECONDS);
            assertEquals(503, refused.statusCode(), refused.body());
            JsonNode e = JSON.readTree(refused.body()).get("error");
            assertEquals("engine_failed", e.get("code").asText());
            assertTrue(e.get("message").asText().contains("restarted"), refused.body());
        }
        assertEquals(0.0, metric("vllm:num_requests_waiting"));
        assertEquals(0.0, metric("vllm:num_requests_running"));
        assertEquals(0, served.server().inflight());
    }

    private static CompletableFuture<HttpResponse<String>> post(String path, String body) {
        return client.sendAsync(HttpRequest.newBuilder(URI.create(served.url(path))).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(served.url(path))).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void awaitWaiting(int n) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (served.model().engine().stats().waiting() < n) {
            assertTrue(System.nanoTime() < until, "request not queued: " + served.model().engine().stats());
            Thread.sleep(5);
        }
    }

    /** The value of the first sample of {@code name} on /metrics. */
    private static double metric(String name) throws Exception {
        for (String line : get("/metrics").body().split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no metric " + name);
    }
}
