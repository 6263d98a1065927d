package io.nereid.gateway.http;

import io.nereid.engine.api.SamplingParams;
import java.util.List;
import java.util.Map;

/**
 * A validated {@code /v1/chat/completions} or {@code /v1/completions} request, defaults applied.
 *
 * @param messages      chat: the conversation, text content flattened to strings; else null
 * @param prompts       completions: the prompt texts (one, or a batch), or null when {@code promptTokens} is given
 * @param promptTokens  completions: the prompts already tokenized (one, or a batch), or null
 * @param maxTokens     most tokens per choice, or null: up to the context length
 * @param logprobs      report per-token log-probabilities ({@code sampling.topLogprobs()} alternatives)
 * @param echo          put the prompt (completions) or a final assistant message (chat, as vLLM) before each
 *                      choice's output
 * @param promptLogprobs vLLM's {@code prompt_logprobs}: alternatives per prompt token, -1 when not asked for
 * @param ignoredFields unknown fields, ignored (reported in {@code x-nereid-ignored-fields})
 */
public record ParsedRequest(Kind kind, String model, List<Map<String, Object>> messages, List<String> prompts,
        List<int[]> promptTokens, SamplingParams sampling, List<String> stop, int[] stopTokenIds, Integer maxTokens,
        int minTokens, boolean ignoreEos, int n, boolean stream, boolean includeUsage, int priority,
        boolean logprobs, boolean echo, int promptLogprobs, List<String> ignoredFields) {

    public enum Kind { CHAT, COMPLETION }

    /** How many prompts the request generates for (each with {@code n} choices): 1 for chat. */
    public int promptCount() {
        return prompts != null ? prompts.size() : promptTokens != null ? promptTokens.size() : 1;
    }

    /** Completions with echo and logprobs: the echoed prompt's tokens are scored too (OpenAI's legacy API). */
    public boolean echoLogprobs() {
        return kind == Kind.COMPLETION && echo && logprobs;
    }

    /** Alternatives per prompt token the engine must compute, or -1: none. */
    public int enginePromptLogprobs() {
        return Math.max(promptLogprobs, echoLogprobs() ? sampling.topLogprobs() : -1);
    }
}
