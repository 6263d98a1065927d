package io.nereid.engine.core;

import java.util.List;

/**
 * What the {@link OutputProcessor} made of a step, per slice of the {@link StepPlan} (same order),
 * for {@link Scheduler#update}: how many drafts were accepted, the tokens to append, whether the
 * sequence is done, and the choices forked from it when its prompt completed (n > 1).
 *
 * @param slices one outcome per planned slice
 */
record StepOutcome(List<SliceOutcome> slices) {

    StepOutcome {
        slices = List.copyOf(slices);
    }

    /**
     * @param acceptedDrafts draft tokens (a prefix of the slice's) the output kept; the rest are rolled back
     * @param appended       tokens the sequence gains: the accepted drafts, then the token sampled after them
     *                       (empty when the slice did not sample, e.g. a chunk mid-prompt)
     * @param finished       the sequence ended in this step (its terminal event was delivered)
     * @param forks          choices forked from this sequence's computed prompt, each with its first token
     */
    record SliceOutcome(int acceptedDrafts, int[] appended, boolean finished, List<Fork> forks) {

        static final SliceOutcome COMPUTED = new SliceOutcome(0, new int[0], false, List.of());

        SliceOutcome {
            forks = List.copyOf(forks);
            if (acceptedDrafts < 0) {
                throw new IllegalArgumentException("accepted drafts " + acceptedDrafts);
            }
        }
    }

    /**
     * Choice {@code choice} forked from the slice's sequence once its prompt was computed.
     *
     * @param output   its output state (its first token already sampled from the prompt's last row)
     * @param appended its first token(s)
     * @param finished it ended with that first token (nothing more to compute)
     */
    record Fork(int choice, ChoiceOutput output, int[] appended, boolean finished) {
    }
}
