package io.nereid.engine.backend;

import java.util.List;

/**
 * What one forward pass computes: slices of any number of sequences, each of any number of
 * tokens, and which of their positions need logits ({@link Slice#logitRows()}). Immutable.
 */
public record Step(List<Slice> slices) {

    public Step {
        slices = List.copyOf(slices);
        if (slices.isEmpty()) {
            throw new IllegalArgumentException("a step needs at least one slice");
        }
    }

    /** Tokens computed in the step, all slices together. */
    public int tokens() {
        int n = 0;
        for (Slice s : slices) {
            n += s.tokens().length;
        }
        return n;
    }

    /** Logit rows the step returns, all slices together. */
    public int logitRows() {
        int n = 0;
        for (Slice s : slices) {
            n += s.logitRows();
        }
        return n;
    }
}
