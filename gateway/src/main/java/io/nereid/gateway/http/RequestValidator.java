package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.nereid.gateway.http.ParsedRequest.Kind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns the JSON body of a completion request into a {@link ParsedRequest}: checks every field's
 * JSON type and OpenAI's own rules (temperature at most 2, max_tokens at least 1 but for an echo
 * that scores, top_logprobs only with logprobs, no prompt_logprobs on a stream, ...), applies
 * OpenAI's defaults, and fails with a 400 {@link ApiException} naming the field. The ranges of the
 * engine's fields are the engine's ({@code SamplingParams}, {@code GenerationRequest.Builder}): they
 * are checked here through them, once, against a one-token prompt, and their
 * {@link RequestValidationException}s are named as the wire names the field ({@link ParsedRequest#invalid}).
 * Fields Nereid does not implement yet are a 400 that says so; unknown fields are collected so the
 * caller can name them in {@code x-nereid-ignored-fields}. Pure and stateless.
 */
public final class RequestValidator {

    /** Fields both completion routes implement (with {@code messages}/{@code top_logprobs} for chat, {@code prompt} for completions). */
    static final Set<String> COMMON = Set.of("model", "max_tokens", "max_completion_tokens", "temperature",
            "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "stop",
            "stop_token_ids", "n", "min_tokens", "ignore_eos", "stream", "stream_options", "user", "priority",
            "logit_bias", "logprobs", "echo", "prompt_logprobs");
    /** Known, not implemented: a 400 unless absent, null, false, empty or the neutral value. */
    static final Set<String> UNSUPPORTED = Set.of("suffix", "best_of", "audio",
            "modalities", "prediction", "reasoning_effort", "web_search_options", "guided_whitespace_pattern");
    /** Fields only chat takes (completions ignores them as unknown). */
    static final Set<String> CHAT_ONLY = Set.of("top_logprobs", "tools", "tool_choice", "parallel_tool_calls",
            "functions", "function_call", "chat_template_kwargs");
    /** Most prompts one completions request may batch (each generated with {@code n} choices). */
    static final int MAX_PROMPTS = 64;
    private static final String PROMPT_SHAPES = "'prompt' must be a string, an array of token ids, or a non-empty array"
            + " of strings or of token-id arrays (a batch of up to " + MAX_PROMPTS + " prompts)";
    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool", "function");

    private RequestValidator() {
    }

    /** @throws ApiException 400 naming the first bad field */
    public static ParsedRequest validate(JsonNode body, Kind kind) {
        object(body);
        List<String> ignored = new ArrayList<>();
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (UNSUPPORTED.contains(f)) {
                if (!neutral(f, body.get(f))) {
                    throw ApiException.unsupported(f, "remove it or send null");
                }
            } else if (!COMMON.contains(f) && !StructuredOutputs.FIELDS.contains(f) && !f.equals(kind == Kind.CHAT ? "messages" : "prompt")
                    && !(kind == Kind.CHAT && CHAT_ONLY.contains(f))) {
                ignored.add(f);
            }
        }
        String model = string(body, "model", true);
        List<Map<String, Object>> messages = null;
        List<String> prompts = null;
        List<int[]> promptTokens = null;
        if (kind == Kind.CHAT) {
            messages = messages(body.get("messages"));
        } else {
            JsonNode p = body.get("prompt");
            if (p == null || p.isNull()) {
                throw ApiException.invalid("prompt", "'prompt' is required");
            } else if (p.isTextual()) {
                prompts = List.of(promptText(p, "prompt"));
            } else if (!p.isArray() || p.isEmpty()) {
                throw ApiException.invalid("prompt", PROMPT_SHAPES);
            } else if (p.get(0).isIntegralNumber()) {
                promptTokens = List.of(intArray(p, "prompt"));
            } else if (p.size() > MAX_PROMPTS) {
                throw ApiException.invalid("prompt", "a batch holds at most " + MAX_PROMPTS + " prompts, got " + p.size());
            } else if (p.get(0).isTextual()) {
                prompts = new ArrayList<>();
                for (int i = 0; i < p.size(); i++) {
                    prompts.add(promptText(batchElement(p, i, JsonNode::isTextual), "prompt[" + i + "]"));
                }
            } else if (p.get(0).isArray()) {
                promptTokens = new ArrayList<>();
                for (int i = 0; i < p.size(); i++) {
                    int[] tokens = intArray(batchElement(p, i, JsonNode::isArray), "prompt[" + i + "]");
                    if (tokens.length == 0) {
                        throw ApiException.invalid("prompt[" + i + "]", "'prompt[" + i + "]' must not be empty");
                    }
                    promptTokens.add(tokens);
                }
            } else {
                throw ApiException.invalid("prompt", PROMPT_SHAPES);
            }
        }
        Integer maxTokens = optInt(body, "max_completion_tokens");
        if (maxTokens == null) {
            maxTokens = optInt(body, "max_tokens");
        }
        boolean echo = optBool(body, "echo", false);
        // Completions with echo may ask for no tokens at all: the prompt back, scored with logprobs (OpenAI).
        boolean scoreOnly = kind == Kind.COMPLETION && echo && maxTokens != null && maxTokens == 0;
        if (maxTokens != null && maxTokens < 1 && !scoreOnly) {
            throw ApiException.invalid(body.hasNonNull("max_completion_tokens") ? "max_completion_tokens" : "max_tokens",
                    "max_tokens must be at least 1, got " + maxTokens);
        }
        float temperature = optFloat(body, "temperature", 1f);
        if (temperature > 2) {
            throw ApiException.invalid("temperature", "temperature must be in [0, 2], got " + temperature);
        }
        Long seedValue = null;
        if (body.hasNonNull("seed")) {
            JsonNode s = body.get("seed");
            if (!s.isIntegralNumber() || !s.canConvertToLong()) {
                throw ApiException.invalid("seed", "'seed' must be an integer");
            }
            seedValue = s.asLong();
        }
        // Chat: logprobs: bool + top_logprobs: 0..20; legacy completions: logprobs: int 0..20 alternatives.
        boolean logprobs;
        int topLogprobs;
        if (kind == Kind.CHAT) {
            logprobs = optBool(body, "logprobs", false);
            topLogprobs = optInt(body, "top_logprobs", 0);
            if (topLogprobs > 0 && !logprobs) {
                throw ApiException.invalid("top_logprobs", "top_logprobs needs 'logprobs': true");
            }
        } else {
            Integer lp = optInt(body, "logprobs");
            logprobs = lp != null;
            topLogprobs = lp == null ? 0 : lp;
        }
        boolean stream = optBool(body, "stream", false);
        Integer promptLogprobs = optInt(body, "prompt_logprobs");
        if (promptLogprobs != null && promptLogprobs < 0) {
            // The engine's -1 means "off"; on the wire any negative number is out of range.
            throw ApiException.invalid("prompt_logprobs", "prompt_logprobs must be in [0, " + SamplingParams.MAX_LOGPROBS
                    + "], got " + promptLogprobs);
        }
        if (promptLogprobs != null && stream) {
            // vLLM's rule (it sends prompt logprobs only in whole responses); 0 too, since nothing would carry them.
            throw ApiException.invalid("prompt_logprobs", "`prompt_logprobs` are not available when `stream=True`.");
        }
        SamplingParams sampling;
        try {
            sampling = new SamplingParams(temperature, optInt(body, "top_k", -1), optFloat(body, "top_p", 1f),
                    optFloat(body, "min_p", 0f), optFloat(body, "repetition_penalty", 1f),
                    optFloat(body, "presence_penalty", 0f), optFloat(body, "frequency_penalty", 0f), logitBias(body),
                    seedValue, topLogprobs);
        } catch (RequestValidationException e) {
            throw ParsedRequest.invalid(kind, e);
        }
        int n = optInt(body, "n", 1);
        int minTokens = optInt(body, "min_tokens", 0);
        boolean includeUsage = false;
        if (body.hasNonNull("stream_options")) {
            JsonNode so = body.get("stream_options");
            if (!so.isObject()) {
                throw ApiException.invalid("stream_options", "'stream_options' must be an object");
            }
            if (!stream) {
                throw ApiException.invalid("stream_options", "'stream_options' is only allowed when 'stream' is true");
            }
            includeUsage = optBool(so, "include_usage", false, "stream_options.include_usage");
        }
        string(body, "user", false);
        ParsedRequest parsed = new ParsedRequest(kind, model, messages, prompts, promptTokens, sampling,
                stop(body.get("stop")),
                body.hasNonNull("stop_token_ids") ? intArray(body.get("stop_token_ids"), "stop_token_ids") : new int[0],
                maxTokens, minTokens, optBool(body, "ignore_eos", false), n, stream, includeUsage,
                optInt(body, "priority", 0), logprobs, echo, promptLogprobs == null ? -1 : promptLogprobs,
                List.copyOf(ignored), StructuredOutputs.parse(body), kind == Kind.CHAT ? ToolsRequest.parse(body) : null, null,
                kind == Kind.CHAT ? templateKwargs(body) : Map.of());
        // The engine's own checks of every option, now, before the prompt is rendered and tokenized: against
        // a one-token prompt, and with no max_tokens as many as min_tokens asks for (the real request is
        // checked again once its prompt and max_tokens are known).
        parsed.engineRequest("check", new int[] {0}, maxTokens != null ? maxTokens : Math.max(0, minTokens));
        return parsed;
    }

    /** vLLM's {@code chat_template_kwargs}: more variables for the chat template (e.g. {@code enable_thinking}). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> templateKwargs(JsonNode body) {
        JsonNode k = body.get("chat_template_kwargs");
        if (k == null || k.isNull()) {
            return Map.of();
        }
        if (!k.isObject()) {
            throw ApiException.invalid("chat_template_kwargs", "'chat_template_kwargs' must be an object of template variables");
        }
        for (String reserved : List.of("messages", "tools", "add_generation_prompt", "bos_token", "eos_token")) {
            if (k.has(reserved)) {
                throw ApiException.invalid("chat_template_kwargs", "'chat_template_kwargs' may not set '" + reserved
                        + "', which the server passes itself");
            }
        }
        return Map.copyOf(SseChunks.JSON.convertValue(k, Map.class));
    }

    /** {@code POST /tokenize}: {@code prompt} or {@code messages}, as vLLM takes them. */
    public static TokenizeRequest tokenize(JsonNode body) {
        object(body);
        String model = string(body, "model", false);
        boolean hasPrompt = body.hasNonNull("prompt");
        boolean hasMessages = body.hasNonNull("messages");
        if (hasPrompt == hasMessages) {
            throw ApiException.invalid(hasPrompt ? "messages" : "prompt", "send exactly one of 'prompt' and 'messages'");
        }
        if (hasPrompt) {
            return new TokenizeRequest(model, string(body, "prompt", true), null, false,
                    optBool(body, "add_special_tokens", true));
        }
        return new TokenizeRequest(model, null, messages(body.get("messages")),
                optBool(body, "add_generation_prompt", true), optBool(body, "add_special_tokens", false));
    }

    /** {@code POST /detokenize}: the {@code tokens}, each in {@code [0, vocabSize)}. */
    public static int[] detokenize(JsonNode body, int vocabSize) {
        object(body);
        if (!body.hasNonNull("tokens")) {
            throw ApiException.invalid("tokens", "'tokens' is required");
        }
        int[] tokens = intArray(body.get("tokens"), "tokens");
        for (int t : tokens) {
            if (t < 0 || t >= vocabSize) {
                throw ApiException.invalid("tokens", "token id " + t + " is outside the vocabulary [0, " + vocabSize + ")");
            }
        }
        return tokens;
    }

    private static void object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiException.invalid(null, "the request body must be a JSON object");
        }
    }

    private static boolean neutral(String field, JsonNode v) {
        return v.isNull() || (v.isBoolean() && !v.asBoolean()) || ((v.isArray() || v.isObject()) && v.isEmpty())
                || (field.equals("best_of") && v.isIntegralNumber() && v.asInt() == 1)
                || (field.equals("top_logprobs") && v.isIntegralNumber() && v.asInt() == 0)
                || (field.equals("tool_choice") && v.isTextual() && v.asText().equals("none"));
    }

    private static String promptText(JsonNode p, String at) {
        if (p.asText().isEmpty()) {
            throw ApiException.invalid(at, "'" + at + "' must not be empty");
        }
        return p.asText();
    }

    /** Element {@code i} of a prompt batch, which must have the first element's shape ({@code same}). */
    private static JsonNode batchElement(JsonNode batch, int i, java.util.function.Predicate<JsonNode> same) {
        if (!same.test(batch.get(i))) {
            throw ApiException.invalid("prompt[" + i + "]", "a batch of prompts is an array of strings or an array of"
                    + " token-id arrays, not a mix: 'prompt[" + i + "]' differs from 'prompt[0]'");
        }
        return batch.get(i);
    }

    private static List<Map<String, Object>> messages(JsonNode m) {
        if (m == null || m.isNull()) {
            throw ApiException.invalid("messages", "'messages' is required");
        }
        if (!m.isArray() || m.isEmpty()) {
            throw ApiException.invalid("messages", "'messages' must be a non-empty array");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        String lastFunctionCall = null;   // the id given to the latest assistant function_call (legacy functions)
        for (int i = 0; i < m.size(); i++) {
            String at = "messages[" + i + "]";
            JsonNode msg = m.get(i);
            if (!msg.isObject()) {
                throw ApiException.invalid(at, at + " must be an object");
            }
            JsonNode role = msg.get("role");
            if (role == null || !role.isTextual()) {
                throw ApiException.invalid(at + ".role", at + ".role must be a string");
            }
            if (!ROLES.contains(role.asText())) {
                throw ApiException.invalid(at + ".role", at + ".role must be one of " + ROLES + ", got '"
                        + role.asText() + "'");
            }
            if (role.asText().equals("function")) {
                out.add(functionResult(msg, at, lastFunctionCall != null ? lastFunctionCall : legacyCallId(i)));
                continue;
            }
            if (msg.hasNonNull("function_call")) {
                lastFunctionCall = legacyCallId(i);
                out.add(functionCall(msg, role.asText(), at, lastFunctionCall));
                continue;
            }
            Map<String, Object> converted = new LinkedHashMap<>();
            converted.put("role", role.asText());
            boolean calls = role.asText().equals("assistant") && msg.hasNonNull("tool_calls") && !msg.get("tool_calls").isEmpty();
            converted.put("content", calls && (msg.get("content") == null || msg.get("content").isNull()) ? null
                    : content(msg.get("content"), at + ".content"));
            if (msg.hasNonNull("name")) {
                converted.put("name", string(msg, "name", false));
            }
            if (role.asText().equals("tool")) {
                JsonNode id = msg.get("tool_call_id");
                if (id == null || !id.isTextual()) {
                    throw ApiException.invalid(at + ".tool_call_id", at + ".tool_call_id is required: the id of the call this answers");
                }
                converted.put("tool_call_id", id.asText());
            } else if (msg.hasNonNull("tool_calls") && !msg.get("tool_calls").isEmpty()) {
                if (!calls) {
                    throw ApiException.invalid(at + ".tool_calls", "only assistant messages carry tool_calls");
                }
                converted.put("tool_calls", toolCalls(msg.get("tool_calls"), at + ".tool_calls"));
            }
            out.add(converted);
        }
        return out;
    }

    /** A deprecated {@code function} message (a function's result) as the tool message templates know. */
    private static Map<String, Object> functionResult(JsonNode msg, String at, String callId) {
        if (!msg.path("name").isTextual()) {
            throw ApiException.invalid(at + ".name", at + ".name is required: the function whose result this is");
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("role", "tool");
        result.put("content", content(msg.get("content"), at + ".content"));
        result.put("name", msg.get("name").asText());
        result.put("tool_call_id", callId);
        return result;
    }

    /** An assistant message with a deprecated {@code function_call}, as one tool call with id {@code callId}. */
    private static Map<String, Object> functionCall(JsonNode msg, String role, String at, String callId) {
        if (!role.equals("assistant")) {
            throw ApiException.invalid(at + ".function_call", "only assistant messages carry function_call");
        }
        if (msg.hasNonNull("tool_calls")) {
            throw ApiException.invalid(at + ".function_call", at + " has both function_call and tool_calls");
        }
        JsonNode fc = msg.get("function_call");
        if (!fc.isObject() || !fc.path("name").isTextual()) {
            throw ApiException.invalid(at + ".function_call", at + ".function_call must be {\"name\", \"arguments\"}");
        }
        ObjectNode call = SseChunks.JSON.createObjectNode().put("id", callId).put("type", "function");
        call.set("function", fc);
        Map<String, Object> converted = new LinkedHashMap<>();
        converted.put("role", "assistant");
        converted.put("content", msg.hasNonNull("content") ? content(msg.get("content"), at + ".content") : null);
        converted.put("tool_calls", toolCalls(SseChunks.JSON.createArrayNode().add(call), at + ".function_call"));
        return converted;
    }

    /**
     * The id a legacy {@code function_call} in message {@code i} goes by in the template: the
     * deprecated API has none, templates such as Mistral's want one (9 letters and digits).
     */
    private static String legacyCallId(int i) {
        return String.format("fn%07d", i);
    }

    /**
     * An assistant message's earlier calls, for the chat template: each {@code {id, type, function:
     * {name, arguments}}} with the arguments parsed into an object (what HF templates expect) when
     * they are JSON, kept as text otherwise.
     */
    private static List<Map<String, Object>> toolCalls(JsonNode calls, String at) {
        if (!calls.isArray()) {
            throw ApiException.invalid(at, at + " must be an array");
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (int k = 0; k < calls.size(); k++) {
            JsonNode c = calls.get(k);
            String here = at + "[" + k + "]";
            JsonNode f = c.get("function");
            if (!c.isObject() || f == null || !f.isObject() || !f.path("name").isTextual()) {
                throw ApiException.invalid(here, here + " must be {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}");
            }
            Object arguments = f.hasNonNull("arguments") ? f.get("arguments").asText() : "{}";
            try {
                JsonNode parsed = SseChunks.JSON.readTree((String) arguments);
                if (parsed != null && parsed.isObject()) {
                    arguments = SseChunks.JSON.convertValue(parsed, Map.class);
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                // not JSON: the template gets the text
            }
            Map<String, Object> function = new LinkedHashMap<>();
            function.put("name", f.get("name").asText());
            function.put("arguments", arguments);
            Map<String, Object> call = new LinkedHashMap<>();
            call.put("id", c.path("id").asText(""));
            call.put("type", "function");
            call.put("function", function);
            out.add(call);
        }
        return out;
    }

    /** A string, or text content parts joined with newlines (vLLM's "string" content format). */
    private static String content(JsonNode c, String at) {
        if (c == null || c.isNull()) {
            return "";
        }
        if (c.isTextual()) {
            return c.asText();
        }
        if (!c.isArray()) {
            throw ApiException.invalid(at, at + " must be a string or an array of content parts");
        }
        List<String> texts = new ArrayList<>();
        for (int j = 0; j < c.size(); j++) {
            JsonNode part = c.get(j);
            String type = part.isObject() && part.get("type") != null ? part.get("type").asText() : null;
            if ("text".equals(type) && part.hasNonNull("text") && part.get("text").isTextual()) {
                texts.add(part.get("text").asText());
            } else if (type != null && !type.equals("text")) {
                throw ApiException.unsupported(at + "[" + j + "].type", "content parts of type '" + type
                        + "' (only text)");
            } else {
                throw ApiException.invalid(at + "[" + j + "]", at + "[" + j
                        + "] must be {\"type\": \"text\", \"text\": string}");
            }
        }
        return String.join("\n", texts);
    }

    private static List<String> stop(JsonNode s) {
        if (s == null || s.isNull()) {
            return List.of();
        }
        if (s.isTextual()) {
            return s.asText().isEmpty() ? List.of() : List.of(s.asText());
        }
        if (!s.isArray()) {
            throw ApiException.invalid("stop", "'stop' must be a string or an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : s) {
            if (!e.isTextual() || e.asText().isEmpty()) {
                throw ApiException.invalid("stop", "'stop' must contain non-empty strings only");
            }
            out.add(e.asText());
        }
        return out;
    }

    private static Map<Integer, Float> logitBias(JsonNode body) {
        JsonNode b = body.get("logit_bias");
        if (b == null || b.isNull()) {
            return Map.of();
        }
        if (!b.isObject()) {
            throw ApiException.invalid("logit_bias", "'logit_bias' must be an object of token id -> bias");
        }
        Map<Integer, Float> out = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = b.fields(); it.hasNext(); ) {
            var e = it.next();
            try {
                if (!e.getValue().isNumber()) {
                    throw new NumberFormatException();
                }
                out.put(Integer.parseInt(e.getKey()), e.getValue().floatValue());
            } catch (NumberFormatException ex) {
                throw ApiException.invalid("logit_bias", "'logit_bias' keys must be token ids and values numbers, got '"
                        + e.getKey() + "'");
            }
        }
        return out;
    }

    private static int[] intArray(JsonNode a, String field) {
        if (!a.isArray()) {
            throw ApiException.invalid(field, "'" + field + "' must be an array of integers");
        }
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            if (!a.get(i).isIntegralNumber() || !a.get(i).canConvertToInt()) {
                throw ApiException.invalid(field, "'" + field + "' must be an array of integers");
            }
            out[i] = a.get(i).asInt();
        }
        return out;
    }

    private static String string(JsonNode body, String field, boolean required) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw ApiException.invalid(field, "'" + field + "' is required");
            }
            return null;
        }
        if (!v.isTextual()) {
            throw ApiException.invalid(field, "'" + field + "' must be a string");
        }
        return v.asText();
    }

    private static Integer optInt(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isIntegralNumber() && v.canConvertToInt()) {
            return v.asInt();
        }
        if (v.isFloatingPointNumber() && v.asDouble() == Math.rint(v.asDouble()) && Math.abs(v.asDouble()) < 1e9) {
            return (int) v.asDouble();
        }
        throw ApiException.invalid(field, "'" + field + "' must be an integer");
    }

    private static int optInt(JsonNode body, String field, int dflt) {
        Integer v = optInt(body, field);
        return v == null ? dflt : v;
    }

    private static float optFloat(JsonNode body, String field, float dflt) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isNumber()) {
            throw ApiException.invalid(field, "'" + field + "' must be a number");
        }
        return v.floatValue();
    }

    private static boolean optBool(JsonNode body, String field, boolean dflt) {
        return optBool(body, field, dflt, field);
    }

    private static boolean optBool(JsonNode body, String field, boolean dflt, String name) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw ApiException.invalid(name, "'" + name + "' must be a boolean");
        }
        return v.asBoolean();
    }
}
