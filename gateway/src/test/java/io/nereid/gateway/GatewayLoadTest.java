package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 200 concurrent clients on the demo model (max-num-seqs 256, so every one is admitted: no 429 is
 * expected): all streams are well-formed; and 200 clients that hang up after their first chunk
 * leave no request running or waiting and no KV block in use, each counted as a client disconnect
 * and an aborted request.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayLoadTest {

    private static final int CLIENTS = 200;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Held so the level set on it sticks: 200 "client disconnected" INFO lines are noise here. */
    private static final java.util.logging.Logger GATEWAY_LOG = java.util.logging.Logger.getLogger("io.nereid.gateway");

    private ServingModel model;
    private GatewayServer server;
    private HttpClient client;
    private String base;

    @BeforeEach
    void start() throws Exception {
        GATEWAY_LOG.setLevel(java.util.logging.Level.WARNING);
        ServeConfig c = ServeConfig.parse(List.of("--port", "0", "--max-num-seqs", "256", "--kv-cache-memory", "64MiB",
                "--threads", "1"), Map.of());
        model = ServingModel.open(c);
        server = GatewayServer.start(model, c.gateway(), "127.0.0.1", 0);
        base = "http://127.0.0.1:" + server.port();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(20))
                .build();
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
        model.close();
        GATEWAY_LOG.setLevel(null);
    }

    @Test
    void twoHundredConcurrentStreamsAreAllWellFormed() throws Exception {
        String body = "{\"model\":\"" + model.name() + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                + "\"max_tokens\":16,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
        List<CompletableFuture<HttpResponse<String>>> streams = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            streams.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        List<String> ids = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : streams) {
            HttpResponse<String> r = f.get(90, TimeUnit.SECONDS);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals("text/event-stream", r.headers().firstValue("Content-Type").orElse(""));
            ids.add(checkChatStream(r.body(), 16));
        }
        assertEquals(CLIENTS, ids.stream().distinct().count(), "chunk ids are not unique per stream");
        String metrics = scrape();
        assertEquals(CLIENTS, metric(metrics, "vllm:request_success_total{finished_reason=\"length\","));
        assertEquals(0, metric(metrics, "vllm:num_requests_running{"));
        assertEquals(0, metric(metrics, "vllm:num_requests_waiting{"));
    }

    /**
     * The chunk sequence of one streamed chat completion: the role chunk, content chunks, the last
     * choice chunk with finish_reason "length", the usage chunk, [DONE]; all share id, created and
     * model. Returns the id.
     */
    private String checkChatStream(String body, int maxTokens) throws Exception {
        assertTrue(body.endsWith("data: [DONE]\n\n"), body);
        String[] frames = body.substring(0, body.length() - "data: [DONE]\n\n".length()).split("\n\n");
        // role, at least one content chunk (the last carries finish_reason), usage: when the event
        // loop lags behind the engine, several steps' tokens reach it at once and go in one chunk
        assertTrue(frames.length >= 3, body);
        List<JsonNode> chunks = new ArrayList<>();
        for (String f : frames) {
            assertTrue(f.startsWith("data: "), body);
            JsonNode chunk = JSON.readTree(f.substring(6));
            assertEquals("chat.completion.chunk", chunk.get("object").asText(), f);
            chunks.add(chunk);
        }
        JsonNode first = chunks.getFirst();
        for (JsonNode chunk : chunks) {
            for (String shared : new String[] {"id", "created", "model"}) {
                assertEquals(first.get(shared), chunk.get(shared), body);
            }
        }
        assertEquals(model.name(), first.get("model").asText());
        JsonNode role = first.get("choices").get(0);
        assertEquals("assistant", role.get("delta").get("role").asText(), body);
        assertEquals("", role.get("delta").get("content").asText(), body);
        assertTrue(role.get("finish_reason").isNull(), body);
        JsonNode usage = chunks.getLast();
        assertEquals(0, usage.get("choices").size(), body);
        assertEquals(maxTokens, usage.get("usage").get("completion_tokens").asInt(), body);
        for (int i = 1; i < chunks.size() - 1; i++) {
            JsonNode choice = chunks.get(i).get("choices").get(0);
            assertEquals(0, choice.get("index").asInt());
            assertFalse(choice.get("delta").has("role"), body);
            boolean last = i == chunks.size() - 2;
            assertEquals(last ? "length" : null, choice.get("finish_reason").isNull() ? null
                    : choice.get("finish_reason").asText(), body);
        }
        return first.get("id").asText();
    }

    @Test
    void twoHundredClientsThatHangUpAfterTheFirstChunkLeaveNoKvBlockInUse() throws Exception {
        // Long generations (the whole context): the requests end only because their clients went away.
        String body = "{\"model\":\"" + model.name() + "\",\"prompt\":\"Hello\",\"stream\":true,\"ignore_eos\":true,"
                + "\"max_tokens\":" + (model.maxModelLen() - 16) + "}";
        byte[] request = ("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII);
        List<Future<String>> clients = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(threads.submit(() -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 20_000);
                        s.setSoTimeout(60_000);
                        s.getOutputStream().write(request);
                        return untilFirstChunk(s.getInputStream());
                    }
                }));
            }
            for (Future<String> f : clients) {
                String head = f.get(90, TimeUnit.SECONDS);
                assertTrue(head.startsWith("HTTP/1.1 200"), head);
                assertTrue(head.contains("\"object\":\"text_completion\""), head);
            }
        }
        // Every engine request is cancelled within an iteration of its disconnect; poll, bounded.
        String metrics = scrape();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (metric(metrics, "vllm:num_requests_running{") + metric(metrics, "vllm:num_requests_waiting{")
                + metric(metrics, "vllm:kv_cache_usage_perc{") > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
            metrics = scrape();
        }
        assertEquals(0, metric(metrics, "vllm:num_requests_running{"), metrics);
        assertEquals(0, metric(metrics, "vllm:num_requests_waiting{"), metrics);
        assertEquals(0, metric(metrics, "vllm:kv_cache_usage_perc{"), metrics);
        assertEquals(CLIENTS, metric(metrics, "nereid_client_disconnects_total{"), metrics);
        assertEquals(CLIENTS, metric(metrics, "vllm:request_success_total{finished_reason=\"abort\","), metrics);
        assertEquals(0, metric(metrics, "vllm:request_success_total{finished_reason=\"length\","), metrics);
        assertEquals(0, server.inflight());
        // The serving threads' CPU time is on the page too (the event loop did all the HTTP work here).
        assertTrue(metric(metrics, "nereid_thread_cpu_seconds_total{group=\"event-loop\"") > 0, metrics);
        assertTrue(metric(metrics, "nereid_thread_cpu_seconds_total{group=\"engine\"") > 0, metrics);
    }

    /** Reads the response head and its first SSE event ("data: ...\n\n"); returns what was read. */
    private static String untilFirstChunk(InputStream in) throws Exception {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        while (true) {
            int n = in.read(buf);
            if (n < 0) {
                fail("the stream ended before its first chunk: " + seen.toString(StandardCharsets.UTF_8));
            }
            seen.write(buf, 0, n);
            String s = seen.toString(StandardCharsets.UTF_8);
            int data = s.indexOf("data: ");
            if (data >= 0 && s.indexOf("\n\n", data) > 0 || !s.startsWith("HTTP/1.1 200") && s.contains("\r\n\r\n{")) {
                return s;
            }
        }
    }

    private String scrape() throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(base + "/metrics"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    /** The value of the one sample whose line starts with {@code prefix} (name and the first labels). */
    private static double metric(String page, String prefix) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(prefix) + "[^}\\n]*} (\\S+)$").matcher(page);
        assertTrue(m.find(), () -> "no sample " + prefix + " in\n" + page);
        double v = Double.parseDouble(m.group(1));
        assertFalse(m.find(), () -> "several samples " + prefix);
        return v;
    }
}
