package io.nereid.engine.sampling;

import java.util.SplittableRandom;

/**
 * Chooses the token from a position's {@link Probabilities}: {@link Greedy} takes the most likely,
 * {@link Draw} draws from the sequence's seeded RNG (same seed, same tokens). Speculative decoding
 * will add the verification of drafts here (rejection sampling from target p and draft q, both
 * answering {@link Probabilities#probability(int)}); it is not written yet.
 *
 * <p>Threading: one per sequence, engine thread; {@link Draw} is not thread-safe.
 */
public sealed interface TokenSelector permits TokenSelector.Greedy, TokenSelector.Draw {

    /** The chosen token, one of {@code p}'s candidates. */
    int select(Probabilities p);

    /** The candidate of highest weight, the lowest id among equals. Uses no randomness; stateless. */
    record Greedy() implements TokenSelector {

        @Override
        public int select(Probabilities p) {
            int best = 0;
            for (int k = 1; k < p.size(); k++) {
                if (p.weight(k) > p.weight(best) || (p.weight(k) == p.weight(best) && p.id(k) < p.id(best))) {
                    best = k;
                }
            }
            return p.id(best);
        }
    }

    /**
     * Inverse-CDF draw: one {@code nextDouble()} per token, scaled by the total weight, walked over
     * the candidates in their order. When rounding leaves the remainder at or above 0 after the last
     * candidate, the last candidate is chosen. A rollback of the chain does not rewind the RNG.
     */
    final class Draw implements TokenSelector {

        private final SplittableRandom random;

        public Draw(long seed) {
            this.random = new SplittableRandom(seed);
        }

        @Override
        public int select(Probabilities p) {
            double u = random.nextDouble() * p.total();
            for (int k = 0; k < p.size(); k++) {
                u -= p.weight(k);
                if (u < 0) {
                    return p.id(k);
                }
            }
            return p.id(p.size() - 1);
        }
    }
}
