package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * {@code choices[].logprobs}: the chat shape and the legacy completions shape; and vLLM's
 * {@code prompt_logprobs}: one entry per prompt token, null for the first (nothing precedes it),
 * else a map from token id (as a string) to a {@link PromptToken}, holding the prompt's own token
 * and the requested number of most likely alternatives.
 */
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

    /** vLLM's {@code Logprob}: {@code rank} 1 for the most likely token; {@code decoded_token} its text. */
    public record PromptToken(@JsonProperty("logprob") float logprob, @JsonProperty("rank") int rank,
            @JsonProperty("decoded_token") String decodedToken) {
    }

    /**
     * Legacy completions: parallel lists, {@code top_logprobs} one map of token text → logprob per
     * token, {@code text_offset} each token's character offset in the choice's text. With {@code echo},
     * the prompt's tokens come first, the first of them with null {@code token_logprobs} and
     * {@code top_logprobs} entries.
     */
    public record Completion(@JsonProperty("tokens") List<String> tokens,
            @JsonProperty("token_logprobs") List<Float> tokenLogprobs,
            @JsonProperty("top_logprobs") List<Map<String, Float>> topLogprobs,
            @JsonProperty("text_offset") List<Integer> textOffset) {
    }
}
