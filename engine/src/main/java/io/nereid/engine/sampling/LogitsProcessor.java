package io.nereid.engine.sampling;

/**
 * One step of a sequence's sampling chain that edits logits before the distribution is formed
 * (a penalty, a bias, a mask). A processor may keep per-sequence state that depends on the tokens
 * the sequence emitted; that state only changes through {@link #accept} and {@link #rollback}, never
 * through {@link #apply}, so the same logits can be processed again (to score a draft, to sample
 * twice) with the same result.
 *
 * <p>Threading: one instance per sequence, called by the engine thread only; not thread-safe.
 */
public interface LogitsProcessor {

    /** Edits {@code logits} (vocab) in place for the sequence's next position. */
    void apply(float[] logits);

    /**
     * Whether {@link #apply} may change logits at the sequence's next position: false only when it
     * surely leaves them as they are (min_tokens once reached), so the chain can let a backend choose
     * from the raw logits ({@link SamplingChain#choice}).
     */
    default boolean active() {
        return true;
    }

    /** The sequence emitted {@code token}: advance the state for the position after it. */
    void accept(int token);

    /**
     * Forgets the last {@code n} accepted tokens, restoring exactly the state before they were
     * accepted (a rejected speculative draft, a grammar backtrack).
     *
     * @param n how many, 0 to the number accepted (the chain checks the bound)
     */
    void rollback(int n);
}
