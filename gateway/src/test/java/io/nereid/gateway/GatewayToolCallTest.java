package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Tool calling end to end: a generated model with the llama vocabulary served with Qwen 3's chat
 * template (Hermes {@code <tool_call>} syntax, detected from the template), sampled at
 * temperature 1. Forced calls (required, a named function) come back as {@code message.tool_calls}
 * whose arguments validate against the function's schema, {@code finish_reason: "tool_calls"};
 * streamed as OpenAI streams them (index, id, type and name first, then argument fragments);
 * {@code parallel_tool_calls: false} gives one call; tool messages in the history render; the
 * OpenAI Java SDK reads typed calls; bad tools are a 400 before the 200.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class GatewayToolCallTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String WEATHER = """
            {"type":"object","properties":{"city":{"type":"string","maxLength":12},
             "unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}""";
    private static final String TIME = """
            {"type":"object","properties":{"zone":{"enum":["UTC","CET","PST"]},"hour24":{"type":"boolean"}},
             "required":["zone"],"additionalProperties":false}""";

    private static TestServer server;
    private static HttpClient client;
    private static Map<String, Schema> schemas;

    @BeforeAll
    static void start() throws Exception {
        String parity = TestModels.stories260K().resolveSibling("../parity/parity-a-llama-spm-q8_0.gguf").normalize().toString();
        String qwen3 = TestModels.stories260K().resolveSibling("../templates/Qwen-Qwen3.jinja").normalize().toString();
        server = TestServer.start("--model", parity, "--served-model-name", "m", "--chat-template", qwen3, "--threads", "1");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        SchemaRegistry r = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
        schemas = Map.of("get_weather", r.getSchema(JSON.readTree(WEATHER)), "get_time", r.getSchema(JSON.readTree(TIME)));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static List<Object> tools() throws Exception {
        return List.of(
                Map.of("type", "function", "function", Map.of("name", "get_weather", "description", "Weather in a city",
                        "parameters", JSON.readValue(WEATHER, Map.class))),
                Map.of("type", "function", "function", Map.of("name", "get_time", "parameters", JSON.readValue(TIME, Map.class))));
    }

    private static HttpResponse<String> post(Map<String, Object> body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(server.url("/v1/chat/completions")))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Map<String, Object> request(long seed, boolean stream, Object toolChoice, Boolean parallel) throws Exception {
        Map<String, Object> body = new LinkedHashMap<>(Map.of("model", "m", "temperature", 1, "seed", seed, "max_tokens", 600,
                "stream", stream, "tools", tools(), "messages",
                List.of(Map.of("role", "user", "content", "What is the weather in Paris?"))));
        if (toolChoice != null) {
            body.put("tool_choice", toolChoice);
        }
        if (parallel != null) {
            body.put("parallel_tool_calls", parallel);
        }
        return body;
    }

    /** A call read from a response: name, arguments text. */
    record Call(String id, String name, String arguments) {
    }

    private static void assertValidCall(Call c) throws Exception {
        assertTrue(c.id().startsWith("call_"), c.id());
        Schema s = schemas.get(c.name());
        assertNotNull(s, "a declared function: " + c.name());
        JsonNode args = JSON.readTree(c.arguments());
        assertTrue(s.validate(args).isEmpty(), c.name() + " " + c.arguments() + " " + s.validate(args));
    }

    /** The calls and finish reason of a whole response. */
    static List<Call> calls(HttpResponse<String> r, String[] finish) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        JsonNode choice = JSON.readTree(r.body()).get("choices").get(0);
        finish[0] = choice.get("finish_reason").asText();
        List<Call> out = new ArrayList<>();
        JsonNode tc = choice.get("message").get("tool_calls");
        if (tc != null) {
            for (JsonNode c : tc) {
                assertEquals("function", c.get("type").asText());
                out.add(new Call(c.get("id").asText(), c.get("function").get("name").asText(), c.get("function").get("arguments").asText()));
            }
        }
        return out;
    }

    /** The calls and finish reason of a stream, checking OpenAI's delta shapes. */
    static List<Call> streamedCalls(HttpResponse<String> r, String[] finish) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        Map<Integer, String[]> calls = new TreeMap<>();   // index -> id, name, arguments
        for (String frame : r.body().split("\n\n")) {
            if (!frame.startsWith("data: {")) {
                continue;
            }
            JsonNode choices = JSON.readTree(frame.substring(6)).get("choices");
            if (choices.isEmpty()) {
                continue;
            }
            JsonNode c = choices.get(0);
            if (c.hasNonNull("finish_reason")) {
                finish[0] = c.get("finish_reason").asText();
            }
            JsonNode tc = c.get("delta").get("tool_calls");
            if (tc == null) {
                continue;
            }
            for (JsonNode d : tc) {
                int index = d.get("index").asInt();
                String[] call = calls.get(index);
                if (call == null) {
                    assertTrue(d.hasNonNull("id") && "function".equals(d.path("type").asText())
                            && d.path("function").hasNonNull("name"), "a call's first delta has id, type and name: " + d);
                    assertEquals("", d.get("function").get("arguments").asText());
                    calls.put(index, new String[] {d.get("id").asText(), d.get("function").get("name").asText(), ""});
                } else {
                    assertTrue(!d.has("id") && !d.path("function").has("name"), "later deltas carry arguments only: " + d);
                    call[2] += d.get("function").get("arguments").asText();
                }
            }
        }
        List<Call> out = new ArrayList<>();
        for (String[] c : calls.values()) {
            out.add(new Call(c[0], c[1], c[2]));
        }
        return out;
    }

    @Test
    void requiredAndNamedChoicesForceCallsThatValidate() throws Exception {
        int finished = 0;
        for (long seed = 1; seed <= 3; seed++) {
            for (boolean stream : new boolean[] {false, true}) {
                String[] finish = new String[1];
                HttpResponse<String> r = post(request(seed, stream, "required", null));
                List<Call> calls = stream ? streamedCalls(r, finish) : calls(r, finish);
                assertTrue(!calls.isEmpty(), r.body());
                // parallel calls at temperature 1 may go on past max_tokens (the last call then cut short)
                assertTrue(Set.of("tool_calls", "length").contains(finish[0]), finish[0]);
                if (finish[0].equals("tool_calls")) {
                    finished++;
                    for (Call c : calls) {
                        assertValidCall(c);
                    }
                } else {
                    for (Call c : calls.subList(0, calls.size() - 1)) {
                        assertValidCall(c);
                    }
                }
                if (!stream) {
                    assertTrue(JSON.readTree(r.body()).get("choices").get(0).get("message").get("content").isNull(), r.body());
                }
                r = post(request(seed, stream, Map.of("type", "function", "function", Map.of("name", "get_time")), false));
                calls = stream ? streamedCalls(r, finish) : calls(r, finish);
                assertEquals(1, calls.size(), "parallel_tool_calls false: one call");
                assertEquals("get_time", calls.get(0).name());
                assertValidCall(calls.get(0));
                assertEquals("tool_calls", finish[0]);
            }
        }
        assertTrue(finished >= 4, "most forced parallel calls end within max_tokens: " + finished + " of 6");
    }

    @Test
    void autoLetsTheModelWriteTextOrCall() throws Exception {
        for (long seed = 1; seed <= 4; seed++) {
            String[] finish = new String[1];
            List<Call> calls = calls(post(request(seed, false, "auto", null)), finish);
            for (Call c : calls) {
                assertValidCall(c);
            }
            assertTrue(Set.of("stop", "length", "tool_calls").contains(finish[0]), finish[0]);
            assertEquals(!calls.isEmpty() && !finish[0].equals("length"), finish[0].equals("tool_calls"));
        }
    }

    @Test
    void toolMessagesInTheHistoryRenderAndNoneMeansText() throws Exception {
        Map<String, Object> body = request(5, false, "none", null);
        body.put("messages", List.of(Map.of("role", "user", "content", "Weather in Paris?"),
                Map.of("role", "assistant", "content", "", "tool_calls", List.of(Map.of("id", "call_1", "type", "function",
                        "function", Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\",\"unit\":\"celsius\"}")))),
                Map.of("role", "tool", "tool_call_id", "call_1", "content", "{\"temperature\": 21}")));
        body.put("max_tokens", 8);
        HttpResponse<String> r = post(body);
        assertEquals(200, r.statusCode(), r.body());
        JsonNode message = JSON.readTree(r.body()).get("choices").get(0).get("message");
        assertTrue(message.get("tool_calls") == null, "tool_choice none: no calls");
        HttpResponse<String> tokens = client.send(HttpRequest.newBuilder(URI.create(server.url("/tokenize")))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(
                        Map.of("model", "m", "messages", body.get("messages"))))).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, tokens.statusCode(), tokens.body());
    }

    @Test
    void chatTemplateKwargsReachTheTemplate() throws Exception {
        // Qwen 3's template writes an empty thought into the prompt when enable_thinking is false
        int[] prompt = new int[2];
        for (int k = 0; k < 2; k++) {
            Map<String, Object> body = new LinkedHashMap<>(Map.of("model", "m", "max_tokens", 1, "messages",
                    List.of(Map.of("role", "user", "content", "Hi"))));
            if (k == 1) {
                body.put("chat_template_kwargs", Map.of("enable_thinking", false));
            }
            HttpResponse<String> r = post(body);
            assertEquals(200, r.statusCode(), r.body());
            prompt[k] = JSON.readTree(r.body()).get("usage").get("prompt_tokens").asInt();
        }
        assertTrue(prompt[1] > prompt[0], "enable_thinking false adds <think></think>: " + prompt[0] + " vs " + prompt[1]);
        Map<String, Object> bad = new LinkedHashMap<>(Map.of("model", "m", "messages", List.of(Map.of("role", "user", "content", "Hi")),
                "chat_template_kwargs", Map.of("messages", List.of())));
        HttpResponse<String> r = post(bad);
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("chat_template_kwargs", JSON.readTree(r.body()).get("error").get("param").asText());
    }

    /** What the OpenAI Java SDK derives a function tool from. */
    public static class GetWeather {
        public Unit unit;
        public boolean tomorrow;
    }

    public enum Unit { CELSIUS, FAHRENHEIT }

    @Test
    void theOpenAiJavaSdkReadsTypedToolCalls() {
        OpenAIClient sdk = OpenAIOkHttpClient.builder().baseUrl(server.url("/v1")).apiKey("unused")
                .timeout(Duration.ofSeconds(60)).build();
        for (long seed = 1; seed <= 2; seed++) {
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("m")
                    .addUserMessage("Weather tomorrow?").addTool(GetWeather.class)
                    .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED).parallelToolCalls(false).temperature(1.0).seed(seed)
                    .maxCompletionTokens(800)
                    .build();
            ChatCompletion c = sdk.chat().completions().create(params);
            assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, c.choices().get(0).finishReason());
            ChatCompletionMessageFunctionToolCall call = c.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction();
            assertEquals("GetWeather", call.function().name());
            GetWeather w = call.function().arguments(GetWeather.class);
            assertNotNull(w.unit);
        }
    }

    private static final String ANSWER = """
            {"type":"object","properties":{"sky":{"enum":["sunny","rainy"]},"degrees":{"type":"integer","minimum":-40,
             "maximum":50}},"required":["sky","degrees"],"additionalProperties":false}""";

    @Test
    void responseFormatWithToolsAnswersInItsSchemaOrCalls() throws Exception {
        Schema answer = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(JSON.readTree(ANSWER));
        int answered = 0;
        int called = 0;
        for (long seed = 1; seed <= 8; seed++) {
            boolean stream = seed % 2 == 0;
            Map<String, Object> body = request(seed, stream, "auto", null);
            body.put("response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "weather",
                    "schema", JSON.readValue(ANSWER, Map.class))));
            HttpResponse<String> r = post(body);
            String[] finish = new String[1];
            List<Call> calls = stream ? streamedCalls(r, finish) : calls(r, finish);
            if (finish[0].equals("length")) {
                continue;
            }
            if (!calls.isEmpty()) {
                assertEquals("tool_calls", finish[0]);
                for (Call c : calls) {
                    assertValidCall(c);
                }
                called++;
                continue;
            }
            assertEquals("stop", finish[0], r.body());
            String content = stream ? streamedContent(r) : JSON.readTree(r.body()).get("choices").get(0).get("message")
                    .get("content").asText();
            JsonNode json = JSON.readTree(content);
            assertTrue(answer.validate(json).isEmpty(), "the answer follows response_format: " + content);
            answered++;
        }
        assertTrue(answered + called >= 6, "most seeds finish: " + answered + " answers, " + called + " calls");
        // required calls: response_format waits for the answer of a later turn. Temperature-1 sampling
        // may run past max_tokens inside a call (the loop above allows it too; which seeds do depends on
        // how the server's steps were composed, in the default order's numerics): every other finish
        // is a call, and most seeds finish
        int required = 0;
        for (long seed = 3; seed <= 6; seed++) {
            Map<String, Object> body = request(seed, false, "required", null);
            body.put("response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "weather",
                    "schema", JSON.readValue(ANSWER, Map.class))));
            String[] finish = new String[1];
            List<Call> calls = calls(post(body), finish);
            if (finish[0].equals("length")) {
                continue;
            }
            assertEquals("tool_calls", finish[0], "seed " + seed);
            assertTrue(!calls.isEmpty(), "seed " + seed);
            for (Call c : calls) {
                assertValidCall(c);
            }
            required++;
        }
        assertTrue(required >= 2, "most required-call seeds finish with calls: " + required + " of 4");
    }

    private static String streamedContent(HttpResponse<String> r) throws Exception {
        StringBuilder b = new StringBuilder();
        for (String frame : r.body().split("\n\n")) {
            if (frame.startsWith("data: {")) {
                JsonNode choices = JSON.readTree(frame.substring(6)).get("choices");
                if (!choices.isEmpty() && choices.get(0).get("delta").hasNonNull("content")) {
                    b.append(choices.get(0).get("delta").get("content").asText());
                }
            }
        }
        return b.toString();
    }

    private static Map<String, Object> legacyRequest(long seed, boolean stream, Object functionCall) throws Exception {
        Map<String, Object> body = request(seed, stream, null, null);
        body.remove("tools");
        body.put("functions", List.of(Map.of("name", "get_weather", "description", "Weather in a city", "parameters",
                JSON.readValue(WEATHER, Map.class)), Map.of("name", "get_time", "parameters", JSON.readValue(TIME, Map.class))));
        if (functionCall != null) {
            body.put("function_call", functionCall);
        }
        return body;
    }

    @Test
    void deprecatedFunctionsAnswerWithFunctionCall() throws Exception {
        for (long seed = 1; seed <= 2; seed++) {
            HttpResponse<String> r = post(legacyRequest(seed, false, Map.of("name", "get_time")));
            assertEquals(200, r.statusCode(), r.body());
            JsonNode choice = JSON.readTree(r.body()).get("choices").get(0);
            assertEquals("function_call", choice.get("finish_reason").asText(), r.body());
            JsonNode message = choice.get("message");
            assertTrue(message.get("tool_calls") == null, "the deprecated shape only: " + message);
            assertTrue(message.get("content").isNull(), r.body());
            assertEquals("get_time", message.get("function_call").get("name").asText());
            JsonNode args = JSON.readTree(message.get("function_call").get("arguments").asText());
            assertTrue(schemas.get("get_time").validate(args).isEmpty(), args.toString());

            r = post(legacyRequest(seed, true, Map.of("name", "get_weather")));
            assertEquals(200, r.statusCode(), r.body());
            String name = null;
            StringBuilder arguments = new StringBuilder();
            String finish = null;
            for (String frame : r.body().split("\n\n")) {
                if (!frame.startsWith("data: {")) {
                    continue;
                }
                JsonNode c = JSON.readTree(frame.substring(6)).get("choices").get(0);
                finish = c.hasNonNull("finish_reason") ? c.get("finish_reason").asText() : finish;
                assertTrue(!c.get("delta").has("tool_calls"), frame);
                JsonNode fc = c.get("delta").get("function_call");
                if (fc != null) {
                    if (name == null) {
                        assertTrue(fc.hasNonNull("name"), "the first function_call delta names the function: " + frame);
                        name = fc.get("name").asText();
                    } else {
                        assertTrue(!fc.has("name"), "later deltas carry arguments only: " + frame);
                    }
                    arguments.append(fc.path("arguments").asText());
                }
            }
            assertEquals("get_weather", name);
            assertEquals("function_call", finish);
            assertTrue(schemas.get("get_weather").validate(JSON.readTree(arguments.toString())).isEmpty(), arguments.toString());
        }
        // the deprecated history: an assistant function_call and the function's result
        Map<String, Object> body = legacyRequest(4, false, "none");
        body.put("messages", List.of(Map.of("role", "user", "content", "Weather in Paris?"),
                Map.of("role", "assistant", "content", "", "function_call",
                        Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\",\"unit\":\"celsius\"}")),
                Map.of("role", "function", "name", "get_weather", "content", "{\"temperature\": 21}")));
        body.put("max_tokens", 4);
        HttpResponse<String> r = post(body);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(JSON.readTree(r.body()).get("choices").get(0).get("message").get("function_call") == null);
        assertRefused(legacyRequest(1, false, Map.of("name", "nope")), "function_call", "names function 'nope'");
        assertRefused(legacyRequest(1, false, "required"), "function_call", "'function_call' must be");
        Map<String, Object> bad = legacyRequest(1, false, null);
        bad.put("functions", List.of(Map.of("name", "a b")));
        assertRefused(bad, "functions[0].name", "must be a string of 1 to 64");
        Map<String, Object> badSchema = legacyRequest(1, false, "auto");
        badSchema.put("functions", List.of(Map.of("name", "f", "parameters",
                Map.of("type", "object", "not", Map.of("required", List.of("a", "b"))))));
        assertRefused(badSchema, "functions", "'not'");
        Map<String, Object> noName = legacyRequest(1, false, null);
        noName.put("messages", List.of(Map.of("role", "function", "content", "x")));
        assertRefused(noName, "messages[0].name", "is required");
    }

    @Test
    void theOpenAiJavaSdkReadsADeprecatedFunctionCall() {
        OpenAIClient sdk = OpenAIOkHttpClient.builder().baseUrl(server.url("/v1")).apiKey("unused")
                .timeout(Duration.ofSeconds(60)).build();
        @SuppressWarnings("deprecation")
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("m").addUserMessage("What time is it?")
                .addFunction(ChatCompletionCreateParams.Function.builder().name("get_time")
                        .parameters(com.openai.models.FunctionParameters.builder()
                                .putAdditionalProperty("type", com.openai.core.JsonValue.from("object"))
                                .putAdditionalProperty("properties", com.openai.core.JsonValue.from(Map.of("zone",
                                        Map.of("enum", List.of("UTC", "CET")))))
                                .putAdditionalProperty("required", com.openai.core.JsonValue.from(List.of("zone")))
                                .putAdditionalProperty("additionalProperties", com.openai.core.JsonValue.from(false)).build())
                        .build())
                .functionCall(com.openai.models.chat.completions.ChatCompletionFunctionCallOption.builder().name("get_time").build())
                .temperature(1.0).seed(7L).maxCompletionTokens(600).build();
        ChatCompletion c = sdk.chat().completions().create(params);
        assertEquals(ChatCompletion.Choice.FinishReason.FUNCTION_CALL, c.choices().get(0).finishReason());
        @SuppressWarnings("deprecation")
        var call = c.choices().get(0).message().functionCall().orElseThrow();
        assertEquals("get_time", call.name());
        assertTrue(call.arguments().contains("\"zone\""), call.arguments());
    }

    private static void assertRefused(Map<String, Object> body, String param, String message) throws Exception {
        HttpResponse<String> r = post(body);
        assertEquals(400, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertEquals(param, e.get("param").asText(), r.body());
        assertTrue(e.get("message").asText().contains(message), r.body());
    }

    @Test
    void badToolsAreA400NamingTheField() throws Exception {
        assertRefused(request(1, true, Map.of("type", "function", "function", Map.of("name", "nope")), null), "tool_choice",
                "names function 'nope', which is not in 'tools'");
        Map<String, Object> bad = request(1, false, "required", null);
        bad.put("tools", List.of(Map.of("type", "function", "function", Map.of("name", "f", "parameters",
                Map.of("type", "object", "not", Map.of("required", List.of("a", "b")))))));
        assertRefused(bad, "tools", "'not'");
        Map<String, Object> strict = request(1, false, "auto", null);
        strict.put("tools", List.of(Map.of("type", "function", "function", Map.of("name", "f", "strict", true, "parameters",
                Map.of("type", "object", "properties", Map.of("a", Map.of("type", "string")))))));
        assertRefused(strict, "tools[0].function.parameters", "Invalid schema for function 'f'");
        Map<String, Object> both = request(1, false, "auto", null);
        both.put("response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "a", "schema",
                Map.of("type", "object", "not", Map.of("required", List.of("a", "b"))))));
        assertRefused(both, "response_format", "'not'");
        Map<String, Object> mixed = request(1, false, "auto", null);
        mixed.put("functions", List.of(Map.of("name", "f")));
        assertRefused(mixed, "functions", "not both");
        Map<String, Object> noId = request(1, false, "auto", null);
        noId.put("messages", List.of(Map.of("role", "tool", "content", "x")));
        assertRefused(noId, "messages[0].tool_call_id", "tool_call_id is required");
    }
}
