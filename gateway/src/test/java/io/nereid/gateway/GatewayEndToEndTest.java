package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The server on 127.0.0.1 (ephemeral port) with stories260K and the chatml template, driven by the JDK client. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayEndToEndTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String STORY = TestModels.ONCE_UPON_A_TIME_12;
    private static ServingModel model;
    private static GatewayServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        Path p = TestModels.stories260K();
        if (!Files.exists(p)) {
            throw new IllegalStateException("fixture missing: " + p);
        }
        model = ServingModel.open(new ServeConfig(p, "stories260K", "127.0.0.1", 0, 8, 256, 16, 16, 0, "chatml", 2,
                Duration.ofSeconds(5)));
        server = GatewayServer.start(model, "127.0.0.1", 0);
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (model != null) {
            model.close();
        }
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode error(HttpResponse<String> r, int status) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertTrue(e.has("message") && e.has("type") && e.has("param") && e.has("code"), r.body());
        return e;
    }

    @Test
    void greedyCompletionReturnsLlamaCppsContinuation() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":12,\"unknown_thing\":1}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("unknown_thing", r.headers().firstValue("x-nereid-ignored-fields").orElse(null));
        JsonNode b = JSON.readTree(r.body());
        assertEquals("text_completion", b.get("object").asText());
        assertTrue(b.get("id").asText().startsWith("cmpl-"));
        assertEquals("stories260K", b.get("model").asText());
        JsonNode c = b.get("choices").get(0);
        assertEquals(STORY, c.get("text").asText());
        assertEquals("length", c.get("finish_reason").asText());
        JsonNode u = b.get("usage");
        assertEquals(5, u.get("prompt_tokens").asInt());
        assertEquals(12, u.get("completion_tokens").asInt());
        assertEquals(17, u.get("total_tokens").asInt());
        assertTrue(u.get("prompt_tokens_details").has("cached_tokens"));
    }

    @Test
    void streamedCompletionEqualsTheWholeOne() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":12,\"stream\":true}");
        assertEquals(200, r.statusCode(), r.body());
        StringBuilder text = new StringBuilder();
        List<JsonNode> chunks = events(r);
        for (JsonNode c : chunks) {
            text.append(c.get("choices").get(0).get("text").asText());
        }
        assertEquals(STORY, text.toString());
        assertEquals("length", chunks.getLast().get("choices").get(0).get("finish_reason").asText());
    }

    @Test
    void aLengthFinishRidesOnTheLastTextChunkFollowedOnlyByUsageAndDone() throws Exception {
        List<JsonNode> chunks = events(post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":12,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"));
        JsonNode usage = chunks.getLast();
        assertEquals(0, usage.get("choices").size());
        assertEquals(12, usage.get("usage").get("completion_tokens").asInt());
        assertEquals(STORY, textChunksEndingWith("length", chunks.subList(0, chunks.size() - 1), "text"));
    }

    @Test
    void aStopStringFinishRidesOnTheChunkWithTheTextBeforeTheStop() throws Exception {
        // "med" starts inside the token " named": that step's text " na" and the finish share a chunk.
        List<JsonNode> chunks = events(post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":12,\"stop\":\"med\",\"stream\":true}"));
        assertEquals(", there was a little girl na", textChunksEndingWith("stop", chunks, "text"));
        for (int i = 0; i < chunks.size(); i++) {   // vLLM's stop_reason: the matched string, on the last chunk only
            assertEquals(i == chunks.size() - 1 ? "med" : null, chunks.get(i).get("choices").get(0).get("stop_reason").textValue());
        }
    }

    @Test
    void aStreamedChatsLengthFinishRidesOnItsLastContentChunk() throws Exception {
        String req = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}],"
                + "\"temperature\":0,\"max_tokens\":6,\"ignore_eos\":true";
        String whole = JSON.readTree(post("/v1/chat/completions", req + "}").body()).get("choices").get(0).get("message")
                .get("content").asText();
        List<JsonNode> chunks = events(post("/v1/chat/completions", req + ",\"stream\":true}"));
        assertEquals("assistant", chunks.getFirst().get("choices").get(0).get("delta").get("role").asText());
        assertEquals(whole, textChunksEndingWith("length", chunks.subList(1, chunks.size()), "delta"));
    }

    /**
     * Asserts that every chunk carries new text, that only the last one has a finish_reason (and it is
     * {@code reason}), and returns the text; {@code field} is "text" (completions) or "delta" (chat).
     */
    private static String textChunksEndingWith(String reason, List<JsonNode> chunks, String field) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < chunks.size(); i++) {
            JsonNode c = chunks.get(i).get("choices").get(0);
            JsonNode t = field.equals("delta") ? c.get("delta").get("content") : c.get("text");
            assertFalse(t == null || t.asText().isEmpty(), "chunk " + i + " has no text: " + chunks);
            assertEquals(i == chunks.size() - 1 ? reason : null, c.get("finish_reason").textValue(), chunks.toString());
            text.append(t.asText());
        }
        return text.toString();
    }

    @Test
    void echoPutsThePromptBeforeEachChoiceAndLeavesUsageAlone() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":12,\"echo\":true,\"n\":2}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode b = JSON.readTree(r.body());
        for (JsonNode c : b.get("choices")) {
            assertEquals("Once upon a time" + STORY, c.get("text").asText());
        }
        assertEquals(5, b.get("usage").get("prompt_tokens").asInt());
        assertEquals(24, b.get("usage").get("completion_tokens").asInt());
    }

    @Test
    void aStreamedEchoSendsThePromptAsTheFirstChunk() throws Exception {
        List<JsonNode> chunks = events(post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":12,\"echo\":true,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}}"));
        assertEquals("Once upon a time", chunks.getFirst().get("choices").get(0).get("text").asText());
        assertEquals("Once upon a time" + STORY, textChunksEndingWith("length", chunks.subList(0, chunks.size() - 1), "text"));
        assertEquals(5, chunks.getLast().get("usage").get("prompt_tokens").asInt());
        assertEquals(12, chunks.getLast().get("usage").get("completion_tokens").asInt());
    }

    @Test
    void echoOfATokenPromptIsItsDetokenizedText() throws Exception {
        JsonNode tokens = JSON.readTree(post("/tokenize", "{\"prompt\":\"Once upon a time\"}").body()).get("tokens");
        String detokenized = JSON.readTree(post("/detokenize", "{\"tokens\":" + tokens + "}").body()).get("prompt").asText();
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":" + tokens
                + ",\"temperature\":0,\"max_tokens\":12,\"echo\":true}");
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(detokenized.endsWith("Once upon a time"), detokenized);
        assertEquals(detokenized + STORY, JSON.readTree(r.body()).get("choices").get(0).get("text").asText());
    }

    @Test
    void chatEchoRepeatsAFinalAssistantMessageOnly() throws Exception {
        String user = "{\"role\":\"user\",\"content\":\"Tell me a story\"}";
        String tail = "\"temperature\":0,\"max_tokens\":6,\"ignore_eos\":true";
        String plain = JSON.readTree(post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[" + user
                + "]," + tail + "}").body()).get("choices").get(0).get("message").get("content").asText();
        assertEquals(plain, JSON.readTree(post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":["
                + user + "]," + tail + ",\"echo\":true}").body()).get("choices").get(0).get("message").get("content")
                .asText());

        String withAssistant = "{\"model\":\"stories260K\",\"messages\":[" + user + ",{\"role\":\"assistant\","
                + "\"content\":\"Once upon\"}]," + tail + ",\"echo\":true";
        String whole = JSON.readTree(post("/v1/chat/completions", withAssistant + "}").body()).get("choices").get(0)
                .get("message").get("content").asText();
        assertTrue(whole.startsWith("Once upon") && whole.length() > "Once upon".length(), whole);
        List<JsonNode> chunks = events(post("/v1/chat/completions", withAssistant + ",\"stream\":true}"));
        assertEquals("Once upon", chunks.get(1).get("choices").get(0).get("delta").get("content").asText());
        assertEquals(whole, textChunksEndingWith("length", chunks.subList(1, chunks.size()), "delta"));
    }

    /** The data payloads before [DONE], checking the SSE framing and that [DONE] ends the stream. */
    private static List<JsonNode> events(HttpResponse<String> r) throws Exception {
        assertEquals("text/event-stream", r.headers().firstValue("Content-Type").orElse(""));
        assertEquals("no-cache", r.headers().firstValue("Cache-Control").orElse(""));
        String body = r.body();
        assertTrue(body.endsWith("data: [DONE]\n\n"), body);
        List<JsonNode> out = new ArrayList<>();
        String[] frames = body.split("\n\n");
        for (int i = 0; i < frames.length - 1; i++) {
            assertTrue(frames[i].startsWith("data: "), frames[i]);
            out.add(JSON.readTree(frames[i].substring(6)));
        }
        return out;
    }

    @Test
    void streamedChatStartsWithTheRoleChunkAndEndsWithUsageAndDone() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"text\",\"text\":\"Tell me a story\"}]}],\"temperature\":0,\"max_tokens\":8,"
                + "\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertEquals(200, r.statusCode(), r.body());
        List<JsonNode> chunks = events(r);
        JsonNode first = chunks.getFirst();
        assertEquals("chat.completion.chunk", first.get("object").asText());
        assertEquals("assistant", first.get("choices").get(0).get("delta").get("role").asText());
        assertEquals("", first.get("choices").get(0).get("delta").get("content").asText());
        String id = first.get("id").asText();
        long created = first.get("created").asLong();
        int finishes = 0;
        for (JsonNode c : chunks) {
            assertEquals(id, c.get("id").asText());
            assertEquals(created, c.get("created").asLong());
            assertEquals("stories260K", c.get("model").asText());
        }
        for (JsonNode c : chunks.subList(1, chunks.size() - 1)) {
            assertFalse(c.get("choices").get(0).get("delta").has("role"));
            finishes += c.get("choices").get(0).get("finish_reason").isNull() ? 0 : 1;
        }
        assertEquals(1, finishes);
        JsonNode usage = chunks.getLast();
        assertEquals(0, usage.get("choices").size());
        assertEquals(usage.get("usage").get("prompt_tokens").asInt() + usage.get("usage").get("completion_tokens").asInt(),
                usage.get("usage").get("total_tokens").asInt());
        assertTrue(usage.get("usage").get("completion_tokens").asInt() >= 1);
    }

    @Test
    void wholeChatHasTheOpenAiShape() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Hi\"}],\"max_completion_tokens\":4,\"seed\":1,\"n\":2}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode b = JSON.readTree(r.body());
        assertEquals("chat.completion", b.get("object").asText());
        assertEquals(2, b.get("choices").size());
        JsonNode m = b.get("choices").get(1).get("message");
        assertEquals("assistant", m.get("role").asText());
        assertTrue(m.get("content").isTextual());
        assertTrue(m.has("refusal") && b.get("choices").get(0).has("logprobs"));
    }

    @Test
    void modelsAndHealth() throws Exception {
        assertEquals(200, get("/health").statusCode());
        JsonNode list = JSON.readTree(get("/v1/models").body());
        assertEquals("list", list.get("object").asText());
        assertEquals("stories260K", list.get("data").get(0).get("id").asText());
        assertEquals("model", list.get("data").get(0).get("object").asText());
        assertNull(list.get("data").get(0).get("description"));
        assertEquals("stories260K", JSON.readTree(get("/v1/models/stories260K").body()).get("id").asText());
        assertEquals("model_not_found", error(get("/v1/models/gpt-4"), 404).get("code").asText());
    }

    @Test
    void badRequestsGetTheRightStatusAndTheServerKeepsServing() throws Exception {
        assertEquals("invalid_request_error", error(post("/v1/completions", "{not json"), 400).get("type").asText());
        assertEquals("temperature", error(post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":3}"), 400).get("param").asText());
        assertEquals("messages", error(post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[]}"), 400)
                .get("param").asText());
        assertEquals("model_not_found", error(post("/v1/completions", "{\"model\":\"gpt-4\",\"prompt\":\"x\"}"), 404)
                .get("code").asText());
        assertEquals("context_length_exceeded", error(post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"x\","
                + "\"max_tokens\":100000}"), 400).get("code").asText());
        assertEquals("context_length_exceeded", error(post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"x\","
                + "\"max_tokens\":100000,\"stream\":true}"), 400).get("code").asText());
        assertEquals("unsupported_parameter", error(post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"x\","
                + "\"suffix\":\"y\"}"), 400).get("code").asText());
        error(get("/v1/nothing"), 404);
        HttpResponse<String> ok = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":3}");
        assertEquals(200, ok.statusCode(), ok.body());
        assertEquals(", there was", JSON.readTree(ok.body()).get("choices").get(0).get("text").asText());
    }

    @Test
    void tokenizeAndDetokenizeRoundTripWithVllmsShapes() throws Exception {
        HttpResponse<String> r = post("/tokenize", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\"}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode t = JSON.readTree(r.body());
        assertEquals(5, t.get("count").asInt());   // BOS + 4, as the completion's prompt_tokens
        assertEquals(5, t.get("tokens").size());
        assertEquals(model.maxModelLen(), t.get("max_model_len").asInt());
        JsonNode noBos = JSON.readTree(post("/tokenize", "{\"prompt\":\"Once upon a time\",\"add_special_tokens\":false}")
                .body());
        assertEquals(4, noBos.get("count").asInt());
        HttpResponse<String> d = post("/detokenize", "{\"model\":\"stories260K\",\"tokens\":" + noBos.get("tokens") + "}");
        assertEquals(200, d.statusCode(), d.body());
        assertEquals("Once upon a time", JSON.readTree(d.body()).get("prompt").asText());

        String messages = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";
        int withHeader = JSON.readTree(post("/tokenize", "{" + messages + "}").body()).get("count").asInt();
        int without = JSON.readTree(post("/tokenize", "{" + messages + ",\"add_generation_prompt\":false}").body())
                .get("count").asInt();
        assertTrue(withHeader > without, withHeader + " vs " + without);
    }

    @Test
    void badTokenizeInputIsA400NamingTheField() throws Exception {
        assertEquals("prompt", error(post("/tokenize", "{}"), 400).get("param").asText());
        assertEquals("prompt", error(post("/tokenize", "{\"prompt\":3}"), 400).get("param").asText());
        assertEquals("messages", error(post("/tokenize", "{\"messages\":[]}"), 400).get("param").asText());
        assertEquals("add_special_tokens", error(post("/tokenize", "{\"prompt\":\"x\",\"add_special_tokens\":\"yes\"}"),
                400).get("param").asText());
        assertEquals("model_not_found", error(post("/tokenize", "{\"model\":\"gpt-4\",\"prompt\":\"x\"}"), 404)
                .get("code").asText());
        assertEquals("tokens", error(post("/detokenize", "{}"), 400).get("param").asText());
        assertEquals("tokens", error(post("/detokenize", "{\"tokens\":[1,\"a\"]}"), 400).get("param").asText());
        assertEquals("tokens", error(post("/detokenize", "{\"tokens\":[99999999]}"), 400).get("param").asText());
        error(post("/detokenize", "[1"), 400);
    }

    @Test
    void readyWhileTheEngineIsIdleOrStepping() throws Exception {
        HttpResponse<String> r = get("/health/ready");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("ready", JSON.readTree(r.body()).get("status").asText());
    }

    @Test
    void metricsUseVllmNamesAndCountCompletedRequests() throws Exception {
        assertEquals(200, post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":2}").statusCode());
        HttpResponse<String> r = get("/metrics");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
        List<String> lines = r.body().lines().toList();
        // Values of the gauges depend on when the engine frees the finished request; names and labels do not.
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("vllm:num_requests_running{model_name=\"stories260K\"} ")), r.body());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("vllm:kv_cache_usage_perc{model_name=\"stories260K\"} ")), r.body());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("vllm:request_success_total{finished_reason=\"length\","
                + "model_name=\"stories260K\"} ") && !l.endsWith(" 0.0")), r.body());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("vllm:generation_tokens_total{model_name=\"stories260K\"} ")
                && !l.endsWith(" 0.0")), r.body());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("vllm:time_to_first_token_seconds_count{")
                && !l.endsWith(" 0.0")), r.body());
    }

    @Test
    void chatLogprobsHaveOpenAisShapeStreamedAndWhole() throws Exception {
        String req = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                + "\"temperature\":0,\"max_tokens\":5,\"logprobs\":true,\"top_logprobs\":3";
        HttpResponse<String> r = post("/v1/chat/completions", req + "}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode choice = JSON.readTree(r.body()).get("choices").get(0);
        JsonNode content = choice.get("logprobs").get("content");
        assertEquals(JSON.readTree(r.body()).get("usage").get("completion_tokens").asInt(), content.size());
        JsonNode first = content.get(0);
        assertTrue(first.get("token").isTextual() && first.get("logprob").asDouble() <= 0 && first.get("bytes").isArray());
        assertEquals(3, first.get("top_logprobs").size());
        // Greedy: the chosen token is the most likely one.
        assertEquals(first.get("token").asText(), first.get("top_logprobs").get(0).get("token").asText());

        StringBuilder streamed = new StringBuilder();
        int tokens = 0;
        for (JsonNode c : events(post("/v1/chat/completions", req + ",\"stream\":true}"))) {
            JsonNode lp = c.get("choices").get(0).get("logprobs");
            if (lp != null && !lp.isNull()) {
                for (JsonNode t : lp.get("content")) {
                    streamed.append(t.get("token").asText());
                    tokens++;
                }
            }
        }
        assertEquals(content.size(), tokens);
        StringBuilder whole = new StringBuilder();
        content.forEach(t -> whole.append(t.get("token").asText()));
        assertEquals(whole.toString(), streamed.toString());
    }

    @Test
    void legacyCompletionLogprobsHaveTokensOffsetsAndTopMaps() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":0,\"max_tokens\":4,\"logprobs\":2}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode lp = JSON.readTree(r.body()).get("choices").get(0).get("logprobs");
        assertEquals(4, lp.get("tokens").size());
        assertEquals(4, lp.get("token_logprobs").size());
        assertEquals(4, lp.get("top_logprobs").size());
        assertEquals(0, lp.get("text_offset").get(0).asInt());
        assertEquals(lp.get("tokens").get(0).asText().length(), lp.get("text_offset").get(1).asInt());
        assertTrue(lp.get("top_logprobs").get(0).size() >= 1 && lp.get("top_logprobs").get(0).size() <= 2);
        assertTrue(lp.get("top_logprobs").get(0).has(lp.get("tokens").get(0).asText()));
    }

    /** OpenAI's legacy API "always returns the logprob of the sampled token": logprobs 0 gives it alone. */
    @Test
    void legacyTopLogprobsAlwaysHoldTheChosenToken() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\","
                + "\"temperature\":1,\"seed\":3,\"max_tokens\":6,\"logprobs\":0}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode lp = JSON.readTree(r.body()).get("choices").get(0).get("logprobs");
        for (int i = 0; i < lp.get("tokens").size(); i++) {
            JsonNode top = lp.get("top_logprobs").get(i);
            assertEquals(1, top.size(), top.toString());
            assertEquals(lp.get("token_logprobs").get(i).asDouble(), top.get(lp.get("tokens").get(i).asText()).asDouble(), 0.0);
        }
    }

    @Test
    void theOpenApiDocumentListsEveryRegisteredRouteAndNoOther() throws Exception {
        HttpResponse<String> r = get("/openapi.json");
        assertEquals(200, r.statusCode());
        JsonNode doc = JSON.readTree(r.body());
        assertEquals("3.1.0", doc.get("openapi").asText());
        java.util.Set<String> documented = new java.util.TreeSet<>();
        doc.get("paths").properties().forEach(p -> p.getValue().properties().forEach(m -> {
            if (!m.getKey().equals("parameters")) {
                documented.add(m.getKey().toUpperCase(java.util.Locale.ROOT) + " " + p.getKey());
            }
        }));
        assertEquals(new java.util.TreeSet<>(server.routes()), documented);
    }

    @Test
    void withoutStrictTokenizeNamesUnknownFieldsInTheHeader() throws Exception {
        HttpResponse<String> r = post("/tokenize", "{\"prompt\":\"Once\",\"extra\":1}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("extra", r.headers().firstValue("x-nereid-ignored-fields").orElse(null));
        HttpResponse<String> d = post("/detokenize", "{\"tokens\":[1,2],\"what\":0,\"extra\":1}");
        assertEquals(200, d.statusCode(), d.body());
        assertEquals("what, extra", d.headers().firstValue("x-nereid-ignored-fields").orElse(null));
    }
}
