package io.nereid.engine.structured;

import io.nereid.engine.api.Constraint;

/**
 * A constraint compiled against one vocabulary: the automaton (shared, its tables growing as
 * outputs explore it) from which each sequence takes a {@link TokenMatcher}. Thread-safe.
 */
public final class CompiledConstraint {

    private final Constraint constraint;
    private final Automaton automaton;

    CompiledConstraint(Constraint constraint, Automaton automaton) {
        this.constraint = constraint;
        this.automaton = automaton;
        automaton.mask(automaton.initial());   // the first token's mask, off the engine thread
    }

    public Constraint constraint() {
        return constraint;
    }

    /**
     * A matcher at the start of the output.
     *
     * @param eosIds the model's end-of-sequence ids: allowed exactly where the output may end
     */
    public TokenMatcher matcher(int[] eosIds) {
        return new TokenMatcher(automaton, eosIds);
    }
}
