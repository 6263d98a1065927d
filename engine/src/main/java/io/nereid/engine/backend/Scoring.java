package io.nereid.engine.backend;

import java.util.Arrays;

/**
 * Given tokens to score at a slice's first logit rows (the prompt's next tokens, for prompt logprobs): row
 * {@code j} scores {@code ids[j]} as the engine's {@code RawLogprobs.score} defines it (the raw log-softmax's value
 * for the id, its rank, and the {@code topLogprobs} most likely ids). A backend may answer with those records
 * ({@link StepOutput#scored()}) instead of the rows, which then do not come back: 168 bytes a row instead of the
 * vocabulary's floats. A backend that does not answer returns the rows, and the engine scores them.
 *
 * @param ids         one id per scored row, in row order; at least one
 * @param topLogprobs alternatives per row, 0 to {@link TokenChoice#MAX_TOP_LOGPROBS}
 */
public record Scoring(int[] ids, int topLogprobs) {

    public Scoring {
        if (ids.length == 0) {
            throw new IllegalArgumentException("scoring needs at least one id");
        }
        if (topLogprobs < 0 || topLogprobs > TokenChoice.MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs must be 0 to " + TokenChoice.MAX_TOP_LOGPROBS + ", got "
                    + topLogprobs);
        }
    }

    @Override
    public String toString() {
        return "Scoring[ids " + Arrays.toString(ids) + ", top " + topLogprobs + "]";
    }
}
