package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.GatewayServer;
import io.nereid.gateway.http.OpenApiContract;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Prompt logprobs on the wire, stories260K on 127.0.0.1: OpenAI's echo + logprobs (legacy shape,
 * whole and streamed, and max_tokens 0) and vLLM's prompt_logprobs (completions and chat).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewayPromptLogprobsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "Once upon a time";
    private static ServingModel model;
    private static GatewayServer server;
    private static HttpClient client;
    private static JsonNode promptIds;

    @BeforeAll
    static void start() throws Exception {
        model = ServingModel.open(new ServeConfig(TestModels.stories260K(), "stories260K", "127.0.0.1", 0, 8, 256, 16, 16,
                0, "chatml", 2, Duration.ofSeconds(5)));
        server = GatewayServer.start(model, "127.0.0.1", 0);
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        promptIds = JSON.readTree(post("/tokenize", "{\"prompt\":\"" + PROMPT + "\"}").body()).get("tokens");
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

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode ok(HttpResponse<String> r, String schema) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        JsonNode b = JSON.readTree(r.body());
        OpenApiContract.assertValid(schema, b);
        return b;
    }

    private static String completion(String extra) {
        return "{\"model\":\"stories260K\",\"prompt\":\"" + PROMPT + "\",\"temperature\":0" + extra + "}";
    }

    /** Offsets index the choice's text: each token's text is there (the first word's dummy-prefix space aside). */
    private static void assertOffsetsIndex(String text, JsonNode lp, int from) {
        for (int j = from; j < lp.get("tokens").size(); j++) {
            int at = lp.get("text_offset").get(j).asInt();
            assertTrue(text.startsWith(lp.get("tokens").get(j).asText(), at),
                    "token " + j + " '" + lp.get("tokens").get(j).asText() + "' at " + at + " of '" + text + "'");
        }
    }

    @Test
    void echoWithLogprobsPutsThePromptTokensFirstWithANullForTheFirst() throws Exception {
        int p = promptIds.size();
        JsonNode choice = ok(post("/v1/completions", completion(",\"max_tokens\":4,\"logprobs\":2,\"echo\":true,"
                + "\"prompt_logprobs\":2")), "TextCompletion").get("choices").get(0);
        JsonNode lp = choice.get("logprobs");
        String text = choice.get("text").asText();
        assertTrue(text.startsWith(PROMPT) && text.length() > PROMPT.length(), text);
        assertEquals(p + 4, lp.get("tokens").size());
        assertTrue(lp.get("token_logprobs").get(0).isNull());
        assertTrue(lp.get("top_logprobs").get(0).isNull());
        assertEquals(0, lp.get("text_offset").get(0).asInt());
        for (int j = 1; j < p + 4; j++) {
            assertTrue(lp.get("token_logprobs").get(j).isNumber(), "token " + j);
            assertTrue(lp.get("top_logprobs").get(j).size() >= 1 && lp.get("top_logprobs").get(j).size() <= 2);
            assertTrue(lp.get("text_offset").get(j).asInt() >= lp.get("text_offset").get(j - 1).asInt());
        }
        assertEquals(PROMPT.length(), lp.get("text_offset").get(p).asInt(), "the output starts after the echo");
        assertOffsetsIndex(text, lp, 2);   // token 1 is the first word, whose leading space the echo does not have
        // The echoed prompt's logprobs are the prompt_logprobs of the same request.
        JsonNode scored = choice.get("prompt_logprobs");
        for (int j = 1; j < p; j++) {
            assertEquals(scored.get(j).get(promptIds.get(j).asText()).get("logprob").floatValue(),
                    lp.get("token_logprobs").get(j).floatValue(), "token " + j);
        }
    }

    @Test
    void aStreamedEchoWithLogprobsSendsThePromptsLogprobsWithTheEchoAndTheSameValuesAsAWholeResponse() throws Exception {
        String body = completion(",\"max_tokens\":4,\"logprobs\":1,\"echo\":true");
        JsonNode whole = ok(post("/v1/completions", body), "TextCompletion").get("choices").get(0);
        HttpResponse<String> r = post("/v1/completions", body.replace("}", ",\"stream\":true}"));
        assertEquals(200, r.statusCode(), r.body());
        String[] frames = r.body().split("\n\n");
        assertEquals("data: [DONE]", frames[frames.length - 1]);
        List<JsonNode> chunks = new ArrayList<>();
        for (int i = 0; i < frames.length - 1; i++) {
            JsonNode c = JSON.readTree(frames[i].substring("data: ".length()));
            OpenApiContract.assertValid("TextCompletionStreamEvent", c);
            chunks.add(c.get("choices").get(0));
        }
        JsonNode first = chunks.getFirst();
        assertTrue(first.get("text").asText().startsWith(PROMPT) && first.get("text").asText().length() > PROMPT.length(),
                "the echo travels with the first token: " + first);
        // The prompt's tokens and at least the first generated one (steps a drain gathers share a chunk).
        assertTrue(first.get("logprobs").get("tokens").size() >= promptIds.size() + 1, first.toString());
        assertTrue(first.get("logprobs").get("token_logprobs").get(0).isNull());
        StringBuilder text = new StringBuilder();
        List<Float> logprobs = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        for (JsonNode c : chunks) {
            text.append(c.get("text").asText());
            c.get("logprobs").get("token_logprobs").forEach(v -> logprobs.add(v.isNull() ? null : v.floatValue()));
            c.get("logprobs").get("text_offset").forEach(v -> offsets.add(v.asInt()));
        }
        assertEquals(whole.get("text").asText(), text.toString());
        List<Float> wholeLogprobs = new ArrayList<>();
        whole.get("logprobs").get("token_logprobs").forEach(v -> wholeLogprobs.add(v.isNull() ? null : v.floatValue()));
        List<Integer> wholeOffsets = new ArrayList<>();
        whole.get("logprobs").get("text_offset").forEach(v -> wholeOffsets.add(v.asInt()));
        assertEquals(wholeLogprobs, logprobs);
        assertEquals(wholeOffsets, offsets);
        assertFalse(first.has("prompt_logprobs"), "only asked-for fields");
    }

    @Test
    void maxTokensZeroWithEchoScoresThePromptWithoutGenerating() throws Exception {
        JsonNode b = ok(post("/v1/completions", completion(",\"max_tokens\":0,\"logprobs\":0,\"echo\":true")),
                "TextCompletion");
        JsonNode choice = b.get("choices").get(0);
        assertEquals(PROMPT, choice.get("text").asText());
        assertEquals("length", choice.get("finish_reason").asText());
        assertEquals(promptIds.size(), choice.get("logprobs").get("tokens").size());
        assertEquals(0, b.get("usage").get("completion_tokens").asInt());
        assertEquals(promptIds.size(), b.get("usage").get("prompt_tokens").asInt());
        assertOffsetsIndex(PROMPT, choice.get("logprobs"), 2);
    }

    /** Scoring needs no room for a generated token: a prompt of exactly max_model_len tokens is fine with 0. */
    @Test
    void maxTokensZeroScoresAPromptThatFillsTheContext() throws Exception {
        int ctx = JSON.readTree(post0("/v1/models")).get("data").get(0).get("max_model_len").asInt();
        StringBuilder ids = new StringBuilder("[1");
        for (int i = 1; i < ctx; i++) {
            ids.append(',').append(100 + i % 200);
        }
        String body = "{\"model\":\"stories260K\",\"prompt\":" + ids + "],\"echo\":true,\"logprobs\":0,\"max_tokens\":";
        JsonNode b = ok(post("/v1/completions", body + "0}"), "TextCompletion");
        assertEquals(ctx, b.get("usage").get("prompt_tokens").asInt());
        assertEquals(ctx, b.get("choices").get(0).get("logprobs").get("tokens").size());
        HttpResponse<String> over = post("/v1/completions", body + "1}");
        assertEquals(400, over.statusCode(), over.body());
        assertEquals("context_length_exceeded", JSON.readTree(over.body()).get("error").get("code").asText());
    }

    private static String post0(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void completionsPromptLogprobsGiveEveryChoiceVllmsListWithTheTokenAndItsAlternatives() throws Exception {
        JsonNode b = ok(post("/v1/completions", completion(",\"max_tokens\":3,\"n\":2,\"prompt_logprobs\":3")),
                "TextCompletion");
        JsonNode scored = b.get("choices").get(0).get("prompt_logprobs");
        assertEquals(b.get("choices").get(1).get("prompt_logprobs"), scored, "every choice has the same");
        assertEquals(promptIds.size(), scored.size());
        assertTrue(scored.get(0).isNull());
        for (int j = 1; j < scored.size(); j++) {
            JsonNode entry = scored.get(j);
            JsonNode own = entry.get(promptIds.get(j).asText());
            assertTrue(own != null && own.get("rank").asInt() >= 1 && own.get("logprob").floatValue() <= 0, entry.toString());
            assertEquals(new String(model.tokenBytes(promptIds.get(j).asInt()), java.nio.charset.StandardCharsets.UTF_8),
                    own.get("decoded_token").asText());
            assertTrue(entry.size() >= 3 && entry.size() <= 4, entry.toString());
            boolean hasTop = false;
            for (JsonNode v : entry) {
                hasTop |= v.get("rank").asInt() == 1;
                assertTrue(v.get("logprob").floatValue() <= 0);
            }
            assertTrue(hasTop, "the most likely token is listed: " + entry);
        }
        JsonNode plain = ok(post("/v1/completions", completion(",\"max_tokens\":1")), "TextCompletion");
        assertFalse(plain.get("choices").get(0).has("prompt_logprobs"));
    }

    @Test
    void chatPromptLogprobsAreOnTheResponseAsVllmSendsThem() throws Exception {
        JsonNode b = ok(post("/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Tell me a story\"}],\"temperature\":0,\"max_tokens\":3,\"prompt_logprobs\":0}"),
                "ChatCompletion");
        JsonNode scored = b.get("prompt_logprobs");
        assertEquals(b.get("usage").get("prompt_tokens").asInt(), scored.size());
        assertTrue(scored.get(0).isNull());
        for (int j = 1; j < scored.size(); j++) {
            assertEquals(1, scored.get(j).size(), "prompt_logprobs 0: the prompt token alone");
        }
        assertFalse(b.get("choices").get(0).has("prompt_logprobs"));
    }

    @Test
    void promptLogprobsWithAStreamAreA400() throws Exception {
        HttpResponse<String> r = post("/v1/completions", completion(",\"stream\":true,\"prompt_logprobs\":1"));
        assertEquals(400, r.statusCode(), r.body());
        OpenApiContract.assertValid("ErrorResponse", r.body());
        assertEquals("prompt_logprobs", JSON.readTree(r.body()).get("error").get("param").asText());
    }
}
