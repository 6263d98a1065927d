package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** {@code POST /v1/chat/completions} responses: the whole completion, and the stream's chunks. */
public final class ChatCompletion {

    private ChatCompletion() {
    }

    /**
     * {@code object: "chat.completion"}; {@code prompt_logprobs} (vLLM's, one list for the request,
     * see {@link Logprobs#prompt}) only when the request asked for them.
     */
    public record Response(@JsonProperty("id") String id, @JsonProperty("object") String object,
            @JsonProperty("created") long created, @JsonProperty("model") String model,
            @JsonProperty("choices") List<Choice> choices, @JsonProperty("usage") UsageInfo usage,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("prompt_logprobs")
            List<Map<String, Logprobs.PromptToken>> promptLogprobs) {

        public Response(String id, long created, String model, List<Choice> choices, UsageInfo usage,
                List<Map<String, Logprobs.PromptToken>> promptLogprobs) {
            this(id, "chat.completion", created, model, choices, usage, promptLogprobs);
        }
    }

    public record Choice(@JsonProperty("index") int index, @JsonProperty("message") Message message,
            @JsonProperty("logprobs") Object logprobs, @JsonProperty("finish_reason") String finishReason,
            @JsonProperty("stop_reason") Object stopReason) {
    }

    /**
     * The assistant's message; {@code refusal} is always null (Nereid never refuses); {@code tool_calls}
     * only when the model called tools (then {@code content} is the text before the calls, or null);
     * {@code function_call} instead when the request sent the deprecated {@code functions}.
     */
    public record Message(@JsonProperty("role") String role, @JsonProperty("content") String content,
            @JsonProperty("refusal") String refusal,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("tool_calls") List<ToolCall> toolCalls,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("reasoning_content") String reasoningContent,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("function_call") FunctionCall functionCall) {

        public Message(String role, String content, String refusal) {
            this(role, content, refusal, null, null, null);
        }

        public Message(String role, String content, String refusal, List<ToolCall> toolCalls) {
            this(role, content, refusal, toolCalls, null, null);
        }

        public Message(String role, String content, String refusal, List<ToolCall> toolCalls, String reasoningContent) {
            this(role, content, refusal, toolCalls, reasoningContent, null);
        }
    }

    /** A call the model made: {@code id}, {@code type: "function"} and the function's name and arguments (JSON text). */
    public record ToolCall(@JsonProperty("id") String id, @JsonProperty("type") String type,
            @JsonProperty("function") FunctionCall function) {
    }

    public record FunctionCall(@JsonProperty("name") String name, @JsonProperty("arguments") String arguments) {
    }

    /**
     * A streamed piece of a tool call: the first for a call has its {@code index}, {@code id},
     * {@code type} and {@code function.name} (arguments ""), the later ones {@code index} and an
     * arguments fragment.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ToolCallDelta(@JsonProperty("index") int index, @JsonProperty("id") String id,
            @JsonProperty("type") String type, @JsonProperty("function") FunctionDelta function) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FunctionDelta(@JsonProperty("name") String name, @JsonProperty("arguments") String arguments) {
    }

    /**
     * {@code object: "chat.completion.chunk"}; {@code usage} is left out of the JSON when null
     * (only the final chunk of a stream with {@code include_usage} has it).
     */
    public record Chunk(@JsonProperty("id") String id, @JsonProperty("object") String object,
            @JsonProperty("created") long created, @JsonProperty("model") String model,
            @JsonProperty("choices") List<ChunkChoice> choices,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("usage") UsageInfo usage) {

        public Chunk(String id, long created, String model, List<ChunkChoice> choices, UsageInfo usage) {
            this(id, "chat.completion.chunk", created, model, choices, usage);
        }
    }

    public record ChunkChoice(@JsonProperty("index") int index, @JsonProperty("delta") Delta delta,
            @JsonProperty("logprobs") Object logprobs, @JsonProperty("finish_reason") String finishReason,
            @JsonProperty("stop_reason") Object stopReason) {
    }

    /** What a chunk adds to the message: role only in the first chunk, absent fields left out. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Delta(@JsonProperty("role") String role, @JsonProperty("content") String content,
            @JsonProperty("tool_calls") List<ToolCallDelta> toolCalls,
            @JsonProperty("reasoning_content") String reasoningContent,
            @JsonProperty("function_call") FunctionDelta functionCall) {

        public Delta(String role, String content) {
            this(role, content, null, null, null);
        }

        public Delta(String role, String content, List<ToolCallDelta> toolCalls) {
            this(role, content, toolCalls, null, null);
        }

        public Delta(String role, String content, List<ToolCallDelta> toolCalls, String reasoningContent) {
            this(role, content, toolCalls, reasoningContent, null);
        }
    }
}
