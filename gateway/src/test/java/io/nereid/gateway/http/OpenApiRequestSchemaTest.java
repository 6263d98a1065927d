package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nereid.gateway.http.ParsedRequest.Kind;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The request schemas of openapi.json name exactly the fields {@link RequestValidator} knows, with its constraints. */
class OpenApiRequestSchemaTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]";
    private static final String COMPLETION = "{\"model\":\"m\",\"prompt\":\"x\"";

    @Test
    void eachCompletionRequestSchemaHasExactlyTheFieldsTheValidatorKnowsForItsRoute() throws Exception {
        Set<String> candidates = new TreeSet<>(RequestValidator.COMMON);
        candidates.addAll(RequestValidator.UNSUPPORTED);
        candidates.addAll(OpenApiContract.properties("ChatCompletionRequest"));
        candidates.addAll(OpenApiContract.properties("CompletionRequest"));
        candidates.addAll(Set.of("messages", "prompt", "top_logprobs"));
        assertEquals(known(Kind.CHAT, CHAT + "}", candidates), OpenApiContract.properties("ChatCompletionRequest"));
        assertEquals(known(Kind.COMPLETION, COMPLETION + "}", candidates), OpenApiContract.properties("CompletionRequest"));
    }

    /** The candidates the validator does not report as ignored, each sent as null (absent) beside a valid base. */
    private static Set<String> known(Kind kind, String base, Set<String> candidates) throws Exception {
        Set<String> out = new TreeSet<>();
        for (String f : candidates) {
            ObjectNode body = (ObjectNode) JSON.readTree(base);
            if (!body.has(f)) {
                body.putNull(f);
            }
            if (!RequestValidator.validate(body, kind).ignoredFields().contains(f)) {
                out.add(f);
            }
        }
        return out;
    }

    @Test
    void fieldsTheValidatorRejectsAsNotImplementedAreDocumentedAsSuch() {
        JsonNode props = OpenApiContract.schema("NotImplementedRequestFields").get("properties");
        assertEquals(new TreeSet<>(RequestValidator.UNSUPPORTED), OpenApiContract.properties("NotImplementedRequestFields"));
        for (String f : RequestValidator.UNSUPPORTED) {
            assertTrue(props.get(f).get("description").asText().startsWith("Not implemented"), f);
        }
        for (String f : OpenApiContract.properties("CommonRequestFields")) {
            assertFalse(RequestValidator.UNSUPPORTED.contains(f), f);
        }
    }

    @Test
    void tokenizeAndDetokenizeSchemasHaveTheFieldsTheServerKnows() {
        assertEquals(new TreeSet<>(OpenAiRoutes.TOKENIZE_FIELDS), OpenApiContract.properties("TokenizeRequest"));
        assertEquals(new TreeSet<>(OpenAiRoutes.DETOKENIZE_FIELDS), OpenApiContract.properties("DetokenizeRequest"));
    }

    @Test
    void theSchemasAcceptWhatTheValidatorAcceptsAndRejectWhatItRejects() throws Exception {
        String[] accepted = {"\"temperature\":0", "\"temperature\":2", "\"temperature\":null", "\"top_p\":1",
            "\"top_k\":-1", "\"min_p\":1", "\"presence_penalty\":-2", "\"frequency_penalty\":2", "\"repetition_penalty\":0.5",
            "\"max_tokens\":1", "\"n\":1", "\"min_tokens\":0", "\"stop\":\"\"", "\"stop\":[\"a\",\"b\"]", "\"seed\":-7",
            "\"stop_token_ids\":[2]", "\"logit_bias\":{\"5\":-100}", "\"tools\":[]", "\"tool_choice\":\"none\"",
            "\"best_of\":1", "\"echo\":false", "\"echo\":true", "\"response_format\":null", "\"stream\":true,\"stream_options\":{\"include_usage\":true}",
            "\"user\":\"u\"", "\"priority\":-3", "\"ignore_eos\":true", "\"prompt_logprobs\":0", "\"prompt_logprobs\":20",
            "\"prompt_logprobs\":null"};
        String[] rejected = {"\"temperature\":3", "\"temperature\":-0.5", "\"temperature\":\"hot\"", "\"top_p\":0",
            "\"top_k\":-2", "\"min_p\":1.5", "\"presence_penalty\":3", "\"frequency_penalty\":-2.5",
            "\"repetition_penalty\":0", "\"max_tokens\":0", "\"max_completion_tokens\":0", "\"n\":0", "\"min_tokens\":-1",
            "\"stop\":[\"\"]", "\"stop\":5", "\"seed\":1.5", "\"stop_token_ids\":[\"a\"]", "\"logit_bias\":{\"5\":200}",
            "\"logit_bias\":{\"a\":1}", "\"best_of\":2",
            "\"echo\":\"yes\"", "\"suffix\":\"s\"", "\"stream\":\"yes\"", "\"user\":3", "\"model\":null",
            "\"prompt_logprobs\":21", "\"prompt_logprobs\":-1", "\"echo\":false,\"max_tokens\":0"};
        for (Kind kind : Kind.values()) {
            String base = kind == Kind.CHAT ? CHAT : COMPLETION;
            String schema = kind == Kind.CHAT ? "ChatCompletionRequest" : "CompletionRequest";
            for (String field : accepted) {
                JsonNode body = JSON.readTree(base + "," + field + "}");
                RequestValidator.validate(body, kind);
                OpenApiContract.assertValid(schema, body);
            }
            for (String field : rejected) {
                JsonNode body = JSON.readTree(base + "," + field + "}");
                assertThrows(ApiException.class, () -> RequestValidator.validate(body, kind), field);
                assertFalse(OpenApiContract.errors(schema, body).isEmpty(), kind + " schema accepts " + field);
            }
        }
    }

    @Test
    void routeSpecificFieldsHaveTheirOwnShapes() throws Exception {
        String[] chatRejected = {"{\"model\":\"m\",\"messages\":[]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}",
            CHAT + ",\"tools\":[{\"type\":\"function\"}]}", CHAT + ",\"tool_choice\":\"sometimes\"}",
            CHAT + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"bad name\"}}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}",
            CHAT + ",\"logprobs\":true,\"top_logprobs\":21}", CHAT + ",\"logprobs\":1}"};
        String batch65 = String.join(",", java.util.Collections.nCopies(RequestValidator.MAX_PROMPTS + 1, "\"a\""));
        String[] completionRejected = {"\"prompt\":\"\"", "\"prompt\":[\"a\",1]", "\"prompt\":[[1],\"a\"]",
            "\"prompt\":[[1],[]]", "\"prompt\":[\"a\",\"\"]", "\"prompt\":[" + batch65 + "]", "\"prompt\":[]",
            "\"logprobs\":21", "\"logprobs\":true"};
        for (String b : chatRejected) {
            JsonNode body = JSON.readTree(b);
            assertThrows(ApiException.class, () -> RequestValidator.validate(body, Kind.CHAT), b);
            assertFalse(OpenApiContract.errors("ChatCompletionRequest", body).isEmpty(), b);
        }
        for (String f : completionRejected) {
            JsonNode body = JSON.readTree("{\"model\":\"m\"," + f + (f.startsWith("\"prompt") ? "}" : ",\"prompt\":\"x\"}"));
            assertThrows(ApiException.class, () -> RequestValidator.validate(body, Kind.COMPLETION), f);
            assertFalse(OpenApiContract.errors("CompletionRequest", body).isEmpty(), f);
        }
        for (String prompt : new String[] {"[1,2,3]", "[\"x\"]", "[\"a\",\"b\"]", "[[1,2],[3]]", "[[1]]",
            "[" + batch65.substring(4) + "]"}) {
            JsonNode ok = JSON.readTree(COMPLETION.replace("\"x\"", prompt) + ",\"logprobs\":2}");
            RequestValidator.validate(ok, Kind.COMPLETION);
            OpenApiContract.assertValid("CompletionRequest", ok);
        }
        JsonNode chatOk = JSON.readTree(CHAT + ",\"logprobs\":true,\"top_logprobs\":20}");
        RequestValidator.validate(chatOk, Kind.CHAT);
        OpenApiContract.assertValid("ChatCompletionRequest", chatOk);
    }
}
