package io.nereid.engine.api;

/**
 * Log-probability of a generated token and its most likely alternatives (raw model distribution).
 *
 * @param topIds      alternatives, most likely first ({@code top_logprobs} of them)
 * @param topLogprobs their log-probabilities
 */
public record TokenLogprob(int tokenId, float logprob, int[] topIds, float[] topLogprobs) {
}
