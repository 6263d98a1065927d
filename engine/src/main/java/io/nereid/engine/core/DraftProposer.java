package io.nereid.engine.core;

/**
 * Offers draft tokens to verify after a running sequence's last token (speculative decoding): the
 * {@link Scheduler} asks when it plans a decode, and schedules {@code 1 + k} positions. Engine
 * thread only; must be cheap.
 */
@FunctionalInterface
public interface DraftProposer {

    /** Proposes nothing: one token per decode step. */
    DraftProposer NONE = (sequence, tokens, length, max) -> new int[0];

    /**
     * Up to {@code max} tokens that may follow the sequence's {@code length} tokens in {@code tokens}
     * (prompt then output; read only {@code [0, length)}). {@code sequence} identifies the sequence,
     * the same object from its first proposal until {@link #released}, for a proposer that keeps
     * state per sequence (a draft model's KV); a stateless one ignores it.
     */
    int[] propose(Object sequence, int[] tokens, int length, int max);

    /** {@code sequence} finished (or failed, or was cancelled): forget what is kept for it. */
    default void released(Object sequence) {
    }

    /** The scheduler starts planning a step: the proposals of its sequences follow. */
    default void beginStep() {
    }

    /**
     * Whether proposing after steps without proposals costs more than proposing every step: a draft model first
     * computes the tokens it skipped (its own KV); prompt lookup does not.
     */
    default boolean catchesUp() {
        return false;
    }

    /**
     * The target verified {@code drafted} drafts of {@code sequence}'s last proposal and kept the first
     * {@code accepted}; not called for a proposal of none, nor for a slice whose sequence finished in it
     * (a stop or the token limit may have cut its accepted run).
     */
    default void verified(Object sequence, int drafted, int accepted) {
    }

    /**
     * A step of decodes only ({@code sequences} of them, {@code tokens} positions with their drafts)
     * took {@code nanos} from planning (proposals included) to its processed output.
     */
    default void stepTimed(int sequences, int tokens, long nanos) {
    }

    /**
     * Whether to propose at all while {@code running} sequences are scheduled (vLLM's
     * {@code disable_by_batch_size}: speculation pays at small batches); always, by default.
     */
    default boolean enabledAt(int running) {
        return true;
    }
}
