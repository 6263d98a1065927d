package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The SIGTERM path ({@link ServeCommand#shutdown}) while 5 streams are open: new requests get 503
 * draining, and every open stream still ends well-formed with {@code data: [DONE]}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayDrainTest {

    @Test
    void shutdownDrainsOpenStreamsAndRejectsNewRequests() throws Exception {
        Path p = TestModels.stories260K();
        ServeConfig c = ServeConfig.parse(List.of("--model", p.toString(), "--port", "0", "--max-num-seqs", "128",
                "--threads", "1", "--drain-timeout", "60"), Map.of());
        ServingModel model = ServingModel.open(c);
        GatewayServer server = GatewayServer.start(model, c.gateway(), "127.0.0.1", 0);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        int maxTokens = model.maxModelLen() - 16;
        // Big streams (24 choices with 20 logprobs each) to clients that do not read yet, so they stay open.
        String body = "{\"model\":\"" + c.servedModelName() + "\",\"prompt\":\"Once upon a time\",\"stream\":true,"
                + "\"n\":24,\"logprobs\":20,\"ignore_eos\":true,\"max_tokens\":" + maxTokens + "}";
        List<Socket> streams = new ArrayList<>();
        Thread shutdown = null;
        try {
            for (int i = 0; i < 5; i++) {
                Socket s = new Socket();
                s.setReceiveBufferSize(1024);
                s.connect(new InetSocketAddress("127.0.0.1", server.port()), 10_000);
                s.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                        + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                streams.add(s);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (server.inflight() < 5) {
                assertTrue(System.nanoTime() < deadline, "only " + server.inflight() + " streams admitted");
                Thread.sleep(20);
            }
            PrintStream log = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
            shutdown = Thread.ofPlatform().name("test-shutdown").start(
                    () -> ServeCommand.shutdown(server, c.drainTimeout(), log));

            // While the streams are open, new completions are refused with 503 draining.
            HttpResponse<String> r;
            do {
                r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
                        .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + c.servedModelName()
                                + "\",\"prompt\":\"x\",\"max_tokens\":1}")).build(), HttpResponse.BodyHandlers.ofString());
            } while (r.statusCode() == 200);
            assertEquals(503, r.statusCode(), r.body());
            assertEquals("draining", new ObjectMapper().readTree(r.body()).get("error").get("code").asText());
            io.nereid.gateway.http.OpenApiContract.assertValid("ErrorResponse", r.body());
            assertTrue(r.headers().firstValue("Retry-After").isPresent(), "a draining 503 says when to retry");
            assertTrue(server.inflight() > 0, "the streams ended before the 503 was observed");

            // Now read every stream to its end: each is a 200 that ends with [DONE] and the terminating chunk.
            for (Socket s : streams) {
                s.setSoTimeout(60_000);
                String raw = readAll(s.getInputStream());
                assertTrue(raw.startsWith("HTTP/1.1 200"), raw.substring(0, Math.min(200, raw.length())));
                assertTrue(raw.endsWith("data: [DONE]\n\n\r\n0\r\n\r\n"),
                        raw.substring(Math.max(0, raw.length() - 300)));
            }
            shutdown.join(60_000);
            assertTrue(!shutdown.isAlive(), "shutdown did not return");
            assertEquals(0, server.inflight());
        } finally {
            for (Socket s : streams) {
                s.close();
            }
            if (shutdown == null) {
                server.close();
                model.close();
            }
        }
    }

    private static String readAll(InputStream in) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[1 << 16];
        for (int n; (n = in.read(buf)) >= 0; ) {
            out.write(buf, 0, n);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * Drain timeout 0 with 5 streams queued behind each other in the engine (max-num-seqs = n): the
     * ones still running or waiting when the model closes end with an in-band {@code code:"shutdown"}
     * error then [DONE]; every stream is a well-formed 200.
     */
    @Test
    void streamsLeftAfterTheDrainTimeoutEndWithAShutdownErrorEvent() throws Exception {
        Path p = TestModels.stories260K();
        ServeConfig c = ServeConfig.parse(List.of("--model", p.toString(), "--port", "0", "--max-num-seqs", "24",
                "--threads", "1", "--drain-timeout", "0"), Map.of());
        ServingModel model = ServingModel.open(c);
        GatewayServer server = GatewayServer.start(model, c.gateway(), "127.0.0.1", 0);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        String body = "{\"model\":\"" + c.servedModelName() + "\",\"prompt\":\"Once upon a time\",\"stream\":true,"
                + "\"n\":24,\"ignore_eos\":true,\"max_tokens\":" + (model.maxModelLen() - 16) + "}";
        List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> streams = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            streams.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                    + "/v1/completions")).timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server.inflight() < 5) {
            assertTrue(System.nanoTime() < deadline, "only " + server.inflight() + " streams admitted");
            Thread.sleep(5);
        }
        ServeCommand.shutdown(server, c.drainTimeout(), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8));
        int aborted = 0;
        for (var f : streams) {
            HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().endsWith("data: [DONE]\n\n"), r.body().substring(Math.max(0, r.body().length() - 300)));
            String[] frames = r.body().split("\n\n");
            String last = frames[frames.length - 2];
            if (last.contains("\"error\"")) {
                assertEquals("shutdown", new ObjectMapper().readTree(last.substring(6)).get("error").get("code").asText());
                io.nereid.gateway.http.OpenApiContract.assertValid("TextCompletionStreamEvent", last.substring(6));
                aborted++;
            }
        }
        assertTrue(aborted > 0, "no stream was still running when the model closed");
        assertEquals(0, server.inflight());
    }
}
