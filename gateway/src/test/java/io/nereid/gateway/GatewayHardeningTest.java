package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** stories260K on 127.0.0.1 with {@code --strict --stall-timeout 1}. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayHardeningTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer served;
    private static GatewayServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        served = TestServer.start("--max-num-seqs", "64", "--threads", "1", "--strict", "--stall-timeout", "1");
        server = served.server();
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (served != null) {
            served.close();
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

    @Test
    void strictAlsoCoversTokenizeAndDetokenize() throws Exception {
        HttpResponse<String> t = post("/tokenize", "{\"prompt\":\"Once\",\"extra\":1}");
        assertEquals(400, t.statusCode(), t.body());
        assertEquals("extra", JSON.readTree(t.body()).get("error").get("param").asText());
        assertEquals(200, post("/tokenize", "{\"prompt\":\"Once\",\"add_special_tokens\":false}").statusCode());
        HttpResponse<String> d = post("/detokenize", "{\"tokens\":[1,2],\"what\":0}");
        assertEquals(400, d.statusCode(), d.body());
        assertEquals("unknown_field", JSON.readTree(d.body()).get("error").get("code").asText());
        assertEquals(200, post("/detokenize", "{\"tokens\":[1,2]}").statusCode());
    }

    @Test
    void aValidClientRequestIdIsEchoedOnSuccessErrorsAndStreams() throws Exception {
        String body = "{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":2}";
        HttpResponse<String> ok = post("/v1/completions", body, "X-Request-Id", "my-id 42");
        assertEquals(200, ok.statusCode(), ok.body());
        assertEquals("my-id 42", ok.headers().firstValue("X-Request-Id").orElse(null));

        HttpResponse<String> sse = post("/v1/completions", body.replace("}", ",\"stream\":true}"), "X-Request-Id", "s-1");
        assertEquals(200, sse.statusCode(), sse.body());
        assertTrue(sse.body().endsWith("data: [DONE]\n\n"), sse.body());
        assertEquals("s-1", sse.headers().firstValue("X-Request-Id").orElse(null));

        HttpResponse<String> bad = post("/v1/completions", "{\"model\":\"nope\",\"prompt\":\"x\"}", "X-Request-Id", "e-1");
        assertEquals(404, bad.statusCode(), bad.body());
        assertEquals("e-1", bad.headers().firstValue("X-Request-Id").orElse(null));

        HttpResponse<String> missing = client.send(at("/no/such/route").header("X-Request-Id", "r-404").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, missing.statusCode());
        assertEquals("r-404", missing.headers().firstValue("X-Request-Id").orElse(null));
    }

    @Test
    void aMissingOrInvalidRequestIdIsReplacedByAGeneratedOne() throws Exception {
        String body = "{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":1}";
        String a = post("/v1/completions", body).headers().firstValue("X-Request-Id").orElseThrow();
        String b = post("/v1/completions", body).headers().firstValue("X-Request-Id").orElseThrow();
        assertTrue(a.matches("[0-9a-f]{32}"), a);
        assertFalse(a.equals(b));
        String tooLong = "x".repeat(129);
        String c = post("/v1/completions", body, "X-Request-Id", tooLong).headers().firstValue("X-Request-Id").orElseThrow();
        assertTrue(c.matches("[0-9a-f]{32}"), c);
        assertEquals("x".repeat(128), post("/v1/completions", body, "X-Request-Id", "x".repeat(128)).headers()
                .firstValue("X-Request-Id").orElseThrow());
        HttpResponse<String> health = client.send(at("/health").build(), HttpResponse.BodyHandlers.ofString());
        assertTrue(health.headers().firstValue("X-Request-Id").orElseThrow().matches("[0-9a-f]{32}"));
    }

    /**
     * A raw-socket client with a tiny receive buffer asks for a big stream and never reads: after the
     * 1 s client stall timeout the gateway cancels the engine request, closes the connection and counts it.
     */
    @Test
    void aStreamingClientThatNeverReadsIsDroppedAndItsRequestCancelled() throws Exception {
        JsonNode card = JSON.readTree(client.send(at("/v1/models/stories260K").build(),
                HttpResponse.BodyHandlers.ofString()).body());
        int maxTokens = card.get("max_model_len").asInt() - 16;
        String body = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"stream\":true,\"n\":64,"
                + "\"logprobs\":20,\"ignore_eos\":true,\"max_tokens\":" + maxTokens + "}";
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(1024);
            s.connect(new InetSocketAddress("127.0.0.1", server.port()), 10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "X-Request-Id: stall-test\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length
                    + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
            out.flush();
            // Never read; wait (bounded by the class timeout) for the gateway to count the stalled stream.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (metric("nereid_stalled_streams_total") < 1) {
                assertTrue(System.nanoTime() < deadline, "no stalled stream counted; running "
                        + metric("vllm:num_requests_running") + ", inflight " + server.inflight());
                Thread.sleep(100);
            }
            while (metric("vllm:num_requests_running") > 0 || server.inflight() > 0) {
                Thread.sleep(50);
            }
            // The connection was closed: draining what the kernel buffered ends in EOF (or a reset).
            s.setSoTimeout(30_000);
            InputStream in = s.getInputStream();
            byte[] buf = new byte[1 << 16];
            try {
                while (in.read(buf) >= 0) {
                    // discard
                }
            } catch (java.net.SocketException reset) {
                // a reset is a close too
            }
        }
        assertEquals(0, metric("vllm:num_requests_running"));
        assertEquals(0, server.inflight());
    }

    /** The value of the first sample of {@code name} on /metrics, or 0 if absent. */
    private static double metric(String name) throws Exception {
        String page = client.send(at("/metrics").build(), HttpResponse.BodyHandlers.ofString()).body();
        for (String line : page.split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return 0;
    }
}
