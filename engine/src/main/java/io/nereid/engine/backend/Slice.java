package io.nereid.engine.backend;

import java.util.Arrays;

/**
 * One sequence's part of a forward step: {@code tokens} at positions
 * {@code [startPos, startPos + tokens.length)}, whose K/V the backend computes and stores in the
 * sequence's blocks. A decode slice has one token (or 1 + k with speculative decoding), a prefill
 * chunk many.
 *
 * @param tokens     token ids to compute
 * @param startPos   position of {@code tokens[0]}; positions before it are already in the KV cache
 * @param blockTable physical KV block ids of the sequence in logical order, covering every
 *                   position up to {@code startPos + tokens.length - 1}
 * @param logitRows  how many of the slice's last positions need logits: 0 (a prefill chunk that
 *                   does not end the prompt), 1 (a decode), k + 1 (a decode verifying k draft
 *                   tokens), or {@code tokens.length} (prompt logprobs)
 * @param hidden     whether the final hidden state (after the output norm) of every position comes
 *                   back too ({@link StepOutput#hidden()}): an embedding request's prompt
 * @param choice     how the backend may choose the next tokens itself and return their ids
 *                   ({@link StepOutput#chosen()}) instead of the logit rows, because the engine needs
 *                   nothing else of them ({@link TokenChoice}); null when the rows must come back
 * @param scoring    given tokens to score at the first of the logit rows (prompt logprobs), which the backend may
 *                   answer with their records ({@link StepOutput#scored()}) instead of those rows; null for none
 */
public record Slice(int[] tokens, int startPos, int[] blockTable, int logitRows, boolean hidden, TokenChoice choice,
        Scoring scoring) {

    /** A slice that scores nothing. */
    public Slice(int[] tokens, int startPos, int[] blockTable, int logitRows, boolean hidden, TokenChoice choice) {
        this(tokens, startPos, blockTable, logitRows, hidden, choice, null);
    }

    /** A slice that needs the logits of its last token, or none. */
    public Slice(int[] tokens, int startPos, int[] blockTable, boolean wantsLogits) {
        this(tokens, startPos, blockTable, wantsLogits ? 1 : 0, false);
    }

    /** A slice that needs no hidden states. */
    public Slice(int[] tokens, int startPos, int[] blockTable, int logitRows) {
        this(tokens, startPos, blockTable, logitRows, false);
    }

    /** A slice whose logit rows come back whole. */
    public Slice(int[] tokens, int startPos, int[] blockTable, int logitRows, boolean hidden) {
        this(tokens, startPos, blockTable, logitRows, hidden, null);
    }

    public Slice {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("a slice needs at least one token");
        }
        if (startPos < 0) {
            throw new IllegalArgumentException("negative start position " + startPos);
        }
        if (logitRows < 0 || logitRows > tokens.length) {
            throw new IllegalArgumentException("logit rows " + logitRows + " for a slice of " + tokens.length + " tokens");
        }
        if (choice != null && (logitRows == 0 || hidden || (!choice.argmax() && logitRows != 1))) {
            throw new IllegalArgumentException("a slice whose tokens the backend may choose needs logit rows (one for"
                    + " a draw) and no hidden states: " + logitRows + " rows, " + choice + (hidden ? ", hidden" : ""));
        }
        if (scoring != null && (choice != null || scoring.ids().length > logitRows)) {
            throw new IllegalArgumentException("a slice scores at most its " + logitRows + " logit rows and chooses no"
                    + " tokens: " + scoring + (choice != null ? ", " + choice : ""));
        }
    }

    public int endPos() {
        return startPos + tokens.length;
    }

    public boolean wantsLogits() {
        return logitRows > 0;
    }

    @Override
    public String toString() {
        return "Slice[start " + startPos + ", tokens " + Arrays.toString(tokens) + ", logit rows " + logitRows
                + (hidden ? ", hidden" : "") + (choice != null ? ", " + choice : "")
                + (scoring != null ? ", " + scoring : "") + "]";
    }
}
