package io.nereid.gateway.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.gateway.http.ParsedRequest.Kind;
import io.nereid.openapi.ChatCompletion;
import io.nereid.openapi.ErrorResponse;
import io.nereid.openapi.TextCompletion;
import io.nereid.openapi.UsageInfo;
import java.util.List;

/**
 * Formats the server-sent events of one streamed response. Every chunk shares {@code id},
 * {@code created} and {@code model}:
 *
 * <pre>
 * data: {"id":…,"object":"chat.completion.chunk",…,"choices":[{"index":0,"delta":{"role":"assistant","content":""},…}]}\n\n
 * data: {… "delta":{"content":"Hello"}, "finish_reason":null}\n\n
 * data: {… "delta":{"content":"!"}, "finish_reason":"stop"}\n\n
 * data: {… "choices":[], "usage":{…}}\n\n          (only with stream_options.include_usage)
 * data: [DONE]\n\n
 * </pre>
 *
 * Completions streams have no role chunk and carry {@code text} instead of {@code delta}. Pure;
 * not thread-safe only in that the caller owns ordering.
 */
public final class SseChunks {

    public static final String DONE = "data: [DONE]\n\n";
    static final ObjectMapper JSON = new ObjectMapper();
    /** Request bodies: one JSON document and nothing after it (trailing data is a 400, not ignored). */
    static final com.fasterxml.jackson.databind.ObjectReader REQUEST_READER = JSON.reader()
            .with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final Kind kind;
    private final String id;
    private final long created;
    private final String model;

    public SseChunks(Kind kind, String id, long created, String model) {
        this.kind = kind;
        this.id = id;
        this.created = created;
        this.model = model;
    }

    /** Chat only: the first chunk of a choice, {@code delta:{"role":"assistant","content":""}}. */
    public String role(int choice) {
        return event(new ChatCompletion.Chunk(id, created, model,
                List.of(new ChatCompletion.ChunkChoice(choice, new ChatCompletion.Delta("assistant", ""), null, null, null)), null));
    }

    /** New text of a choice; {@code finishReason} non-null on the choice's last chunk (text may then be empty). */
    public String content(int choice, String text, String finishReason) {
        return content(choice, text, null, finishReason);
    }

    /** As {@link #content(int, String, String)} with the chunk's tokens' {@code logprobs} (null: none requested). */
    public String content(int choice, String text, Object logprobs, String finishReason) {
        return content(choice, text, logprobs, finishReason, null);
    }

    /**
     * As {@link #content(int, String, Object, String)} with vLLM's {@code stop_reason} on the last chunk:
     * the matched stop string or stop token id (null otherwise, and on every earlier chunk).
     */
    public String content(int choice, String text, Object logprobs, String finishReason, Object stopReason) {
        if (kind == Kind.CHAT) {
            ChatCompletion.Delta delta = new ChatCompletion.Delta(null, text.isEmpty() && finishReason != null ? null : text);
            return event(new ChatCompletion.Chunk(id, created, model,
                    List.of(new ChatCompletion.ChunkChoice(choice, delta, logprobs, finishReason, stopReason)), null));
        }
        return event(new TextCompletion(id, created, model,
                List.of(new TextCompletion.Choice(choice, text, logprobs, finishReason, stopReason)), null));
    }

    /** Chat with tools or reasoning: content, reasoning and tool-call deltas (each may be empty) in one chunk. */
    public String content(int choice, String text, String reasoning, List<ChatCompletion.ToolCallDelta> toolCalls,
            Object logprobs, String finishReason, Object stopReason) {
        return content(choice, text, reasoning, toolCalls, false, logprobs, finishReason, stopReason);
    }

    /**
     * The same; {@code asFunctionCall}: the request sent the deprecated {@code functions}, so its one
     * call streams as {@code delta.function_call} (the name with the first fragment, then arguments).
     */
    public String content(int choice, String text, String reasoning, List<ChatCompletion.ToolCallDelta> toolCalls,
            boolean asFunctionCall, Object logprobs, String finishReason, Object stopReason) {
        ChatCompletion.FunctionDelta function = null;
        if (asFunctionCall && !toolCalls.isEmpty()) {
            String name = null;
            StringBuilder arguments = new StringBuilder();
            for (ChatCompletion.ToolCallDelta d : toolCalls) {
                name = name == null ? d.function().name() : name;
                arguments.append(d.function().arguments() == null ? "" : d.function().arguments());
            }
            function = new ChatCompletion.FunctionDelta(name, arguments.toString());
            toolCalls = List.of();
        }
        ChatCompletion.Delta delta = new ChatCompletion.Delta(null, text.isEmpty() ? null : text,
                toolCalls.isEmpty() ? null : toolCalls, reasoning.isEmpty() ? null : reasoning, function);
        return event(new ChatCompletion.Chunk(id, created, model,
                List.of(new ChatCompletion.ChunkChoice(choice, delta, logprobs, finishReason, stopReason)), null));
    }

    /** The final usage chunk: {@code "choices":[]}. */
    public String usage(UsageInfo usage) {
        return kind == Kind.CHAT ? event(new ChatCompletion.Chunk(id, created, model, List.of(), usage))
                : event(new TextCompletion(id, created, model, List.of(), usage));
    }

    /** An error after the 200: the OpenAI envelope as an event (followed by {@link #DONE}). */
    public static String error(ErrorResponse error) {
        return event(error);
    }

    static String event(Object payload) {
        return "data: " + json(payload) + "\n\n";
    }

    static String json(Object payload) {
        try {
            return JSON.writeValueAsString(payload);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write " + payload.getClass().getSimpleName() + " as JSON", e);
        }
    }
}
