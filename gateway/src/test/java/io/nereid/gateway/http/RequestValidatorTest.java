package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.ParsedRequest.Kind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class RequestValidatorTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static ParsedRequest chat(String json) throws Exception {
        return RequestValidator.validate(JSON.readTree(json), Kind.CHAT);
    }

    @Test
    void defaultsAreOpenAisAndContentPartsAreFlattened() throws Exception {
        ParsedRequest r = chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                + "{\"type\":\"text\",\"text\":\"b\"}]}],\"stop\":\"x\",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertEquals(1f, r.sampling().temperature());
        assertEquals(1f, r.sampling().topP());
        assertNull(r.maxTokens());
        assertEquals(1, r.n());
        assertEquals(List.of(Map.of("role", "user", "content", "a\nb")), r.messages());
        assertEquals(List.of("x"), r.stop());
        assertTrue(r.stream() && r.includeUsage());
    }

    @Test
    void unknownFieldsAreCollectedAndNeutralUnsupportedOnesAccepted() throws Exception {
        ParsedRequest r = chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"foo\":1,\"bar\":{},"
                + "\"logprobs\":false,\"tools\":null,\"max_completion_tokens\":7}");
        assertEquals(List.of("foo", "bar"), r.ignoredFields());
        assertEquals(7, r.maxTokens());
    }

    @Test
    void echoIsAcceptedForCompletionsAndChatAndOffByDefault() throws Exception {
        assertTrue(RequestValidator.validate(JSON.readTree("{\"model\":\"m\",\"prompt\":\"x\",\"echo\":true}"),
                Kind.COMPLETION).echo());
        assertTrue(chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"echo\":true,"
                + "\"logprobs\":true}").echo());
        assertFalse(chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}").echo());
    }

    @Test
    void echoWithLogprobsScoresThePromptWithTheLogprobsAlternatives() throws Exception {
        ParsedRequest r = RequestValidator.validate(JSON.readTree(
                "{\"model\":\"m\",\"prompt\":\"x\",\"echo\":true,\"logprobs\":2}"), Kind.COMPLETION);
        assertTrue(r.echoLogprobs());
        assertEquals(-1, r.promptLogprobs());
        assertEquals(2, r.enginePromptLogprobs());
        ParsedRequest both = RequestValidator.validate(JSON.readTree(
                "{\"model\":\"m\",\"prompt\":\"x\",\"echo\":true,\"logprobs\":2,\"prompt_logprobs\":5}"), Kind.COMPLETION);
        assertEquals(5, both.enginePromptLogprobs(), "the engine computes the larger of the two");
        assertFalse(chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"echo\":true,"
                + "\"logprobs\":true}").echoLogprobs(), "chat's echo is not the prompt");
    }

    @Test
    void maxTokensZeroIsAllowedOnlyForACompletionsEcho() throws Exception {
        assertEquals(0, RequestValidator.validate(JSON.readTree(
                "{\"model\":\"m\",\"prompt\":\"x\",\"echo\":true,\"max_tokens\":0}"), Kind.COMPLETION).maxTokens());
        assertThrows(ApiException.class, () -> RequestValidator.validate(JSON.readTree(
                "{\"model\":\"m\",\"prompt\":\"x\",\"max_tokens\":0}"), Kind.COMPLETION));
        assertThrows(ApiException.class, () -> chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                + "\"echo\":true,\"max_tokens\":0}"));
    }

    @Test
    void promptLogprobsAreOffByDefaultAndTakeZeroToTwenty() throws Exception {
        assertEquals(-1, completion("\"x\"").promptLogprobs());
        assertEquals(-1, completion("\"x\"").enginePromptLogprobs());
        for (int k : new int[] {0, 20}) {
            assertEquals(k, RequestValidator.validate(JSON.readTree("{\"model\":\"m\",\"prompt\":\"x\",\"prompt_logprobs\":"
                    + k + "}"), Kind.COMPLETION).enginePromptLogprobs());
            assertEquals(k, chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                    + "\"prompt_logprobs\":" + k + "}").promptLogprobs());
        }
    }

    @ParameterizedTest(name = "{0} -> 400")
    @ValueSource(strings = {"21", "-1", "1.5", "\"2\"", "true"})
    void promptLogprobsOutsideZeroToTwentyOrNotAnIntegerAre400s(String value) {
        for (Kind kind : Kind.values()) {
            String body = kind == Kind.CHAT ? "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                    : "{\"model\":\"m\",\"prompt\":\"x\",";
            ApiException e = assertThrows(ApiException.class,
                    () -> RequestValidator.validate(JSON.readTree(body + "\"prompt_logprobs\":" + value + "}"), kind));
            assertEquals("prompt_logprobs", e.param());
        }
    }

    @Test
    void promptLogprobsWithStreamAreRefusedAsVllmDoes() {
        ApiException e = assertThrows(ApiException.class, () -> RequestValidator.validate(JSON.readTree(
                "{\"model\":\"m\",\"prompt\":\"x\",\"stream\":true,\"prompt_logprobs\":1}"), Kind.COMPLETION));
        assertEquals("prompt_logprobs", e.param());
        assertTrue(e.getMessage().contains("not available when `stream=True`"), e.getMessage());
    }

    private static ParsedRequest completion(String prompt) throws Exception {
        return RequestValidator.validate(JSON.readTree("{\"model\":\"m\",\"prompt\":" + prompt + "}"), Kind.COMPLETION);
    }

    @Test
    void aCompletionPromptMayBeTokenIds() throws Exception {
        ParsedRequest r = completion("[1,2,3]");
        assertNull(r.prompts());
        assertArrayEquals(new int[] {1, 2, 3}, r.promptTokens().getFirst());
        assertEquals(1, r.promptCount());
    }

    @Test
    void aCompletionPromptMayBeABatchOfStringsOrOfTokenArraysAndASingleElementArrayIsOnePrompt() throws Exception {
        ParsedRequest strings = completion("[\"a\",\"b c\",\"d\"]");
        assertEquals(List.of("a", "b c", "d"), strings.prompts());
        assertNull(strings.promptTokens());
        assertEquals(3, strings.promptCount());
        ParsedRequest tokens = completion("[[1,2],[3],[4,5,6]]");
        assertNull(tokens.prompts());
        assertEquals(3, tokens.promptCount());
        assertArrayEquals(new int[] {4, 5, 6}, tokens.promptTokens().get(2));
        assertEquals(List.of("x"), completion("\"x\"").prompts());
        assertEquals(List.of("x"), completion("[\"x\"]").prompts());
        ParsedRequest oneTokenArray = completion("[[7,8]]");
        assertEquals(1, oneTokenArray.promptCount());
        assertArrayEquals(new int[] {7, 8}, oneTokenArray.promptTokens().getFirst());
        assertEquals(1, chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}").promptCount());
    }

    @Test
    void aBatchHoldsAtMost64Prompts() throws Exception {
        String prompts = "[" + String.join(",", java.util.Collections.nCopies(RequestValidator.MAX_PROMPTS, "\"a\"")) + "]";
        assertEquals(64, completion(prompts).promptCount());
        ApiException e = assertThrows(ApiException.class, () -> completion(prompts.replace("]", ",\"a\"]")));
        assertEquals("prompt", e.param());
        assertTrue(e.getMessage().contains("at most 64 prompts, got 65"), e.getMessage());
        String tokenArrays = "[" + String.join(",", java.util.Collections.nCopies(65, "[1]")) + "]";
        assertTrue(assertThrows(ApiException.class, () -> completion(tokenArrays)).getMessage().contains("at most 64"));
    }

    @ParameterizedTest(name = "{0} -> 400 naming {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|model",
            "{\"model\":1,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}|model",
            "{\"model\":\"m\"}|messages",
            "{\"model\":\"m\",\"messages\":[]}|messages",
            "{\"model\":\"m\",\"messages\":[{\"content\":\"x\"}]}|messages[0].role",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"wizard\",\"content\":\"x\"}]}|messages[0].role",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":5}]}|messages[0].content",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}|messages[0].content[0].type",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":-1}|temperature",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":2.5}|temperature",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":\"hot\"}|temperature",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_p\":0}|top_p",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_k\":-5}|top_k",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"min_p\":2}|min_p",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"presence_penalty\":3}|presence_penalty",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"frequency_penalty\":-3}|frequency_penalty",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"repetition_penalty\":0}|repetition_penalty",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":0}|max_tokens",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_completion_tokens\":-1}|max_completion_tokens",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":1.5}|max_tokens",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":0}|n",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"seed\":\"s\"}|seed",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop\":5}|stop",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stop_token_ids\":[\"a\"]}|stop_token_ids",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"min_tokens\":9,\"max_tokens\":2}|min_tokens",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"ignore_eos\":1}|ignore_eos",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"yes\"}|stream",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream_options\":{}}|stream_options",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":true,\"stream_options\":{\"include_usage\":3}}|stream_options.include_usage",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"priority\":\"high\"}|priority",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"user\":7}|user",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logit_bias\":{\"a\":1}}|logit_bias",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logit_bias\":{\"5\":500}}|logit_bias",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"function\"}]}|tools[0].function",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tool_choice\":\"auto\"}|tool_choice",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}|messages[0].tool_call_id",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}}|tool_choice",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":\"json\"}|response_format",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"response_format\":{\"type\":\"json_schema\"}}|response_format.json_schema",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"guided_regex\":5}|guided_regex",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"guided_choice\":[\"a\",3]}|guided_choice",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"structured_outputs\":{\"json_object\":\"yes\"}}|structured_outputs.json_object",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logprobs\":1}|logprobs",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_logprobs\":2}|top_logprobs",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logprobs\":true,\"top_logprobs\":21}|top_logprobs",
    })
    void everyBadFieldIsA400NamingIt(String body, String param) {
        ApiException e = assertThrows(ApiException.class, () -> chat(body));
        assertEquals(400, e.status());
        assertEquals("invalid_request_error", e.type());
        assertEquals(param, e.param(), e.getMessage());
    }

    @ParameterizedTest(name = "{0} -> 400 naming {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"model\":\"m\"}|prompt",
            "{\"model\":\"m\",\"prompt\":\"\"}|prompt",
            "{\"model\":\"m\",\"prompt\":{}}|prompt",
            "{\"model\":\"m\",\"prompt\":[]}|prompt",
            "{\"model\":\"m\",\"prompt\":[\"a\",1]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[\"a\",[1]]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[[1],\"a\"]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[[1],2]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[1,\"a\"]}|prompt",
            "{\"model\":\"m\",\"prompt\":[1,[2]]}|prompt",
            "{\"model\":\"m\",\"prompt\":[\"a\",\"\"]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[[1],[]]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[[1],[2,\"x\"]]}|prompt[1]",
            "{\"model\":\"m\",\"prompt\":[[]]}|prompt[0]",
            "{\"model\":\"m\",\"prompt\":[{}]}|prompt",
            "{\"model\":\"m\",\"prompt\":[null,\"a\"]}|prompt",
            "{\"model\":\"m\",\"prompt\":\"x\",\"max_tokens\":0}|max_tokens",
            "{\"model\":\"m\",\"prompt\":\"x\",\"echo\":true,\"max_tokens\":-1}|max_tokens",
            "{\"model\":\"m\",\"prompt\":\"x\",\"echo\":1}|echo",
            "{\"model\":\"m\",\"prompt\":\"x\",\"suffix\":\"y\"}|suffix",
            "{\"model\":\"m\",\"prompt\":\"x\",\"best_of\":3}|best_of",
            "{\"model\":\"m\",\"prompt\":\"x\",\"logprobs\":true}|logprobs",
            "{\"model\":\"m\",\"prompt\":\"x\",\"logprobs\":21}|logprobs",
    })
    void badCompletionFieldsAre400s(String body, String param) {
        ApiException e = assertThrows(ApiException.class,
                () -> RequestValidator.validate(JSON.readTree(body), Kind.COMPLETION));
        assertEquals(400, e.status());
        assertEquals(param, e.param(), e.getMessage());
    }

    @Test
    void unsupportedFieldsSaySo() {
        ApiException e = assertThrows(ApiException.class, () -> chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"x\"}],\"best_of\":2}"));
        assertTrue(e.getMessage().contains("not supported by Nereid yet"), e.getMessage());
    }

    @Test
    void deprecatedFunctionsAreToolsWithOneCall() throws Exception {
        ParsedRequest r = chat("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                + "\"functions\":[{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}],\"function_call\":{\"name\":\"f\"}}");
        assertTrue(r.tools().legacy());
        assertEquals("f", r.tools().named());
        assertTrue(!r.tools().parallel(), "the deprecated API has room for one call");
        assertEquals("functions[0]", assertThrows(ApiException.class, () -> chat("{\"model\":\"m\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"x\"}],\"functions\":[3]}")).param());
        assertEquals("messages[1].function_call", assertThrows(ApiException.class, () -> chat("{\"model\":\"m\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"user\",\"content\":\"y\",\"function_call\":"
                + "{\"name\":\"f\"}}]}")).param());
    }

    @Test
    void aBodyThatIsNotAnObjectIsA400() {
        assertEquals(400, assertThrows(ApiException.class, () -> chat("[1]")).status());
    }
}
