package io.nereid.engine.api;

/**
 * Log-probability of a token (generated or, for prompt logprobs, given) and the most likely
 * alternatives at its position, from the raw model distribution (log-softmax of the logits before
 * penalties, bias and temperature).
 *
 * @param rank        the token's rank in the vocabulary at its position, 1 for the most likely
 *                    (vLLM's {@code rank}: 1 + the number of tokens with a higher log-probability)
 * @param topIds      alternatives, most likely first ({@code top_logprobs} of them)
 * @param topLogprobs their log-probabilities
 */
public record TokenLogprob(int tokenId, float logprob, int rank, int[] topIds, float[] topLogprobs) {
}
