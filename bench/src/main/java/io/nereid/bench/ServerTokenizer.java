package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

/**
 * The server's own tokenizer through {@code POST /tokenize} (vLLM's shape: {@code {"model",
 * "prompt"}} or {@code {"model", "messages"}} → {@code {"count", ...}}), so token counts are the
 * model's, not a guess. {@link #probe} answers null for a server without the route; the bench then
 * falls back to the usage the server reports. Used for the input sequence length of each request
 * (after the run, so it never loads the server during the measurement) and for sizing synthetic
 * prompts ({@link Workload}). Thread-safe.
 */
public final class ServerTokenizer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Requests in flight at once when counting a run's prompts. */
    private static final int PARALLEL = 8;

    private final URI uri;
    private final String model;
    private final String apiKey;
    private final HttpClient client;

    private ServerTokenizer(BenchConfig config) {
        this.uri = URI.create(config.url() + "/tokenize");
        this.model = config.model();
        this.apiKey = config.apiKey();
        this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
    }

    /** The tokenizer of {@code config}'s server, or null when it has no working {@code /tokenize}. */
    public static ServerTokenizer probe(BenchConfig config) throws InterruptedException {
        ServerTokenizer t = new ServerTokenizer(config);
        boolean works = false;
        try {
            works = t.countText("hello") > 0;
        } catch (IOException e) {
            // no /tokenize (404, 405, ...) or not this shape: use the reported usage
        } finally {
            if (!works) {
                t.close();   // also when interrupted or on a runtime failure
            }
        }
        return works ? t : null;
    }

    /** Tokens of {@code text} alone (no BOS/EOS). */
    public int countText(String text) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        body.put("prompt", text);
        body.put("add_special_tokens", false);
        return count(body);
    }

    /**
     * Tokens the server sees as the prompt of a completion request body: its {@code prompt} with the
     * model's special tokens, or its {@code messages} rendered through the chat template.
     */
    public int countPayload(String payload) throws IOException, InterruptedException {
        JsonNode request = JSON.readTree(payload);
        ObjectNode body = JSON.createObjectNode();
        body.put("model", model);
        if (request.has("messages")) {
            body.set("messages", request.get("messages"));
        } else {
            body.set("prompt", request.get("prompt"));
        }
        return count(body);
    }

    /**
     * {@code recorded} with each request's input tokens from {@code /tokenize}; null when any count
     * failed (the caller keeps the usage then, rather than mixing sources).
     */
    public List<RecordedRequest> withInputCounts(List<RecordedRequest> recorded) throws InterruptedException {
        int[] counts = new int[recorded.size()];
        Semaphore slots = new Semaphore(PARALLEL);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < recorded.size(); i++) {
            int k = i;
            slots.acquire();
            threads.add(Thread.ofVirtual().name("bench-tokenize-" + i).start(() -> {
                try {
                    counts[k] = countPayload(recorded.get(k).payload());
                } catch (IOException | InterruptedException | RuntimeException e) {
                    counts[k] = -1;
                } finally {
                    slots.release();
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        List<RecordedRequest> out = new ArrayList<>();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] < 0) {
                return null;
            }
            out.add(recorded.get(i).withInputTokens(counts[i]));
        }
        return out;
    }

    private int count(ObjectNode body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
        if (apiKey != null && !apiKey.isEmpty()) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(uri + ": HTTP " + r.statusCode());
        }
        JsonNode count = JSON.readTree(r.body()).get("count");
        if (count == null || !count.canConvertToInt()) {
            throw new IOException(uri + ": no \"count\" in the answer");
        }
        return count.asInt();
    }

    @Override
    public void close() {
        client.close();
    }
}
