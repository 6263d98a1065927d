package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Token counts of a response; {@code total_tokens = prompt_tokens + completion_tokens}. */
public record UsageInfo(@JsonProperty("prompt_tokens") int promptTokens,
        @JsonProperty("completion_tokens") int completionTokens, @JsonProperty("total_tokens") int totalTokens,
        @JsonProperty("prompt_tokens_details") PromptTokensDetails promptTokensDetails) {

    public record PromptTokensDetails(@JsonProperty("cached_tokens") int cachedTokens) {
    }

    public static UsageInfo of(int promptTokens, int completionTokens, int cachedTokens) {
        return new UsageInfo(promptTokens, completionTokens, promptTokens + completionTokens,
                new PromptTokensDetails(cachedTokens));
    }
}
