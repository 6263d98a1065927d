package io.nereid.engine.backend;

/**
 * A chosen token's raw log-probability as a backend reports it beside the token ({@link StepOutput#logprobs()}),
 * for a {@link TokenChoice} that asked ({@link TokenChoice#topLogprobs()}): as the engine's
 * {@code RawLogprobs.score} defines it on the row.
 *
 * @param logprob     the token's log-probability
 * @param rank        1 + how many entries of the row lie above it
 * @param topIds      the most likely ids, largest first, equal values in id order ({@code topLogprobs} of them)
 * @param topLogprobs their log-probabilities
 */
public record ChosenLogprobs(float logprob, int rank, int[] topIds, float[] topLogprobs) {

    public ChosenLogprobs {
        if (rank < 1 || topIds.length != topLogprobs.length) {
            throw new IllegalArgumentException("rank " + rank + ", " + topIds.length + " top ids for "
                    + topLogprobs.length + " logprobs");
        }
    }
}
