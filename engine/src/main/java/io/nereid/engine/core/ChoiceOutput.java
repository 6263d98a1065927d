package io.nereid.engine.core;

import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.structured.TokenMatcher;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.text.StopStringMatcher;

/**
 * What one choice has produced and how it turns logits into text: its sampling chain (min_tokens,
 * penalty counts, seeded RNG), detokenizer and stop matcher, the tokens generated so far and when the first came.
 * Owned by the {@link OutputProcessor}; engine thread only.
 */
final class ChoiceOutput {

    final SamplingChain chain;
    final TokenMatcher constraint;    // the chain's structured-output matcher, or null
    final IncrementalDetokenizer detokenizer;
    final StopStringMatcher stops;
    /**
     * How the backend may choose this choice's next token in the step being computed ({@link ScheduledSlice#toSlice}
     * makes it, a draw taking its number from the chain then), null when the logits must come back.
     */
    TokenChoice pending;
    private int generated;            // output tokens so far
    private long firstTokenNanos;     // System.nanoTime() of the first output token, 0 before it

    ChoiceOutput(SamplingChain chain, TokenMatcher constraint, IncrementalDetokenizer detokenizer, StopStringMatcher stops) {
        this.chain = chain;
        this.constraint = constraint;
        this.detokenizer = detokenizer;
        this.stops = stops;
    }

    int generated() {
        return generated;
    }

    long firstTokenNanos() {
        return firstTokenNanos;
    }

    /** Counts one more output token. */
    void produced() {
        generated++;
        if (firstTokenNanos == 0) {
            firstTokenNanos = System.nanoTime();
        }
    }
}
