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
 * @param argmaxOnly whether the engine needs nothing of the logit rows but each row's argmax (the lowest id
 *                   of the greatest logit; a greedy sequence without logprobs, penalties, bias or a
 *                   constraint): the backend may return those ids ({@link StepOutput#argmax()}) instead of
 *                   the rows, which spares a device backend copying them to the host. Returning the rows
 *                   is always allowed
 */
public record Slice(int[] tokens, int startPos, int[] blockTable, int logitRows, boolean hidden, boolean argmaxOnly) {

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
        this(tokens, startPos, blockTable, logitRows, hidden, false);
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
        if (argmaxOnly && (logitRows == 0 || hidden)) {
            throw new IllegalArgumentException("an argmax-only slice needs logit rows and no hidden states");
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
                + (hidden ? ", hidden" : "") + (argmaxOnly ? ", argmax only" : "") + "]";
    }
}
