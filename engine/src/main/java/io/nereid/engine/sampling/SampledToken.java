package io.nereid.engine.sampling;

/**
 * The chosen token with its log-probability and the top alternatives, all from the model's raw
 * distribution (log-softmax of the logits before penalties, bias and temperature — vLLM's
 * default {@code raw_logprobs}).
 *
 * @param rank        the token's vocabulary rank, 1 for the most likely
 * @param topIds      the {@code topLogprobs} most likely ids, most likely first
 * @param topLogprobs their log-probabilities
 */
public record SampledToken(int id, float logprob, int rank, int[] topIds, float[] topLogprobs) {
}
