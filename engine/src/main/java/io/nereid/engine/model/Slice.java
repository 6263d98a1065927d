package io.nereid.engine.model;

/**
 * One sequence's part of a forward step: {@code tokens} at positions
 * {@code [startPos, startPos + tokens.length)}. A decode slice has one token (or 1 + k with
 * speculative decoding), a prefill chunk many.
 *
 * @param tokens      token ids to compute
 * @param startPos    position of {@code tokens[0]}; positions before it are already in the KV cache
 * @param blockTable  physical KV block ids of the sequence in logical order, covering every
 *                    position up to {@code startPos + tokens.length - 1}
 * @param wantsLogits whether the caller needs the logits of the last token
 * @param allLogits   whether the caller needs the logits of every token (prompt logprobs); the
 *                    forward then returns {@code tokens.length} rows for the slice
 */
public record Slice(int[] tokens, int startPos, int[] blockTable, boolean wantsLogits, boolean allLogits) {

    /** A slice that needs at most its last token's logits. */
    public Slice(int[] tokens, int startPos, int[] blockTable, boolean wantsLogits) {
        this(tokens, startPos, blockTable, wantsLogits, false);
    }

    public Slice {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("a slice needs at least one token");
        }
        if (startPos < 0) {
            throw new IllegalArgumentException("negative start position " + startPos);
        }
    }

    public int endPos() {
        return startPos + tokens.length;
    }
}
