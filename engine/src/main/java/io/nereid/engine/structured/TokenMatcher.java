package io.nereid.engine.structured;

import io.nereid.engine.sampling.LogitsProcessor;
import java.util.Arrays;

/**
 * One sequence's position in a {@link CompiledConstraint}: the logits processor that masks every
 * token the constraint does not allow next (EOS only where the output may end, and only EOS where
 * it must), advances on the token the sequence emits and rolls back exactly (its past states are
 * kept). Engine thread only; not thread-safe.
 */
public final class TokenMatcher implements LogitsProcessor {

    private final Automaton automaton;
    private final int[] eosIds;
    private int[] history = new int[16];   // history[k]: the state after k accepted tokens
    private int accepted;

    TokenMatcher(Automaton automaton, int[] eosIds) {
        this.automaton = automaton;
        this.eosIds = eosIds.clone();
        history[0] = automaton.initial();
    }

    private int state() {
        return history[accepted];
    }

    /** Whether the output may end here (EOS allowed). */
    public boolean accepting() {
        return automaton.accepting(state());
    }

    /** Whether the output must end here: the constraint is complete and nothing may follow. */
    public boolean terminated() {
        return automaton.terminated(state());
    }

    /** Whether {@code token} may come next. */
    public boolean allows(int token) {
        if (isEos(token)) {
            return accepting();
        }
        byte[] b = automaton.tokenBytes(token);
        return b != null && automaton.advance(state(), b) != Automaton.DEAD;
    }

    /** The tokens allowed next as a bitset over the vocabulary (a copy; EOS included where allowed). */
    public long[] allowed() {
        long[] m = terminated() ? new long[(automaton.vocabSize() + 63) >>> 6] : automaton.mask(state()).clone();
        if (accepting()) {
            for (int e : eosIds) {
                m[e >>> 6] |= 1L << e;
            }
        }
        return m;
    }

    /** The ordinary tokens allowed next (shared, read-only; EOS not included): what {@link #apply} computes. */
    long[] currentMask() {
        return terminated() ? new long[0] : automaton.mask(state());
    }

    @Override
    public void apply(float[] logits) {
        int s = state();
        float[] eos = new float[eosIds.length];
        for (int k = 0; k < eosIds.length; k++) {
            eos[k] = logits[eosIds[k]];
        }
        if (automaton.terminated(s)) {
            Arrays.fill(logits, Float.NEGATIVE_INFINITY);
        } else {
            long[] m = automaton.mask(s);
            for (int w = 0; w < m.length; w++) {
                long bits = m[w];
                if (bits == -1L) {
                    continue;
                }
                int base = w << 6;
                int end = Math.min(64, logits.length - base);
                for (int j = 0; j < end; j++) {
                    if ((bits >>> j & 1) == 0) {
                        logits[base + j] = Float.NEGATIVE_INFINITY;
                    }
                }
            }
            // ids past the tokenizer's vocabulary (a padded embedding) are never allowed
            Arrays.fill(logits, Math.min(logits.length, m.length << 6), logits.length, Float.NEGATIVE_INFINITY);
        }
        boolean may = automaton.accepting(s);
        for (int k = 0; k < eosIds.length; k++) {
            logits[eosIds[k]] = may ? eos[k] : Float.NEGATIVE_INFINITY;
        }
        for (float x : logits) {
            if (x != Float.NEGATIVE_INFINITY) {
                return;
            }
        }
        throw new IllegalStateException(automaton.terminated(s) && eosIds.length == 0
                ? "the constraint is complete but the model has no end-of-sequence token"
                : "no token the constraint allows here is possible (a suppressed EOS, logit_bias or min_tokens leaves none)");
    }

    @Override
    public void accept(int token) {
        int s = state();
        int next;
        if (isEos(token)) {
            if (!automaton.accepting(s)) {
                throw new IllegalArgumentException("end of sequence before the constraint is complete");
            }
            next = s;
        } else {
            byte[] b = automaton.tokenBytes(token);
            next = b == null ? Automaton.DEAD : automaton.advance(s, b);
            if (next == Automaton.DEAD) {
                throw new IllegalArgumentException("token " + token + " is not allowed by the constraint here");
            }
        }
        if (accepted + 1 == history.length) {
            history = Arrays.copyOf(history, history.length * 2);
        }
        history[++accepted] = next;
    }

    @Override
    public void rollback(int n) {
        if (n < 0 || n > accepted) {
            throw new IllegalArgumentException("cannot roll back " + n + " of " + accepted + " tokens");
        }
        accepted -= n;
    }

    private boolean isEos(int token) {
        for (int e : eosIds) {
            if (e == token) {
                return true;
            }
        }
        return false;
    }
}
