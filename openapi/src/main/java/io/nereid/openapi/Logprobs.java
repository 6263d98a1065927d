package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** {@code choices[].logprobs}: the chat shape and the legacy completions shape. */
public final class Logprobs {

    private Logprobs() {
    }

    /** Chat: {@code {"content":[{token, logprob, bytes, top_logprobs}]}}. */
    public record Chat(@JsonProperty("content") List<Token> content) {
    }

    /** One generated token (top_logprobs: its most likely alternatives, most likely first). */
    public record Token(@JsonProperty("token") String token, @JsonProperty("logprob") float logprob,
            @JsonProperty("bytes") int[] bytes, @JsonProperty("top_logprobs") List<TopToken> topLogprobs) {
    }

    public record TopToken(@JsonProperty("token") String token, @JsonProperty("logprob") float logprob,
            @JsonProperty("bytes") int[] bytes) {
    }

    /**
     * Legacy completions: parallel lists, {@code top_logprobs} one map of token text → logprob per
     * token, {@code text_offset} each token's character offset in the choice's text.
     */
    public record Completion(@JsonProperty("tokens") List<String> tokens,
            @JsonProperty("token_logprobs") List<Float> tokenLogprobs,
            @JsonProperty("top_logprobs") List<Map<String, Float>> topLogprobs,
            @JsonProperty("text_offset") List<Integer> textOffset) {
    }
}
