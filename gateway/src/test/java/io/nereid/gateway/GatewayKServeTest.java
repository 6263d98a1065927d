package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The KServe v2 / Triton HTTP routes against a real server on loopback (stories260K), with raw
 * HTTP: greedy text is the same through {@code /v1/completions}, {@code /infer} (JSON and binary
 * tensors, a batch), {@code /generate} and {@code /generate_stream} (deltas concatenated);
 * metadata, readiness, configuration and statistics; bad tensors and unknown models are 4xx
 * before any 200 in KServe's {@code {"error": ...}} envelope; 20 concurrent streams; a timeout.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GatewayKServeTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "Once upon a time";
    private static TestServer server;
    private static HttpClient client;
    private static String model;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start("--threads", "1");
        model = server.model().name();
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(server.url(path))).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(server.url(path))).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode ok(HttpResponse<String> r) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    private static String completion(String prompt, int maxTokens) throws Exception {
        return ok(post("/v1/completions", JSON.writeValueAsString(Map.of("model", model, "prompt", prompt,
                "max_tokens", maxTokens, "temperature", 0)))).at("/choices/0/text").asText();
    }

    /** The concatenated text_output of a generate_stream response, checking every event's shape. */
    private static String streamed(HttpResponse<String> r) {
        return streamed(r, 2);
    }

    /** As {@link #streamed(HttpResponse)}, with at least {@code minEvents} (deltas that arrive together are one). */
    private static String streamed(HttpResponse<String> r, int minEvents) {
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        StringBuilder text = new StringBuilder();
        int events = 0;
        for (String block : r.body().split("\n\n")) {
            if (block.isBlank()) {
                continue;
            }
            assertTrue(block.startsWith("data: "), block);
            try {
                JsonNode e = JSON.readTree(block.substring(6));
                assertFalse(e.has("error"), block);
                assertEquals(model, e.get("model_name").asText());
                assertEquals("1", e.get("model_version").asText());
                text.append(e.get("text_output").asText());
            } catch (java.io.IOException e) {
                throw new AssertionError(block, e);
            }
            events++;
        }
        assertTrue(events >= minEvents, "several responses: " + r.body());
        return text.toString();
    }

    @Test
    void greedyTextIsTheSameThroughEveryRoute() throws Exception {
        String expected = completion(PROMPT, 12);
        assertFalse(expected.isEmpty());
        // generate: a key per input, or the same under parameters; the prompt in front unless excluded
        JsonNode g = ok(post("/v2/models/" + model + "/generate", """
                {"id":"r1","text_input":"%s","max_tokens":12,"temperature":0.0}""".formatted(PROMPT)));
        assertEquals(PROMPT + expected, g.get("text_output").asText());
        assertEquals("r1", g.get("id").asText());
        assertEquals(model, g.get("model_name").asText());
        JsonNode g2 = ok(post("/v2/models/" + model + "/versions/1/generate", """
                {"text_input":"%s","parameters":{"max_tokens":12,"temperature":0,"exclude_input_in_output":true}}"""
                .formatted(PROMPT)));
        assertEquals(expected, g2.get("text_output").asText());
        // generate_stream: deltas, concatenated
        assertEquals(expected, streamed(post("/v2/models/" + model + "/generate_stream", """
                {"text_input":"%s","max_tokens":12,"temperature":0}""".formatted(PROMPT))));
        // infer with JSON tensors, shaped as the TensorRT-LLM ensemble takes them
        JsonNode inf = ok(post("/v2/models/" + model + "/infer", """
                {"id":"t1","inputs":[
                  {"name":"text_input","datatype":"BYTES","shape":[1,1],"data":[["%s"]]},
                  {"name":"max_tokens","datatype":"INT32","shape":[1,1],"data":[[12]]},
                  {"name":"temperature","datatype":"FP32","shape":[1,1],"data":[[0.0]]},
                  {"name":"exclude_input_in_output","datatype":"BOOL","shape":[1,1],"data":[[true]]}],
                 "outputs":[{"name":"text_output"}]}""".formatted(PROMPT)));
        assertEquals("t1", inf.get("id").asText());
        JsonNode out = inf.at("/outputs/0");
        assertEquals("text_output", out.get("name").asText());
        assertEquals("BYTES", out.get("datatype").asText());
        assertEquals("[1,1]", out.get("shape").toString());
        assertEquals(expected, out.at("/data/0").asText());
    }

    @Test
    void aBatchOfPromptsIsOneRequestPerPrompt() throws Exception {
        String other = "The little dog";
        JsonNode inf = ok(post("/v2/models/" + model + "/infer", """
                {"inputs":[{"name":"text_input","datatype":"BYTES","shape":[2,1],"data":["%s","%s"]},
                  {"name":"max_tokens","datatype":"INT32","shape":[1],"data":[6]},
                  {"name":"temperature","datatype":"FP32","shape":[1],"data":[0]}]}""".formatted(PROMPT, other)));
        JsonNode out = inf.at("/outputs/0");
        assertEquals("[2,1]", out.get("shape").toString());
        assertEquals(PROMPT + completion(PROMPT, 6), out.at("/data/0").asText());
        assertEquals(other + completion(other, 6), out.at("/data/1").asText());
    }

    @Test
    void binaryTensorDataInAndOut() throws Exception {
        byte[] prompt = PROMPT.getBytes(StandardCharsets.UTF_8);
        ByteBuffer data = ByteBuffer.allocate(4 + prompt.length + 4 + 4).order(ByteOrder.LITTLE_ENDIAN);
        data.putInt(prompt.length).put(prompt).putInt(8).putFloat(0f);
        String header = """
                {"inputs":[{"name":"text_input","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":%d}},
                  {"name":"max_tokens","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}},
                  {"name":"temperature","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}],
                 "outputs":[{"name":"text_output","parameters":{"binary_data":true}}]}""".formatted(4 + prompt.length);
        byte[] json = header.getBytes(StandardCharsets.UTF_8);
        byte[] body = ByteBuffer.allocate(json.length + data.capacity()).put(json).put(data.array()).array();
        HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(URI.create(server.url("/v2/models/" + model + "/infer")))
                .header("Inference-Header-Content-Length", Integer.toString(json.length))
                .header("Content-Type", "application/octet-stream").POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), new String(r.body(), StandardCharsets.UTF_8));
        int jsonLength = Integer.parseInt(r.headers().firstValue("Inference-Header-Content-Length").orElseThrow());
        JsonNode head = JSON.readTree(new String(r.body(), 0, jsonLength, StandardCharsets.UTF_8));
        JsonNode out = head.at("/outputs/0");
        assertFalse(out.has("data"));
        int size = out.at("/parameters/binary_data_size").asInt();
        assertEquals(r.body().length - jsonLength, size);
        ByteBuffer b = ByteBuffer.wrap(r.body(), jsonLength, size).order(ByteOrder.LITTLE_ENDIAN);
        byte[] text = new byte[b.getInt()];
        b.get(text);
        assertEquals(PROMPT + completion(PROMPT, 8), new String(text, StandardCharsets.UTF_8));
    }

    @Test
    void logProbsAreReturnedWhenAskedFor() throws Exception {
        JsonNode g = ok(post("/v2/models/" + model + "/generate", """
                {"text_input":"%s","max_tokens":5,"temperature":0,"return_log_probs":true}""".formatted(PROMPT)));
        JsonNode lps = g.get("output_log_probs");
        assertEquals(5, lps.size());
        double sum = 0;
        for (JsonNode x : lps) {
            assertTrue(x.asDouble() <= 0);
            sum += x.asDouble();
        }
        assertEquals(sum, g.get("cum_log_probs").asDouble(), 1e-3);
    }

    @Test
    void metadataReadinessConfigurationAndStatistics() throws Exception {
        JsonNode server = ok(get("/v2"));
        assertEquals("nereid", server.get("name").asText());
        assertTrue(server.get("extensions").toString().contains("generate"));
        assertEquals(200, get("/v2/health/live").statusCode());
        assertEquals(200, get("/v2/health/ready").statusCode());
        assertEquals(200, get("/v2/models/" + model + "/ready").statusCode());
        assertEquals(200, get("/v2/models/" + model + "/versions/1/ready").statusCode());
        JsonNode meta = ok(get("/v2/models/" + model));
        assertEquals(model, meta.get("name").asText());
        assertEquals("[\"1\"]", meta.get("versions").toString());
        assertEquals("text_input", meta.at("/inputs/0/name").asText());
        assertEquals("BYTES", meta.at("/inputs/0/datatype").asText());
        assertEquals("text_output", meta.at("/outputs/0/name").asText());
        JsonNode config = ok(get("/v2/models/" + model + "/config"));
        assertTrue(config.at("/model_transaction_policy/decoupled").asBoolean());
        assertEquals("TYPE_STRING", config.at("/input/0/data_type").asText());
        long before = ok(get("/v2/models/" + model + "/stats")).at("/model_stats/0/inference_stats/success/count").asLong();
        ok(post("/v2/models/" + model + "/generate", "{\"text_input\":\"a\",\"max_tokens\":2}"));
        JsonNode stats = ok(get("/v2/models/" + model + "/stats")).at("/model_stats/0");
        assertEquals(model, stats.get("name").asText());
        assertEquals(before + 1, stats.at("/inference_stats/success/count").asLong());
        assertTrue(stats.at("/inference_stats/success/ns").asLong() > 0);
        assertTrue(stats.get("execution_count").asLong() > 0);
        assertEquals(200, get("/v2/models/stats").statusCode());
    }

    @Test
    void badRequestsAreRefusedBeforeAnyOutput() throws Exception {
        String infer = "/v2/models/" + model + "/infer";
        String generate = "/v2/models/" + model + "/generate";
        record Bad(String path, String body, int status, String says) {
        }
        for (Bad b : List.of(
                new Bad(generate, "{\"max_tokens\":4}", 400, "'text_input' is required"),
                new Bad(generate, "{\"text_input\":\"a\",\"max_tokens\":\"x\"}", 400, "'max_tokens' takes an integer"),
                new Bad(generate, "{\"text_input\":\"a\",\"colour\":1}", 400, "unexpected input 'colour'"),
                new Bad(generate, "{\"text_input\":\"a\",\"beam_width\":4}", 400, "beam search"),
                new Bad(generate, "{\"text_input\":\"a\",\"stream\":true}", 400, "/generate_stream"),
                new Bad(generate, "{\"text_input\":[\"a\",\"b\"]}", 400, "one prompt"),
                new Bad(generate, "{\"text_input\":\"a\",\"temperature\":-1}", 400, "temperature"),
                new Bad(generate, "{\"text_input\":\"a\",\"max_tokens\":100000}", 400, "context length"),
                new Bad(generate, "{\"text_input\":\"a\",\"bad_words\":[\"once upon a time\"]}", 400, "bad_words"),
                new Bad(generate, "not json", 400, "not valid JSON"),
                new Bad(infer, "{\"inputs\":[{\"name\":\"text_input\",\"datatype\":\"INT32\",\"shape\":[1],\"data\":[1]}]}",
                        400, "datatype INT32"),
                new Bad(infer, "{\"inputs\":[{\"name\":\"text_input\",\"datatype\":\"BYTES\",\"shape\":[2],\"data\":[\"a\"]}]}",
                        400, "shape [2]"),
                new Bad(infer, "{\"inputs\":[{\"name\":\"text_input\",\"datatype\":\"BYTES\",\"data\":[\"a\"]}]}", 400,
                        "'shape'"),
                new Bad(infer, "{\"inputs\":[]}", 400, "'text_input' is required"),
                new Bad(infer, "{\"inputs\":[{\"name\":\"text_input\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"a\"]}],"
                        + "\"outputs\":[{\"name\":\"logits\"}]}", 400, "unknown output 'logits'"),
                new Bad(infer, "{\"inputs\":[{\"name\":\"text_input\",\"datatype\":\"BYTES\",\"shape\":[1],"
                        + "\"parameters\":{\"binary_data_size\":99}}]}", 400, "binary_data_size"),
                new Bad("/v2/models/nope/infer", "{}", 404, "unknown model 'nope'"),
                new Bad("/v2/models/" + model + "/versions/7/generate", "{}", 404, "unknown version '7'"))) {
            HttpResponse<String> r = post(b.path(), b.body());
            assertEquals(b.status(), r.statusCode(), b.body() + " -> " + r.body());
            JsonNode e = JSON.readTree(r.body());
            assertTrue(e.get("error").asText().contains(b.says()), b.body() + " -> " + r.body());
        }
        assertEquals(404, get("/v2/models/nope").statusCode());
        assertEquals(404, get("/v2/models/nope/ready").statusCode());
        JsonNode none = JSON.readTree(get("/v2/no/such/route").body());
        assertTrue(none.get("error").asText().contains("no route"));
        // and the server keeps serving
        assertFalse(completion(PROMPT, 2).isEmpty());
    }

    @Test
    void twentyConcurrentStreamsEachGetTheirOwnText() throws Exception {
        List<String> prompts = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            prompts.add("Story " + i + ":");
        }
        List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
        for (String p : prompts) {
            futures.add(client.sendAsync(HttpRequest.newBuilder(URI.create(server.url("/v2/models/" + model
                    + "/generate_stream"))).timeout(Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.ofString(
                    "{\"text_input\":\"" + p + "\",\"max_tokens\":8,\"temperature\":0}")).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        for (int i = 0; i < prompts.size(); i++) {
            assertEquals(completion(prompts.get(i), 8), streamed(futures.get(i).get(120, TimeUnit.SECONDS), 1));
        }
    }

    @Test
    void aTimeoutThatPassesEndsTheRequestWithAnError() throws Exception {
        HttpResponse<String> r = post("/v2/models/" + model + "/generate", """
                {"text_input":"%s","max_tokens":100,"min_length":100,"parameters":{"timeout":1}}""".formatted(PROMPT));
        assertEquals(504, r.statusCode(), r.body());
        assertTrue(JSON.readTree(r.body()).get("error").asText().contains("timeout"));
        assertFalse(completion(PROMPT, 2).isEmpty());
    }

    @Test
    void theApiKeyGuardsV2ButNotItsHealth() throws Exception {
        try (TestServer guarded = TestServer.start("--threads", "1", "--api-key", "sekret")) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(guarded.url("/v2/models/"
                    + guarded.model().name()))).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, r.statusCode());
            assertTrue(JSON.readTree(r.body()).has("error"), r.body());
            assertEquals(200, client.send(HttpRequest.newBuilder(URI.create(guarded.url("/v2/health/ready"))).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(200, client.send(HttpRequest.newBuilder(URI.create(guarded.url("/v2/models/"
                    + guarded.model().name()))).header("Authorization", "Bearer sekret").GET().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
        }
    }
}
