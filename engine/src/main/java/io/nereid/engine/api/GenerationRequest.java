package io.nereid.engine.api;

import java.time.Instant;
import java.util.List;

/**
 * One generation request in engine terms (no OpenAI types): the gateway has already rendered
 * the chat template and tokenized.
 *
 * @param id            unique id (for logs and metrics)
 * @param promptTokens  the prompt's token ids (at least one)
 * @param sampling      sampling parameters; {@code sampling.topLogprobs()} alternatives are
 *                      reported when {@code logprobs}
 * @param stop          stop strings (not included in the output)
 * @param stopTokenIds  token ids that end the choice (beyond the model's EOS tokens)
 * @param maxTokens     most tokens to generate per choice (>= 0; 0 only computes the prompt, e.g. to
 *                      score it with {@code promptLogprobs})
 * @param minTokens     EOS tokens, stop token ids and stop strings are suppressed until this many
 * @param ignoreEos     keep generating after the model's EOS tokens
 * @param n             choices (>= 1); the prompt is computed once and forked
 * @param logprobs      report log-probabilities per token
 * @param priority      lower is served first and preempted last (vLLM's convention)
 * @param deadline      when to give up (finish reason DEADLINE), or null
 * @param promptLogprobs report the log-probability of every prompt token after the first with this
 *                      many alternatives ({@link TokenSink#onPromptLogprobs}); -1: off. Such a request
 *                      computes its whole prompt: it takes nothing from the prefix cache (as vLLM)
 */
public record GenerationRequest(String id, int[] promptTokens, SamplingParams sampling, List<String> stop,
        int[] stopTokenIds, int maxTokens, int minTokens, boolean ignoreEos, int n, boolean logprobs, int priority,
        Instant deadline, int promptLogprobs) {

    /** Most stop strings per request (OpenAI allows 4; vLLM any number): each costs a little per generated token. */
    public static final int MAX_STOPS = 64;
    /** Most UTF-16 characters in one stop string. */
    public static final int MAX_STOP_CHARS = 1024;
    /** Most stop token ids per request: each generated token is compared with every one. */
    public static final int MAX_STOP_TOKEN_IDS = 1024;

    public GenerationRequest {
        stop = List.copyOf(stop);
        promptTokens = promptTokens.clone();
        stopTokenIds = stopTokenIds.clone();
        if (promptLogprobs < -1) {
            throw new IllegalArgumentException("promptLogprobs must be -1 (off) or at least 0, got " + promptLogprobs);
        }
    }

    /** A request without prompt logprobs. */
    public GenerationRequest(String id, int[] promptTokens, SamplingParams sampling, List<String> stop,
            int[] stopTokenIds, int maxTokens, int minTokens, boolean ignoreEos, int n, boolean logprobs, int priority,
            Instant deadline) {
        this(id, promptTokens, sampling, stop, stopTokenIds, maxTokens, minTokens, ignoreEos, n, logprobs, priority,
                deadline, -1);
    }

    /** Greedy, no stops, one choice: for tests and simple callers. */
    public static GenerationRequest greedy(String id, int[] prompt, int maxTokens) {
        return new GenerationRequest(id, prompt, SamplingParams.GREEDY, List.of(), new int[0], maxTokens, 0, false, 1,
                false, 0, null);
    }
}
