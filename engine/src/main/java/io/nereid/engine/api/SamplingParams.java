package io.nereid.engine.api;

import java.util.Map;

/**
 * How to choose the next token from logits; each field is validated here, once (a bad value is a
 * {@link RequestValidationException} naming the field). Defaults are OpenAI's and
 * vLLM's (temperature 1, top_p 1, no top-k, no min-p, no penalties).
 *
 * @param temperature        0 means greedy (argmax); otherwise logits are divided by it
 * @param topK               keep the k most likely tokens; 0 or -1 disables
 * @param topP               nucleus: the smallest set whose probability reaches top_p; 1 disables
 * @param minP               drop tokens less likely than min_p x the top probability; 0 disables
 * @param repetitionPenalty  HF/vLLM style, on prompt and output tokens: positive logits / p,
 *                           negative x p; 1 disables
 * @param presencePenalty    OpenAI: subtracted once from tokens that appeared in the output
 * @param frequencyPenalty   OpenAI: subtracted per occurrence in the output
 * @param logitBias          token id -> bias added to its logit (OpenAI: -100..100)
 * @param seed               RNG seed; null draws one per request
 * @param topLogprobs        how many alternatives to report with log-probabilities (0 = none)
 */
public record SamplingParams(float temperature, int topK, float topP, float minP, float repetitionPenalty,
        float presencePenalty, float frequencyPenalty, Map<Integer, Float> logitBias, Long seed, int topLogprobs) {

    /** Most alternatives reported per token ({@code top_logprobs}, prompt logprobs), as OpenAI allows. */
    public static final int MAX_LOGPROBS = 20;

    public static final SamplingParams GREEDY = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 0);

    public SamplingParams {
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new RequestValidationException("temperature", "temperature must be a finite number >= 0, got "
                    + temperature);
        }
        if (topK < -1) {
            throw new RequestValidationException("top_k", "top_k must be -1 (disabled) or >= 0, got " + topK);
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new RequestValidationException("top_p", "top_p must be in (0, 1], got " + topP);
        }
        if (!(minP >= 0 && minP <= 1)) {
            throw new RequestValidationException("min_p", "min_p must be in [0, 1], got " + minP);
        }
        if (!(repetitionPenalty > 0) || Float.isInfinite(repetitionPenalty)) {
            throw new RequestValidationException("repetition_penalty", "repetition_penalty must be a finite number > 0,"
                    + " got " + repetitionPenalty);
        }
        if (!(presencePenalty >= -2 && presencePenalty <= 2)) {
            throw new RequestValidationException("presence_penalty", "presence_penalty must be in [-2, 2], got "
                    + presencePenalty);
        }
        if (!(frequencyPenalty >= -2 && frequencyPenalty <= 2)) {
            throw new RequestValidationException("frequency_penalty", "frequency_penalty must be in [-2, 2], got "
                    + frequencyPenalty);
        }
        if (topLogprobs < 0 || topLogprobs > MAX_LOGPROBS) {
            throw new RequestValidationException("top_logprobs", "top_logprobs must be in [0, " + MAX_LOGPROBS + "], got "
                    + topLogprobs);
        }
        logitBias = Map.copyOf(logitBias);
        for (Map.Entry<Integer, Float> e : logitBias.entrySet()) {
            if (!(e.getValue() >= -100 && e.getValue() <= 100)) {
                throw new RequestValidationException("logit_bias", "logit_bias for token " + e.getKey() + " must be in [-100, 100], got "
                        + e.getValue());
            }
        }
    }

    public boolean greedy() {
        return temperature == 0f;
    }
}
