package io.nereid.engine.backend;

import java.util.Arrays;

/**
 * What a forward pass returns: for each slice of the {@link Step}, in order, the logits of its
 * last {@link Slice#logitRows()} positions, row-major ({@code rows x vocabSize} floats), or null
 * for a slice that wanted none. Only the rows asked for come back from the backend. Owned by the
 * engine thread once returned.
 *
 * @param logits    (slices) of (logitRows x vocabSize)
 * @param vocabSize entries per row
 * @param hidden    (slices) of (tokens x hiddenSize): the final hidden states of the slices that asked
 *                  for them ({@link Slice#hidden()}), else null (all null when none did)
 * @param hiddenSize entries per hidden row (the model's dim), 0 when no slice asked
 * @param chosen    (slices) of (logitRows): for a slice with a {@link Slice#choice()} whose logits the
 *                  backend left out (null in {@code logits}), the token it chose for each row as the
 *                  {@link TokenChoice} says; null for every other slice
 * @param logprobs  (slices) of (logitRows): for a chosen slice whose choice asked for logprobs
 *                  ({@link TokenChoice#logprobs()}), each chosen token's; null for every other slice
 * @param scored    (slices) of (scored rows): for a slice with a {@link Slice#scoring()} that the backend answered,
 *                  the record of each given id, row by row; those rows are then left out of {@code logits}, which
 *                  holds the slice's remaining (last) rows or null; null for every other slice
 */
public record StepOutput(float[][] logits, int vocabSize, float[][] hidden, int hiddenSize, int[][] chosen,
        ChosenLogprobs[][] logprobs, ChosenLogprobs[][] scored) {

    /** Logits, hidden states, chosen tokens and their logprobs; no scored rows. */
    public StepOutput(float[][] logits, int vocabSize, float[][] hidden, int hiddenSize, int[][] chosen,
            ChosenLogprobs[][] logprobs) {
        this(logits, vocabSize, hidden, hiddenSize, chosen, logprobs, new ChosenLogprobs[logits.length][]);
    }

    /** Logits, hidden states and chosen tokens without logprobs. */
    public StepOutput(float[][] logits, int vocabSize, float[][] hidden, int hiddenSize, int[][] chosen) {
        this(logits, vocabSize, hidden, hiddenSize, chosen, new ChosenLogprobs[logits.length][]);
    }

    /** Logits only. */
    public StepOutput(float[][] logits, int vocabSize) {
        this(logits, vocabSize, new float[logits.length][], 0);
    }

    /** Logits and hidden states, no chosen tokens. */
    public StepOutput(float[][] logits, int vocabSize, float[][] hidden, int hiddenSize) {
        this(logits, vocabSize, hidden, hiddenSize, new int[logits.length][]);
    }

    public StepOutput {
        if (hidden.length != logits.length || chosen.length != logits.length || logprobs.length != logits.length
                || scored.length != logits.length) {
            throw new IllegalArgumentException("logits for " + logits.length + " slices, hidden states for "
                    + hidden.length + ", chosen tokens for " + chosen.length + ", logprobs for " + logprobs.length
                    + ", scored rows for " + scored.length);
        }
        for (int i = 0; i < logits.length; i++) {
            if (logits[i] != null && chosen[i] != null) {
                throw new IllegalArgumentException("slice " + i + " has both logits and chosen tokens");
            }
            if (logprobs[i] != null && (chosen[i] == null || logprobs[i].length != chosen[i].length)) {
                throw new IllegalArgumentException("slice " + i + " has logprobs for " + logprobs[i].length
                        + " tokens, chosen " + (chosen[i] == null ? "none" : chosen[i].length));
            }
        }
    }

    /**
     * How many logit rows slice {@code slice} has.
     *
     * @throws IllegalStateException if the backend returned a part of a row (a backend bug, which
     *                               fails the slice's request)
     */
    public int rows(int slice) {
        float[] all = logits[slice];
        if (all == null) {
            return chosen[slice] == null ? 0 : chosen[slice].length;
        }
        if (all.length % vocabSize != 0) {
            throw new IllegalStateException("slice " + slice + " has " + all.length + " logits, not whole rows of "
                    + vocabSize);
        }
        return all.length / vocabSize;
    }

    /**
     * Row {@code row} of slice {@code slice} ({@code 0 <= row < rows(slice)}, the first of its last
     * {@code logitRows} positions being row 0): the array itself when the slice has one row, else
     * a copy.
     */
    public float[] row(int slice, int row) {
        float[] all = logits[slice];
        if (all == null && chosen[slice] != null) {
            throw new IllegalStateException("slice " + slice + " came back as chosen tokens, without logits");
        }
        if (row < 0 || row >= rows(slice)) {
            throw new IndexOutOfBoundsException("row " + row + " of slice " + slice + " (" + rows(slice) + " rows)");
        }
        return all.length == vocabSize ? all : Arrays.copyOfRange(all, row * vocabSize, (row + 1) * vocabSize);
    }
}
