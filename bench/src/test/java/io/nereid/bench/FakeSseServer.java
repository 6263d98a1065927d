package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A trivial OpenAI-compatible streaming server on 127.0.0.1 (ephemeral port), for tests and the
 * load generator's capacity measurement: each request streams a role-only chunk, then exactly
 * {@code max_tokens} one-token content chunks ({@code delayMs} apart), a usage chunk and
 * {@code [DONE]}. A prompt containing "HANG" gets its head and one token, then nothing; "FAIL" gets
 * an HTTP 500. Handlers run on virtual threads.
 * <p>
 * With {@code tokenize}, it also answers {@code POST /tokenize} with a toy tokenizer: a word of more
 * than five letters is two tokens, any other word one; a prompt gets one BOS token unless
 * {@code add_special_tokens} is false; chat messages cost their contents plus 3 tokens each.
 * Without it, {@code /tokenize} is a 404, as on a server that lacks the route.
 */
final class FakeSseServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpServer server;
    private final long delayMs;
    final AtomicInteger requests = new AtomicInteger();
    /** Streams in progress now, and the most ever in progress at once. */
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    /** When > 0, each stream waits (at most 10 s) until this many requests have arrived before its tokens. */
    volatile int gate;
    private final Object gateLock = new Object();
    /** Every completion request body received, in arrival order. */
    final java.util.Queue<JsonNode> bodies = new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** {@code POST /tokenize} requests answered. */
    final AtomicInteger tokenizeCalls = new AtomicInteger();

    FakeSseServer(long delayMs) throws IOException {
        this(delayMs, false);
    }

    static {
        // The JDK server closes idle keep-alive connections beyond 200 (its default); with 256 streams
        // the client could then reuse a connection the server had just closed.
        System.setProperty("sun.net.httpserver.maxIdleConnections", "4096");
    }

    FakeSseServer(long delayMs, boolean tokenize) throws IOException {
        this.delayMs = delayMs;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/v1/models", ex -> reply(ex, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\"}]}"));
        server.createContext("/v1/chat/completions", ex -> stream(ex, true));
        server.createContext("/v1/completions", ex -> stream(ex, false));
        if (tokenize) {
            server.createContext("/tokenize", this::tokenize);
        }
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(b);
        }
    }

    private void tokenize(HttpExchange ex) throws IOException {
        tokenizeCalls.incrementAndGet();
        JsonNode body = JSON.readTree(ex.getRequestBody());
        int count;
        if (body.has("messages")) {
            count = 0;
            for (JsonNode m : body.get("messages")) {
                count += toyTokens(m.path("content").asText()) + 3;
            }
        } else {
            count = toyTokens(body.path("prompt").asText()) + (body.path("add_special_tokens").asBoolean(true) ? 1 : 0);
        }
        reply(ex, 200, "{\"count\":" + count + ",\"max_model_len\":4096,\"tokens\":[]}");
    }

    /** The toy tokenizer: words of more than five letters are two tokens. */
    static int toyTokens(String text) {
        int n = 0;
        for (String w : text.split("\\s+")) {
            n += w.isEmpty() ? 0 : w.length() > 5 ? 2 : 1;
        }
        return n;
    }

    private void stream(HttpExchange ex, boolean chat) throws IOException {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        try {
            streamCounted(ex, chat);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private void awaitGate() throws InterruptedException {
        synchronized (gateLock) {
            gateLock.notifyAll();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (requests.get() < gate && System.nanoTime() < deadline) {
                gateLock.wait(100);
            }
        }
    }

    private void streamCounted(HttpExchange ex, boolean chat) throws IOException {
        synchronized (gateLock) {
            requests.incrementAndGet();
            gateLock.notifyAll();
        }
        JsonNode body = JSON.readTree(ex.getRequestBody());
        bodies.add(body);
        String prompt = body.toString();
        if (prompt.contains("FAIL")) {
            reply(ex, 500, "{\"error\":{\"message\":\"asked to fail\"}}");
            return;
        }
        int n = body.path("max_tokens").asInt(16);
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream os = ex.getResponseBody()) {
            if (gate > 0) {
                awaitGate();
            }
            if (chat) {
                event(os, "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}");
            }
            for (int i = 0; i < n; i++) {
                sleep();
                event(os, chat ? "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok" + i + "\"}}]}"
                        : "{\"choices\":[{\"index\":0,\"text\":\" tok" + i + "\"}]}");
                if (prompt.contains("HANG")) {
                    Thread.sleep(60_000); // interrupted when the server stops
                }
            }
            event(os, "{\"choices\":[],\"usage\":{\"prompt_tokens\":" + prompt.split(" ").length
                    + ",\"completion_tokens\":" + n + ",\"total_tokens\":0}}");
            event(os, "[DONE]");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client went away (a timeout under test): nothing to do
        }
    }

    private void sleep() throws InterruptedException {
        if (delayMs > 0) {
            Thread.sleep(delayMs);
        }
    }

    private static void event(OutputStream os, String data) throws IOException {
        os.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        os.flush();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
