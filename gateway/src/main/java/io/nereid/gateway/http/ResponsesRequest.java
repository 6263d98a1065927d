package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A {@code POST /v1/responses} request read: checked field by field, and translated into the chat
 * completion it runs as ({@link #chat}: the conversation as chat messages, {@code text.format} as
 * {@code response_format}, function tools in chat's shape), so that one validator, template,
 * structured-output and tool-call path serves both APIs. Keeps what only the Responses API has
 * (instructions, store, background, metadata, the previous response) for the response object, and
 * this request's input items with ids for {@code input_items}.
 *
 * <p>The conversation a later {@code previous_response_id} continues is chat messages: the earlier
 * conversation, this input, then this output (added by the exchange). {@code instructions} are not
 * carried over to the next response, as OpenAI's are not.
 */
final class ResponsesRequest {

    static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** Every top-level field this route knows (the OpenAI API's, and vLLM's sampling extensions). */
    static final Set<String> FIELDS = Set.of("model", "input", "instructions", "max_output_tokens", "temperature", "top_p",
            "text", "tools", "tool_choice", "parallel_tool_calls", "stream", "store", "previous_response_id", "metadata",
            "background", "reasoning", "user", "truncation", "include", "service_tier", "prompt_cache_key",
            "safety_identifier", "top_logprobs", "max_tool_calls", "stream_options", "prompt", "conversation",
            "seed", "top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "min_tokens",
            "ignore_eos", "stop");
    /** Passed to the chat request as they are (the last six: vLLM's sampling extensions, as on chat). */
    private static final Set<String> SAMPLING = Set.of("temperature", "top_p", "user", "stream", "seed", "top_k", "min_p",
            "repetition_penalty", "presence_penalty", "frequency_penalty", "min_tokens", "ignore_eos", "stop");

    final JsonNode body;
    final String model;
    final String instructions;
    final boolean stream;
    final boolean store;
    final boolean background;
    final String previousId;
    final ObjectNode metadata;
    final ArrayNode tools;          // as the response echoes them (the Responses shape)
    final JsonNode toolChoice;      // as given, or "auto"
    final ObjectNode text;          // {"format": ...} as the response echoes it
    final ObjectNode reasoning;     // {"effort", "summary"}
    final boolean summary;          // reasoning.summary asked for
    final ArrayNode inputItems;     // this request's input, as input items with ids
    final ArrayNode conversation;   // chat messages: the previous conversation and this input (no instructions)
    final ObjectNode chat;          // the chat completion request this runs as
    final List<String> ignored = new ArrayList<>();
    final boolean logprobs;         // include message.output_text.logprobs
    final int topLogprobs;

    /**
     * @param previousConversation the conversation of {@code previous_response_id} (chat messages), or
     *                             null when there is none
     * @throws ApiException 400 naming the field for anything malformed or not supported
     */
    ResponsesRequest(JsonNode body, ArrayNode previousConversation) {
        if (body == null || !body.isObject()) {
            throw ApiException.invalid(null, "the request body must be a JSON object");
        }
        this.body = body;
        body.fieldNames().forEachRemaining(f -> {
            if (!FIELDS.contains(f)) {
                ignored.add(f);
            }
        });
        this.model = string("model", true);
        this.instructions = string("instructions", false);
        this.stream = bool("stream", false);
        this.store = bool("store", true);
        this.background = bool("background", false);
        this.previousId = string("previous_response_id", false);
        if (background && !store) {
            throw ApiException.invalid("background", "background responses must be stored (store: true)");
        }
        if (background && stream) {
            throw ApiException.invalid("background", "background together with stream is not supported yet: create it"
                    + " in the background, then GET /v1/responses/{id}");
        }
        refuseUnless("conversation", "the Conversations API is not supported; chain turns with previous_response_id");
        refuseUnless("prompt", "prompt templates are not supported; send input and instructions");
        refuseUnless("max_tool_calls", "max_tool_calls is not supported");
        refuseUnless("stream_options", "stream_options is not supported");
        JsonNode include = body.get("include");
        boolean wantLogprobs = false;
        if (include != null && !include.isNull()) {
            if (!include.isArray()) {
                throw ApiException.invalid("include", "'include' must be an array");
            }
            for (JsonNode i : include) {
                if (!"message.output_text.logprobs".equals(i.asText())) {
                    throw ApiException.invalid("include", "include '" + i.asText() + "' is not supported (only"
                            + " message.output_text.logprobs: no encrypted reasoning, no hosted-tool outputs here)");
                }
                wantLogprobs = true;
            }
        }
        JsonNode top = body.get("top_logprobs");
        int topLogprobs = 0;
        if (top != null && !top.isNull()) {
            if (!top.canConvertToInt() || !top.isIntegralNumber() || top.asInt() < 0 || top.asInt() > 20) {
                throw ApiException.invalid("top_logprobs", "top_logprobs must be an integer in [0, 20]");
            }
            topLogprobs = top.asInt();
            if (topLogprobs > 0 && !wantLogprobs) {
                throw ApiException.invalid("top_logprobs", "top_logprobs needs include [\"message.output_text.logprobs\"]");
            }
        }
        this.logprobs = wantLogprobs;
        this.topLogprobs = topLogprobs;
        if (body.hasNonNull("truncation") && !"disabled".equals(body.get("truncation").asText())) {
            throw ApiException.invalid("truncation", "truncation must be 'disabled' (an input over the context is a"
                    + " 400, never cut)");
        }
        if (body.hasNonNull("service_tier") && !Set.of("auto", "default").contains(body.get("service_tier").asText())) {
            throw ApiException.invalid("service_tier", "service_tier must be 'auto' or 'default' (one tier here)");
        }
        for (String f : List.of("prompt_cache_key", "safety_identifier")) {
            if (body.has(f) && !body.get(f).isNull() && !body.get(f).isTextual()) {
                throw ApiException.invalid(f, "'" + f + "' must be a string");
            }
        }
        this.metadata = metadata();
        this.reasoning = reasoning();
        this.summary = reasoning.hasNonNull("summary");

        this.chat = NODES.objectNode();
        chat.put("model", model);
        for (String f : SAMPLING) {
            if (body.has(f)) {
                chat.set(f, body.get(f));
            }
        }
        if (body.hasNonNull("max_output_tokens")) {
            chat.set("max_completion_tokens", body.get("max_output_tokens"));
        }
        if (body.has("parallel_tool_calls")) {
            chat.set("parallel_tool_calls", body.get("parallel_tool_calls"));
        }
        if (logprobs) {
            chat.put("logprobs", true).put("top_logprobs", topLogprobs);
        }
        if (reasoning.hasNonNull("effort")) {
            chat.set("chat_template_kwargs", NODES.objectNode().put("reasoning_effort", reasoning.get("effort").asText()));
        }
        this.text = textFormat(chat);
        this.tools = tools(chat);
        this.toolChoice = toolChoice(chat);

        this.inputItems = NODES.arrayNode();
        ArrayNode messages = NODES.arrayNode();
        if (previousConversation != null) {
            messages.addAll(previousConversation);
        }
        input(messages);
        this.conversation = messages;
        ArrayNode chatMessages = NODES.arrayNode();
        if (instructions != null) {
            chatMessages.add(NODES.objectNode().put("role", "system").put("content", instructions));
        }
        chatMessages.addAll(messages);
        chat.set("messages", chatMessages);
    }

    static String id(String prefix) {
        return prefix + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong())
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    }

    private String string(String f, boolean required) {
        JsonNode v = body.get(f);
        if (v == null || v.isNull()) {
            if (required) {
                throw ApiException.invalid(f, "'" + f + "' is required");
            }
            return null;
        }
        if (!v.isTextual()) {
            throw ApiException.invalid(f, "'" + f + "' must be a string");
        }
        return v.asText();
    }

    private boolean bool(String f, boolean fallback) {
        JsonNode v = body.get(f);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isBoolean()) {
            throw ApiException.invalid(f, "'" + f + "' must be a boolean");
        }
        return v.booleanValue();
    }

    private void refuseUnless(String f, String why) {
        JsonNode v = body.get(f);
        if (v != null && !v.isNull()) {
            throw ApiException.invalid(f, why);
        }
    }

    /** At most 16 pairs, keys up to 64 characters, string values up to 512 (OpenAI's limits). */
    private ObjectNode metadata() {
        JsonNode m = body.get("metadata");
        if (m == null || m.isNull()) {
            return NODES.objectNode();
        }
        if (!m.isObject() || m.size() > 16) {
            throw ApiException.invalid("metadata", "'metadata' must be an object of at most 16 string pairs");
        }
        for (var it = m.properties().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getKey().length() > 64 || !e.getValue().isTextual() || e.getValue().asText().length() > 512) {
                throw ApiException.invalid("metadata", "metadata '" + e.getKey() + "': keys are at most 64 characters,"
                        + " values strings of at most 512");
            }
        }
        return (ObjectNode) m;
    }

    private ObjectNode reasoning() {
        JsonNode r = body.get("reasoning");
        ObjectNode out = NODES.objectNode();
        out.putNull("effort");
        out.putNull("summary");
        if (r == null || r.isNull()) {
            return out;
        }
        if (!r.isObject()) {
            throw ApiException.invalid("reasoning", "'reasoning' must be an object");
        }
        for (var it = r.properties().iterator(); it.hasNext(); ) {
            var e = it.next();
            switch (e.getKey()) {
                case "effort" -> {
                    if (!e.getValue().isNull() && !Set.of("minimal", "low", "medium", "high", "none")
                            .contains(e.getValue().asText())) {
                        throw ApiException.invalid("reasoning.effort", "reasoning.effort must be none, minimal, low,"
                                + " medium or high");
                    }
                    out.set("effort", e.getValue());
                }
                case "summary", "generate_summary" -> {
                    if (!e.getValue().isNull() && !Set.of("auto", "concise", "detailed").contains(e.getValue().asText())) {
                        throw ApiException.invalid("reasoning.summary", "reasoning.summary must be auto, concise or"
                                + " detailed");
                    }
                    out.set("summary", e.getValue());
                }
                default -> throw ApiException.invalid("reasoning." + e.getKey(), "unknown field reasoning." + e.getKey());
            }
        }
        return out;
    }

    /** {@code text.format} as chat's {@code response_format}; the echo of {@code text}. */
    private ObjectNode textFormat(ObjectNode chat) {
        ObjectNode echo = NODES.objectNode();
        JsonNode t = body.get("text");
        JsonNode format = t == null || t.isNull() ? null : t.get("format");
        if (t != null && !t.isNull()) {
            if (!t.isObject()) {
                throw ApiException.invalid("text", "'text' must be an object");
            }
            for (var it = t.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                if (k.equals("verbosity")) {
                    JsonNode v = t.get(k);
                    if (!v.isNull() && !"medium".equals(v.asText())) {
                        throw ApiException.invalid("text.verbosity", "text.verbosity must be 'medium' (the only one here)");
                    }
                } else if (!k.equals("format")) {
                    throw ApiException.invalid("text." + k, "unknown field text." + k);
                }
            }
        }
        if (format == null || format.isNull()) {
            echo.set("format", NODES.objectNode().put("type", "text"));
            return echo;
        }
        if (!format.isObject() || !format.hasNonNull("type")) {
            throw ApiException.invalid("text.format", "text.format must be an object with a 'type'");
        }
        switch (format.get("type").asText()) {
            case "text" -> {
            }
            case "json_object" -> chat.set("response_format", NODES.objectNode().put("type", "json_object"));
            case "json_schema" -> {
                if (!format.hasNonNull("name") || !format.hasNonNull("schema")) {
                    throw ApiException.invalid("text.format", "text.format of type json_schema needs 'name' and 'schema'");
                }
                ObjectNode schema = NODES.objectNode();
                for (String k : List.of("name", "schema", "description", "strict")) {
                    if (format.has(k)) {
                        schema.set(k, format.get(k));
                    }
                }
                chat.set("response_format", NODES.objectNode().put("type", "json_schema").set("json_schema", schema));
            }
            default -> throw ApiException.invalid("text.format", "text.format type must be text, json_object or"
                    + " json_schema, got '" + format.get("type").asText() + "'");
        }
        echo.set("format", format);
        return echo;
    }

    /** Function tools in chat's shape; other tool types (hosted tools) are a 400. The echo: Responses' shape. */
    private ArrayNode tools(ObjectNode chat) {
        ArrayNode echo = NODES.arrayNode();
        JsonNode t = body.get("tools");
        if (t == null || t.isNull()) {
            return echo;
        }
        if (!t.isArray()) {
            throw ApiException.invalid("tools", "'tools' must be an array");
        }
        ArrayNode chatTools = NODES.arrayNode();
        for (int i = 0; i < t.size(); i++) {
            JsonNode tool = t.get(i);
            String type = tool.path("type").asText("");
            if (!type.equals("function")) {
                throw ApiException.invalid("tools[" + i + "].type", "tools[" + i + "]: only function tools are supported,"
                        + " got '" + type + "' (hosted tools such as web_search or file_search run on OpenAI's side)");
            }
            ObjectNode fn = NODES.objectNode();
            for (String k : List.of("name", "description", "parameters", "strict")) {
                if (tool.has(k)) {
                    fn.set(k, tool.get(k));
                }
            }
            chatTools.add(NODES.objectNode().put("type", "function").set("function", fn));
            ObjectNode e = NODES.objectNode().put("type", "function");
            e.set("name", tool.get("name"));
            e.set("description", tool.has("description") ? tool.get("description") : NODES.nullNode());
            e.set("parameters", tool.has("parameters") ? tool.get("parameters") : NODES.nullNode());
            e.put("strict", tool.path("strict").asBoolean(false));
            echo.add(e);
        }
        chat.set("tools", chatTools);
        return echo;
    }

    private JsonNode toolChoice(ObjectNode chat) {
        JsonNode c = body.get("tool_choice");
        if (c == null || c.isNull()) {
            return NODES.textNode("auto");
        }
        if (c.isTextual()) {
            chat.set("tool_choice", c);
            return c;
        }
        if (c.isObject() && "function".equals(c.path("type").asText()) && c.hasNonNull("name")) {
            chat.set("tool_choice", NODES.objectNode().put("type", "function").set("function",
                    NODES.objectNode().put("name", c.get("name").asText())));
            return c;
        }
        throw ApiException.invalid("tool_choice", "tool_choice must be none, auto, required or {\"type\": \"function\","
                + " \"name\": ...}");
    }

    /** The input as input items (with ids) and as chat messages appended to {@code messages}. */
    private void input(ArrayNode messages) {
        JsonNode in = body.get("input");
        if (in == null || in.isNull()) {
            throw ApiException.invalid("input", "'input' is required");
        }
        if (in.isTextual()) {
            ObjectNode item = message("user", List.of(in.asText()), "input_text");
            inputItems.add(item);
            messages.add(NODES.objectNode().put("role", "user").put("content", in.asText()));
            return;
        }
        if (!in.isArray() || in.isEmpty()) {
            throw ApiException.invalid("input", "'input' must be a string or a non-empty array of input items");
        }
        ObjectNode pendingCalls = null;   // the assistant message consecutive function_call items go into
        for (int i = 0; i < in.size(); i++) {
            JsonNode item = in.get(i);
            String at = "input[" + i + "]";
            if (!item.isObject()) {
                throw ApiException.invalid(at, at + " must be an object");
            }
            String type = item.hasNonNull("type") ? item.get("type").asText() : "message";
            switch (type) {
                case "message" -> {
                    pendingCalls = null;
                    String role = item.path("role").asText("");
                    if (!Set.of("user", "assistant", "system", "developer").contains(role)) {
                        throw ApiException.invalid(at + ".role", at + ".role must be user, assistant, system or"
                                + " developer, got '" + role + "'");
                    }
                    List<String> texts = texts(item.get("content"), at + ".content");
                    inputItems.add(message(role, texts, role.equals("assistant") ? "output_text" : "input_text"));
                    messages.add(NODES.objectNode().put("role", role).put("content", String.join("", texts)));
                }
                case "function_call" -> {
                    String callId = required(item, "call_id", at);
                    String name = required(item, "name", at);
                    String arguments = required(item, "arguments", at);
                    ObjectNode stored = NODES.objectNode().put("type", "function_call")
                            .put("id", item.hasNonNull("id") ? item.get("id").asText() : id("fc_")).put("call_id", callId)
                            .put("name", name).put("arguments", arguments).put("status", "completed");
                    inputItems.add(stored);
                    if (pendingCalls == null) {
                        pendingCalls = NODES.objectNode().put("role", "assistant").put("content", "");
                        pendingCalls.set("tool_calls", NODES.arrayNode());
                        messages.add(pendingCalls);
                    }
                    ((ArrayNode) pendingCalls.get("tool_calls")).add(NODES.objectNode().put("id", callId)
                            .put("type", "function").set("function", NODES.objectNode().put("name", name)
                                    .put("arguments", arguments)));
                }
                case "function_call_output" -> {
                    pendingCalls = null;
                    String callId = required(item, "call_id", at);
                    JsonNode output = item.get("output");
                    String text = output == null || output.isNull() ? null : output.isTextual() ? output.asText()
                            : String.join("", texts(output, at + ".output"));
                    if (text == null) {
                        throw ApiException.invalid(at + ".output", at + ".output is required");
                    }
                    inputItems.add(NODES.objectNode().put("type", "function_call_output")
                            .put("id", item.hasNonNull("id") ? item.get("id").asText() : id("fco_")).put("call_id", callId)
                            .put("output", text).put("status", "completed"));
                    messages.add(NODES.objectNode().put("role", "tool").put("tool_call_id", callId).put("content", text));
                }
                case "reasoning" -> {
                    // an earlier thought, given back: templates drop past thoughts, so it is kept as an item only
                    pendingCalls = null;
                    inputItems.add(item);
                }
                default -> throw ApiException.invalid(at + ".type", at + ": input items of type '" + type + "' are not"
                        + " supported (message, function_call, function_call_output, reasoning)");
            }
        }
    }

    private static String required(JsonNode item, String f, String at) {
        JsonNode v = item.get(f);
        if (v == null || !v.isTextual()) {
            throw ApiException.invalid(at + "." + f, at + "." + f + " is required and must be a string");
        }
        return v.asText();
    }

    /** A content value's texts: a string, or text parts (input_text, output_text, text); anything else is a 400. */
    private static List<String> texts(JsonNode content, String at) {
        if (content == null || content.isNull()) {
            throw ApiException.invalid(at, at + " is required");
        }
        if (content.isTextual()) {
            return List.of(content.asText());
        }
        if (!content.isArray()) {
            throw ApiException.invalid(at, at + " must be a string or an array of content parts");
        }
        List<String> out = new ArrayList<>();
        for (int k = 0; k < content.size(); k++) {
            JsonNode part = content.get(k);
            String type = part.path("type").asText("");
            if (!Set.of("input_text", "output_text", "text").contains(type) || !part.path("text").isTextual()) {
                throw ApiException.invalid(at + "[" + k + "]", at + "[" + k + "]: content parts of type '" + type
                        + "' are not supported (text only: input_text, output_text)");
            }
            out.add(part.get("text").asText());
        }
        return out;
    }

    private static ObjectNode message(String role, List<String> texts, String partType) {
        ObjectNode m = NODES.objectNode().put("type", "message").put("id", id("msg_")).put("role", role);
        ArrayNode content = m.putArray("content");
        for (String t : texts) {
            ObjectNode p = content.addObject().put("type", partType).put("text", t);
            if (partType.equals("output_text")) {
                p.putArray("annotations");
            }
        }
        m.put("status", "completed");
        return m;
    }

    /** A chat validation failure named as this API names the field. */
    static ApiException rename(ApiException e) {
        if (e.status() != 400 || e.param() == null) {
            return e;
        }
        String p = e.param();
        String renamed = p.equals("max_completion_tokens") || p.equals("max_tokens") ? "max_output_tokens"
                : p.startsWith("messages") ? "input" : p.startsWith("response_format") ? "text.format" : p;
        return renamed.equals(p) ? e : new ApiException(e.status(), e.type(), renamed, e.code(),
                e.getMessage().replace("max_completion_tokens", "max_output_tokens").replace("response_format", "text.format"),
                e.retryAfterSeconds());
    }
}
