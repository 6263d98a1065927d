package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.nereid.engine.gguf.GgufArray;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.gguf.GgufWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mistral tool calling end to end: the parity model with its Llama 2 vocabulary's last seven pieces
 * turned into Mistral v0.3's control tokens ({@code [INST]}, {@code [TOOL_CALLS]}, ...), served with
 * Mistral Nemo's chat template (the syntax is detected from it). A forced call is the control token
 * {@code [TOOL_CALLS]} and a JSON list of calls; it comes back as {@code message.tool_calls} with
 * 9-character ids (the only ones Mistral's templates take back), streamed in OpenAI's delta shape;
 * a history with OpenAI-style ids renders (cut to their last 9 characters, as vLLM does).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class GatewayMistralToolCallTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> CONTROL = List.of("[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]",
            "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]");
    private static final String WEATHER = """
            {"type":"object","properties":{"city":{"type":"string","maxLength":12},
             "unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}""";

    @TempDir
    static Path dir;
    private static TestServer server;
    private static HttpClient client;
    private static Schema schema;
    private static int toolCallsId;

    @BeforeAll
    static void start() throws Exception {
        Path parity = TestModels.stories260K().resolveSibling("../parity/parity-a-llama-spm-q8_0.gguf").normalize();
        Path model = dir.resolve("mistral-vocab.gguf");
        try (GgufFile f = GgufFile.open(parity)) {
            List<String> tokens = new ArrayList<>(f.metadata().getStringArray("tokenizer.ggml.tokens"));
            int[] types = f.metadata().getIntArray("tokenizer.ggml.token_type");
            int first = tokens.size() - CONTROL.size();
            for (int k = 0; k < CONTROL.size(); k++) {
                tokens.set(first + k, CONTROL.get(k));
                types[first + k] = 3;   // CONTROL
            }
            toolCallsId = first + CONTROL.indexOf("[TOOL_CALLS]");
            GgufWriter w = new GgufWriter().putAll(f.metadata()).putStringArray("tokenizer.ggml.tokens", tokens)
                    .putArray("tokenizer.ggml.token_type", GgufArray.ofInt32(types));
            for (GgufTensorInfo t : f.tensors()) {
                w.addTensor(t.name(), t.type(), t.dims(), f.tensorData(t));
            }
            w.write(model);
        }
        String nemo = TestModels.stories260K().resolveSibling("../templates/mistralai-Mistral-Nemo-Instruct-2407.jinja")
                .normalize().toString();
        server = TestServer.start("--model", model.toString(), "--served-model-name", "m", "--chat-template", nemo,
                "--threads", "1");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(JSON.readTree(WEATHER));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> post(String path, Object body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(server.url(path))).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Map<String, Object> request(long seed, boolean stream, List<Object> messages) throws Exception {
        return new LinkedHashMap<>(Map.of("model", "m", "temperature", 1, "seed", seed, "max_tokens", 400, "stream", stream,
                "tool_choice", "required", "messages", messages, "tools", List.of(Map.of("type", "function", "function",
                        Map.of("name", "get_weather", "parameters", JSON.readValue(WEATHER, Map.class))))));
    }

    private static List<Object> ask() {
        return List.of(Map.of("role", "user", "content", "What is the weather in Paris?"));
    }

    private static void assertValid(String id, String name, String arguments) throws Exception {
        assertTrue(id.matches("[A-Za-z0-9]{9}"), "a Mistral call id: " + id);
        assertEquals("get_weather", name);
        JsonNode args = JSON.readTree(arguments);
        assertTrue(schema.validate(args).isEmpty(), arguments + " " + schema.validate(args));
    }

    @Test
    void aRequiredCallIsTheControlTokenAndValidCalls() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            HttpResponse<String> r = post("/v1/chat/completions", request(seed, false, ask()));
            String[] finish = new String[1];
            List<GatewayToolCallTest.Call> calls = GatewayToolCallTest.calls(r, finish);
            assertFalse(calls.isEmpty(), r.body());
            if (!finish[0].equals("length")) {
                assertEquals("tool_calls", finish[0], r.body());
                for (GatewayToolCallTest.Call c : calls) {
                    assertValid(c.id(), c.name(), c.arguments());
                }
            }
            JsonNode content = JSON.readTree(r.body()).get("choices").get(0).get("message").get("content");
            assertTrue(content == null || content.isNull() || content.asText().isEmpty(), "required: no text: " + r.body());
        }
    }

    @Test
    void theFirstGeneratedTokenIsTheControlToken() throws Exception {
        Map<String, Object> body = request(4, false, ask());
        body.put("max_tokens", 1);
        body.put("logprobs", true);
        HttpResponse<String> r = post("/v1/chat/completions", body);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode usage = JSON.readTree(r.body()).get("usage");
        assertEquals(1, usage.get("completion_tokens").asInt());
        // the one token generated is the control token (however unlikely the model finds it): the call has opened
        JsonNode choice = JSON.readTree(r.body()).get("choices").get(0);
        assertEquals("length", choice.get("finish_reason").asText());
        assertEquals("[TOOL_CALLS]", choice.get("logprobs").get("content").get(0).get("token").asText(), r.body());
        HttpResponse<String> tokens = post("/tokenize", Map.of("model", "m", "prompt", "[TOOL_CALLS]"));
        assertEquals(200, tokens.statusCode(), tokens.body());
        assertTrue(JSON.readTree(tokens.body()).get("tokens").toString().contains(String.valueOf(toolCallsId)),
                "the vocabulary's control token: " + tokens.body());
    }

    @Test
    void streamedCallsHaveOpenAisDeltaShape() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", request(5, true, ask()));
        assertFalse(r.body().contains("\"content\":\"["), "required: no text, the marker neither: " + r.body());
        String[] finish = new String[1];
        List<GatewayToolCallTest.Call> calls = GatewayToolCallTest.streamedCalls(r, finish);   // checks the delta shapes
        assertFalse(calls.isEmpty(), r.body());
        if (!"length".equals(finish[0])) {
            assertEquals("tool_calls", finish[0]);
            for (GatewayToolCallTest.Call c : calls) {
                assertValid(c.id(), c.name(), c.arguments());
            }
        }
    }

    @Test
    void aHistoryWithOpenAiStyleIdsRenders() throws Exception {
        String openAiId = "call_5f9d0e7a2b4c4e1f9a8b7c6d";
        List<Object> history = List.of(Map.of("role", "user", "content", "Weather in Paris?"),
                Map.of("role", "assistant", "content", "", "tool_calls", List.of(Map.of("id", openAiId, "type", "function",
                        "function", Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\",\"unit\":\"celsius\"}")))),
                Map.of("role", "tool", "tool_call_id", openAiId, "content", "{\"temperature\": 21}"),
                Map.of("role", "assistant", "content", "21 degrees."),
                Map.of("role", "user", "content", "And in Rome?"));
        HttpResponse<String> r = post("/v1/chat/completions", request(6, false, history));
        assertEquals(200, r.statusCode(), r.body());
        HttpResponse<String> tokens = post("/tokenize", Map.of("model", "m", "messages", history));
        assertEquals(200, tokens.statusCode(), tokens.body());
        JsonNode ids = JSON.readTree(tokens.body()).get("tokens");
        boolean control = false;
        for (JsonNode t : ids) {
            control |= t.asInt() == toolCallsId;
        }
        assertTrue(control, "the earlier call renders with the control token");
        HttpResponse<String> text = post("/detokenize", Map.of("model", "m", "tokens", ids));
        assertEquals(200, text.statusCode(), text.body());
        assertTrue(text.body().contains(openAiId.substring(openAiId.length() - 9)) && !text.body().contains(openAiId),
                "the id cut to its last 9 characters: " + text.body());
    }
}
