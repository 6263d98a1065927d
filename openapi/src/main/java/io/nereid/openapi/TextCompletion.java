package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * {@code POST /v1/completions} responses ({@code object: "text_completion"}), whole or streamed;
 * a stream's chunks have the same shape with {@code usage} left out until the final usage chunk.
 */
public record TextCompletion(@JsonProperty("id") String id, @JsonProperty("object") String object,
        @JsonProperty("created") long created, @JsonProperty("model") String model,
        @JsonProperty("choices") List<Choice> choices,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("usage") UsageInfo usage) {

    public TextCompletion(String id, long created, String model, List<Choice> choices, UsageInfo usage) {
        this(id, "text_completion", created, model, choices, usage);
    }

    /** {@code prompt_logprobs} (vLLM's, see {@link Logprobs#prompt}) only when the request asked for them. */
    public record Choice(@JsonProperty("index") int index, @JsonProperty("text") String text,
            @JsonProperty("logprobs") Object logprobs, @JsonProperty("finish_reason") String finishReason,
            @JsonProperty("stop_reason") Object stopReason,
            @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("prompt_logprobs")
            List<Map<String, Logprobs.PromptToken>> promptLogprobs) {

        public Choice(int index, String text, Object logprobs, String finishReason, Object stopReason) {
            this(index, text, logprobs, finishReason, stopReason, null);
        }
    }
}
