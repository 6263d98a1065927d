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
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code --reasoning-parser deepseek_r1} with DeepSeek-R1's chat template (the prompt opens
 * {@code <think>}): the thought comes back as {@code reasoning_content} (streamed as
 * {@code delta.reasoning_content}) and a json_schema constraint applies to the answer only (the
 * grammar of thought-then-answer is tested in the engine's GrammarMatcherTest).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GatewayReasoningTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"},"
            + "\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":9}},\"required\":[\"ok\",\"n\"],\"additionalProperties\":false}";
    private static TestServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        String parity = TestModels.stories260K().resolveSibling("../parity/parity-a-llama-spm-q8_0.gguf").normalize().toString();
        String r1 = TestModels.stories260K().resolveSibling("../templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja")
                .normalize().toString();
        server = TestServer.start("--model", parity, "--served-model-name", "m", "--chat-template", r1,
                "--reasoning-parser", "deepseek_r1", "--threads", "1");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> post(String path, Object body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(server.url(path))).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theThoughtIsReasoningContentAndTheConstraintWaitsForTheAnswer() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            for (boolean stream : new boolean[] {false, true}) {
                Map<String, Object> body = new LinkedHashMap<>(Map.of("model", "m", "temperature", 1, "seed", seed,
                        "max_tokens", 24, "stream", stream, "messages", List.of(Map.of("role", "user", "content", "Answer as JSON."))));
                body.put("response_format", Map.of("type", "json_schema", "json_schema",
                        Map.of("name", "a", "schema", JSON.readValue(SCHEMA, Map.class))));
                HttpResponse<String> r = post("/v1/chat/completions", body);
                assertEquals(200, r.statusCode(), r.body());
                String content;
                String reasoning;
                if (!stream) {
                    JsonNode m = JSON.readTree(r.body()).get("choices").get(0).get("message");
                    content = m.get("content").asText();
                    reasoning = m.get("reasoning_content").asText();
                } else {
                    StringBuilder cb = new StringBuilder();
                    StringBuilder rb = new StringBuilder();
                    for (String frame : r.body().split("\n\n")) {
                        if (frame.startsWith("data: {")) {
                            JsonNode choices = JSON.readTree(frame.substring(6)).get("choices");
                            if (!choices.isEmpty()) {
                                JsonNode d = choices.get(0).get("delta");
                                cb.append(d.path("content").asText(""));
                                rb.append(d.path("reasoning_content").asText(""));
                            }
                        }
                    }
                    content = cb.toString();
                    reasoning = rb.toString();
                }
                // A random model does not close its thought within 24 tokens: all of it is reasoning, and
                // the json_schema constraint has not forced '{' (it applies after </think>).
                assertFalse(reasoning.isEmpty(), r.body());
                assertFalse(reasoning.startsWith("{"), reasoning);
                assertEquals("", content, r.body());
            }
        }
    }

    @Test
    void onTheResponsesApiTheThoughtIsAReasoningItemWholeAndStreamed() throws Exception {
        Map<String, Object> body = new LinkedHashMap<>(Map.of("model", "m", "temperature", 0, "max_output_tokens", 16,
                "input", "Think.", "store", false));
        HttpResponse<String> whole = post("/v1/responses", body);
        assertEquals(200, whole.statusCode(), whole.body());
        JsonNode out = JSON.readTree(whole.body()).get("output");
        JsonNode item = out.get(0);
        assertEquals("reasoning", item.get("type").asText(), whole.body());
        String thought = item.get("content").get(0).get("text").asText();
        assertEquals("reasoning_text", item.get("content").get(0).get("type").asText());
        assertFalse(thought.isEmpty());
        assertEquals(0, item.get("summary").size(), "no summary unless reasoning.summary asks for one");
        // streamed: reasoning_text deltas of the same thought; with reasoning.summary, summary events instead
        body.put("stream", true);
        String stream = post("/v1/responses", body).body();
        StringBuilder deltas = new StringBuilder();
        for (String frame : stream.split("\n\n")) {
            int data = frame.indexOf("data: ");
            JsonNode e = JSON.readTree(frame.substring(data + 6));
            if (e.get("type").asText().equals("response.reasoning_text.delta")) {
                deltas.append(e.get("delta").asText());
            }
        }
        assertEquals(thought, deltas.toString());
        body.put("reasoning", Map.of("summary", "auto"));
        String summarized = post("/v1/responses", body).body();
        assertTrue(summarized.contains("event: response.reasoning_summary_text.delta"), summarized);
        assertTrue(summarized.contains("\"summary\":[{\"type\":\"summary_text\",\"text\":"), summarized);
    }
}
