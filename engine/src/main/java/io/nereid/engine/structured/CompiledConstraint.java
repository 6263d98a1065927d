package io.nereid.engine.structured;

/**
 * A constraint compiled against one vocabulary: the automaton (shared, its tables growing as
 * outputs explore it) from which each sequence takes a {@link TokenMatcher}. Thread-safe.
 */
public final class CompiledConstraint {

    private final Automaton automaton;
    private final int[] specialTokens;

    CompiledConstraint(Automaton automaton) {
        this(automaton, new int[0]);
    }

    CompiledConstraint(Automaton automaton, int[] specialTokens) {
        this.automaton = automaton;
        this.specialTokens = specialTokens.clone();
        automaton.mask(automaton.initial());   // the first token's mask, off the engine thread
    }

    /**
     * The special (control) tokens the constraint writes ({@code [TOOL_CALLS]}): they belong to the
     * output's text, which skips every other special token.
     */
    public int[] specialTokens() {
        return specialTokens.clone();
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
