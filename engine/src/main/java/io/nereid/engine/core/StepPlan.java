package io.nereid.engine.core;

import io.nereid.engine.backend.Step;
import java.util.List;

/**
 * What one engine step computes, as the {@link Scheduler} decided it: running sequences first,
 * then chunks of waiting prompts, within the token and sequence budgets; and the sequences whose
 * scheduling failed (their requests are failed by the engine; the scheduler has already released
 * them). Immutable.
 *
 * @param slices   in order; at most one per sequence
 * @param failures sequences the scheduler could not schedule, with why
 */
record StepPlan(List<ScheduledSlice> slices, List<Failure> failures) {

    /** A sequence whose scheduling threw; the scheduler has taken it out of its queues. */
    record Failure(Sequence sequence, Throwable cause) {
    }

    StepPlan {
        slices = List.copyOf(slices);
        failures = List.copyOf(failures);
    }

    boolean isEmpty() {
        return slices.isEmpty();
    }

    /** Tokens the step computes. */
    int tokens() {
        int n = 0;
        for (ScheduledSlice s : slices) {
            n += s.length();
        }
        return n;
    }

    /** This plan without the slices of sequences that have finished since it was made (their requests failed). */
    StepPlan withoutFinished() {
        if (slices.stream().noneMatch(s -> s.sequence().finished())) {
            return this;
        }
        return new StepPlan(slices.stream().filter(s -> !s.sequence().finished()).toList(), failures);
    }

    /** The backend's step. */
    Step toStep() {
        return new Step(slices.stream().map(ScheduledSlice::toSlice).toList());
    }
}
