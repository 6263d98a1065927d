package io.nereid.engine.structured;

/**
 * A constraint compiled against one vocabulary: the automaton (shared, its tables growing as
 * outputs explore it) from which each sequence takes a {@link TokenMatcher}. Thread-safe.
 */
public final class CompiledConstraint {

    private final Automaton automaton;

    CompiledConstraint(Automaton automaton) {
        this.automaton = automaton;
        automaton.mask(automaton.initial());   // the first token's mask, off the engine thread
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
