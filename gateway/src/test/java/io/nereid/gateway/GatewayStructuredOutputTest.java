package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.StructuredChatCompletion;
import com.openai.models.chat.completions.StructuredChatCompletionCreateParams;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Structured output end to end on a generated model with the llama vocabulary (32,000 tokens, byte fallback)
 * sampled at temperature 1 with several seeds: every json_schema output validates with an
 * independent validator (networknt), regex / choice / grammar outputs match, streamed and not,
 * through OpenAI's and vLLM's fields and the official OpenAI Java SDK's typed
 * {@code responseFormat(Class)}; what cannot be honoured is a 400 naming the field, before any 200.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class GatewayStructuredOutputTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA = """
            {"type":"object","properties":{
              "name":{"type":"string","maxLength":8},
              "age":{"type":"integer","minimum":0,"maximum":120},
              "color":{"enum":["red","green","blue"]},
              "tags":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":3},
              "ok":{"type":"boolean"},
              "when":{"type":"string","format":"date"}},
             "required":["name","age","color","tags","ok","when"],"additionalProperties":false}""";

    private static TestServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        // a generated model with the 32,000-token llama vocabulary (byte fallback), a 4,096 context and a chat template
        String parity = TestModels.stories260K().resolveSibling("../parity/parity-a-llama-spm-q8_0.gguf").normalize().toString();
        server = TestServer.start("--model", parity, "--served-model-name", "stories260K", "--chat-template", "llama2",
                "--threads", "1");
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> post(String path, Map<String, Object> body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(server.url(path))).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The first choice's text and finish reason, from a whole response or the streamed chunks. */
    private static String[] output(HttpResponse<String> r, boolean chat, boolean stream) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        if (!stream) {
            JsonNode c = JSON.readTree(r.body()).get("choices").get(0);
            return new String[] {chat ? c.get("message").get("content").asText() : c.get("text").asText(),
                c.get("finish_reason").asText()};
        }
        StringBuilder text = new StringBuilder();
        String finish = null;
        for (String frame : r.body().split("\n\n")) {
            if (frame.startsWith("data: {")) {
                JsonNode choices = JSON.readTree(frame.substring(6)).get("choices");
                if (!choices.isEmpty()) {
                    JsonNode c = choices.get(0);
                    JsonNode piece = chat ? c.get("delta").get("content") : c.get("text");
                    if (piece != null && !piece.isNull()) {
                        text.append(piece.asText());
                    }
                    if (c.hasNonNull("finish_reason")) {
                        finish = c.get("finish_reason").asText();
                    }
                }
            }
        }
        return new String[] {text.toString(), finish};
    }

    private static Map<String, Object> request(boolean chat, boolean stream, long seed, Map<String, Object> constraint) {
        Map<String, Object> body = new java.util.LinkedHashMap<>(Map.of("model", "stories260K", "max_tokens", 400,
                "temperature", 1, "seed", seed, "stream", stream));
        if (chat) {
            body.put("messages", List.of(Map.of("role", "user", "content", "Describe a person as JSON.")));
        } else {
            body.put("prompt", "Once upon a time");
        }
        body.putAll(constraint);
        return body;
    }

    private static String generate(boolean chat, boolean stream, long seed, Map<String, Object> constraint) throws Exception {
        String[] out = output(post(chat ? "/v1/chat/completions" : "/v1/completions", request(chat, stream, seed, constraint)),
                chat, stream);
        assertEquals("stop", out[1], "the constraint ended the output: " + out[0]);
        return out[0];
    }

    @Test
    void everyJsonSchemaOutputValidates() throws Exception {
        Schema validator = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(JSON.readTree(SCHEMA));
        Map<String, Object> schema = JSON.readValue(SCHEMA, Map.class);
        List<Map<String, Object>> forms = List.of(
                Map.of("response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "person", "schema", schema))),
                Map.of("response_format", Map.of("type", "json_schema", "json_schema",
                        Map.of("name", "person", "schema", schema, "strict", true))),
                Map.of("guided_json", schema),
                Map.of("structured_outputs", Map.of("json", SCHEMA)));
        int k = 0;
        for (Map<String, Object> form : forms) {
            for (boolean chat : new boolean[] {true, false}) {
                boolean stream = (k++ & 1) == 0;
                for (long seed = 1; seed <= 3; seed++) {
                    String text = generate(chat, stream, seed, form);
                    JsonNode value = JSON.readTree(text);
                    List<?> errors = validator.validate(value);
                    assertTrue(errors.isEmpty(), text + " " + errors);
                    java.time.LocalDate.parse(value.get("when").asText());   // format "date": a real calendar date
                    assertEquals(text, JSON.writeValueAsString(value), "compact JSON");
                }
            }
        }
    }

    @Test
    void jsonObjectGivesAnObject() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            String[] out = output(post("/v1/chat/completions", request(true, false, seed,
                    Map.of("response_format", Map.of("type", "json_object")))), true, false);
            assertTrue(out[0].startsWith("{"), out[0]);
            if (out[1].equals("stop")) {
                assertTrue(JSON.readTree(out[0]).isObject(), out[0]);
            }
        }
    }

    @Test
    void regexChoiceAndGrammarOutputsMatch() throws Exception {
        Pattern regex = Pattern.compile("(yes|no), [0-9]{1,3}!");
        for (long seed = 1; seed <= 4; seed++) {
            boolean stream = seed % 2 == 0;
            assertTrue(regex.matcher(generate(false, stream, seed, Map.of("guided_regex", regex.pattern()))).matches());
            assertTrue(regex.matcher(generate(true, stream, seed, Map.of("structured_outputs",
                    Map.of("regex", regex.pattern())))).matches());
            assertTrue(Set.of("alpha", "beta", "gamma").contains(generate(true, stream, seed,
                    Map.of("guided_choice", List.of("alpha", "beta", "gamma")))));
            assertTrue(Set.of("up", "down").contains(generate(false, stream, seed, Map.of("structured_outputs",
                    Map.of("choice", List.of("up", "down"))))));
            String grammar = "root ::= \"(\" num (\"+\" num){0,3} \")\"\nnum ::= [1-9] [0-9]?";
            assertTrue(generate(false, stream, seed, Map.of("guided_grammar", grammar)).matches("\\([1-9][0-9]?(\\+[1-9][0-9]?){0,3}\\)"));
        }
    }

    /** What the OpenAI Java SDK derives a strict schema from (bounded, so that a random model finishes it). */
    public static class Weather {
        public Sky sky;
        public boolean windy;
        public List<Sky> forecast;
    }

    public enum Sky { SUNNY, CLOUDY, RAINY }

    @Test
    void theOpenAiJavaSdkGetsTypedObjects() {
        OpenAIClient sdk = OpenAIOkHttpClient.builder().baseUrl(server.url("/v1")).apiKey("unused")
                .timeout(Duration.ofSeconds(60)).build();
        for (long seed = 1; seed <= 3; seed++) {
            StructuredChatCompletionCreateParams<Weather> params = StructuredChatCompletionCreateParams.<Weather>builder()
                    .model("stories260K").addUserMessage("The weather?").maxCompletionTokens(1000).temperature(1.0)
                    .seed(seed).responseFormat(Weather.class).build();
            StructuredChatCompletion<Weather> c = sdk.chat().completions().create(params);
            Weather w = c.choices().get(0).message().content().orElseThrow();
            assertTrue(w.sky != null && w.forecast != null, "a typed object came back");
        }
    }

    private static void assertRefused(Map<String, Object> constraint, String param, String message) throws Exception {
        for (boolean stream : new boolean[] {false, true}) {
            HttpResponse<String> r = post("/v1/chat/completions", request(true, stream, 1, constraint));
            assertEquals(400, r.statusCode(), r.body());
            JsonNode e = JSON.readTree(r.body()).get("error");
            assertEquals(param, e.get("param").asText(), r.body());
            assertTrue(e.get("message").asText().contains(message), r.body());
            assertEquals("invalid_request_error", e.get("type").asText());
        }
    }

    @Test
    void whatCannotBeHonouredIsA400NamingTheField() throws Exception {
        ObjectNode open = (ObjectNode) JSON.readTree("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}");
        assertRefused(Map.of("response_format", Map.of("type", "json_schema", "json_schema",
                Map.of("name", "x", "schema", open, "strict", true))), "response_format",
                "Invalid schema for response_format 'x': In context=(), 'additionalProperties' is required to be supplied and to be false.");
        ObjectNode missing = open.deepCopy().put("additionalProperties", false);
        assertRefused(Map.of("response_format", Map.of("type", "json_schema", "json_schema",
                Map.of("name", "x", "schema", missing, "strict", true))), "response_format", "Missing 'a'");
        assertRefused(Map.of("response_format", Map.of("type", "json_schema", "json_schema",
                Map.of("name", "x", "schema", Map.of("not", Map.of("required", List.of("a", "b")))))), "response_format",
                "'not' with [required] (at root) is not supported");
        assertRefused(Map.of("response_format", Map.of("type", "xml")), "response_format.type", "'json_schema', got 'xml'");
        assertRefused(Map.of("response_format", Map.of("type", "json_schema", "json_schema", Map.of("name", "bad name!"))),
                "response_format.json_schema.name", "1 to 64");
        assertRefused(Map.of("guided_regex", "(?=a)b"), "guided_regex", "lookaround");
        assertRefused(Map.of("guided_grammar", "root ::= x"), "guided_grammar", "'x' is used (line 1) but never defined");
        assertRefused(Map.of("guided_choice", List.of()), "guided_choice", "non-empty array");
        assertRefused(Map.of("guided_json", "{not json"), "guided_json", "not valid JSON");
        assertRefused(Map.of("guided_regex", "a", "guided_choice", List.of("b")), "guided_choice", "only one");
        assertRefused(Map.of("structured_outputs", Map.of("regex", "a", "choice", List.of("b"))), "structured_outputs",
                "exactly one");
        assertRefused(Map.of("structured_outputs", Map.of("structural_tag", "x")), "structured_outputs.structural_tag",
                "not supported");
        // the server is fine afterwards
        assertTrue(Set.of("alpha", "beta").contains(generate(true, false, 1, Map.of("guided_choice", List.of("alpha", "beta")))));
    }
}
