/**
 * Sampling: how one sequence turns the model's logits into its next token.
 *
 * <p>A {@link io.nereid.engine.sampling.SamplingChain} per sequence runs, in vLLM's order:
 * <pre>
 *   raw logits --+--> log-softmax ------------------------------------> logprobs
 *                |                                                      (rank, top alternatives)
 *                +--> copy --> LogitsProcessor* --> Distribution --> TokenSelector --> token
 *                              min_tokens,          temperature,     Greedy | Draw
 *                              penalties,           top-k, top-p,    (seeded RNG)
 *                              logit bias           min-p
 * </pre>
 * Logprobs always come from the raw logits ({@link io.nereid.engine.sampling.RawLogprobs}), before
 * any processor. Processors may keep state about the tokens the sequence emitted; it advances only
 * when the caller accepts a token and can be rolled back, so a distribution can be computed
 * ({@link io.nereid.engine.sampling.Probabilities}, with p(id) for any token) and a token sampled
 * without committing to it: the seam speculative decoding and grammar masks need.
 *
 * <p>Threading: everything is per sequence and used by the engine thread; nothing here is
 * thread-safe except the immutable {@code Probabilities}, {@code Distribution} and the pure
 * {@code RawLogprobs}. Request parameters are validated once, in
 * {@link io.nereid.engine.api.SamplingParams}.
 */
package io.nereid.engine.sampling;
