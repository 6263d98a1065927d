package io.nereid.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What one OpenAI SSE {@code data:} payload says, for either endpoint:
 * <pre>
 *   data: {"choices":[{"delta":{"content":"Hi"}}]}          chat: content "Hi"
 *   data: {"choices":[{"text":"Hi"}]}                        completions: content "Hi"
 *   data: {"choices":[],"usage":{"prompt_tokens":5,...}}     usage only (stream_options.include_usage)
 *   data: {"text_output":"Hi","model_name":...}               Triton generate_stream: content "Hi"
 *   data: {"type":"response.output_text.delta","delta":"Hi"} Responses API: content "Hi"
 *   data: {"type":"response.completed","response":{...}}     Responses API: usage, and the end of stream
 *   data: {"error":{"message":"...","code":500}}             an error mid-stream (Triton: {"error":"..."})
 *   data: [DONE]                                             end of stream
 * </pre>
 * Pure and stateless; safe from any thread.
 *
 * @param content          generated text, empty when none
 * @param promptTokens     usage.prompt_tokens, -1 when absent
 * @param completionTokens usage.completion_tokens, -1 when absent
 * @param error            the error's message, null when the event is not an error
 * @param done             true for {@code [DONE]}
 */
public record StreamEvent(String content, int promptTokens, int completionTokens, String error, boolean done) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static StreamEvent parse(String data) {
        String d = data.strip();
        if (d.equals("[DONE]")) {
            return new StreamEvent("", -1, -1, null, true);
        }
        JsonNode n;
        try {
            n = JSON.readTree(d);
        } catch (JsonProcessingException e) {
            return new StreamEvent("", -1, -1, "unparsable event: " + abbreviate(d), false);
        }
        if (n.hasNonNull("error")) {
            JsonNode e = n.get("error");
            String msg = e.isObject() ? e.path("message").asText(e.toString()) : e.asText();
            return new StreamEvent("", -1, -1, msg.isEmpty() ? "error event" : msg, false);
        }
        String type = n.path("type").asText("");
        if (type.startsWith("response.")) {   // the Responses API's typed events
            return switch (type) {
                case "response.output_text.delta" -> new StreamEvent(n.path("delta").asText(""), -1, -1, null, false);
                case "response.completed", "response.incomplete" -> {
                    JsonNode u = n.path("response").path("usage");
                    yield new StreamEvent("", u.path("input_tokens").asInt(-1), u.path("output_tokens").asInt(-1), null, true);
                }
                case "response.failed" -> new StreamEvent("", -1, -1, n.path("response").path("error").path("message")
                        .asText("response.failed"), true);
                default -> new StreamEvent("", -1, -1, null, false);
            };
        }
        StringBuilder content = new StringBuilder();
        if (n.path("text_output").isTextual()) {
            content.append(n.get("text_output").asText());
        }
        for (JsonNode choice : n.path("choices")) {
            JsonNode delta = choice.path("delta").path("content");
            if (delta.isTextual()) {
                content.append(delta.asText());
            }
            JsonNode text = choice.path("text");
            if (text.isTextual()) {
                content.append(text.asText());
            }
        }
        JsonNode usage = n.path("usage");
        return new StreamEvent(content.toString(), usage.path("prompt_tokens").asInt(-1),
                usage.path("completion_tokens").asInt(-1), null, false);
    }

    static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }
}
