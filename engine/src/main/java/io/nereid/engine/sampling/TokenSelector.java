package io.nereid.engine.sampling;

import java.util.SplittableRandom;

/**
 * Chooses the token from a position's {@link Probabilities}: {@link Greedy} takes the most likely,
 * {@link Draw} draws from the sequence's seeded RNG (same seed, same tokens). {@link #verify}
 * checks a draft token proposed without a distribution of its own (n-gram prompt lookup: q puts all
 * its mass on the draft), as speculative decoding's rejection sampling does (Leviathan et al. 2023,
 * vLLM's rejection sampler): the draft is kept with probability min(1, p(d) / q(d)) = p(d), and
 * otherwise a token is drawn from normalize(max(0, p - q)), which is p without the draft, so the
 * token returned is distributed exactly as p.
 *
 * <p>Threading: one per sequence, engine thread; {@link Draw} is not thread-safe.
 */
public sealed interface TokenSelector permits TokenSelector.Greedy, TokenSelector.Draw {

    /** The chosen token, one of {@code p}'s candidates. */
    int select(Probabilities p);

    /**
     * {@code draft} if it is accepted, else the token chosen in its place; either way a token
     * distributed as {@code p} (greedy: the most likely, so the draft survives exactly when it is
     * that token).
     */
    int verify(Probabilities p, int draft);

    /**
     * {@code draft} drawn from {@code q} (a draft model's distribution; null: q all on the draft, as
     * {@link #verify(Probabilities, int)}), kept with probability min(1, p(d) / q(d)), else a token drawn
     * from normalize(max(0, p - q)): either way distributed exactly as {@code p}.
     */
    default int verify(Probabilities p, int draft, Probabilities q) {
        return verify(p, draft);
    }

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

        @Override
        public int verify(Probabilities p, int draft) {
            return select(p);
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
            return select(p, nextUniform());
        }

        /** The next number of the generator, in [0, 1): what {@link #select(Probabilities)} draws. */
        public double nextUniform() {
            return random.nextDouble();
        }

        /** {@link #select(Probabilities)} with its number drawn already ({@link #nextUniform}). */
        public static int select(Probabilities p, double uniform) {
            return walk(p, uniform * p.total(), -1);
        }

        /**
         * The candidate where {@code u} (in [0, total of the walked weights)) falls, walking the
         * candidates in order and leaving out {@code excluded} (-1: none); the last one walked when
         * rounding leaves {@code u} at or above 0 after it.
         */
        private static int walk(Probabilities p, double u, int excluded) {
            int last = -1;
            for (int k = 0; k < p.size(); k++) {
                if (p.id(k) != excluded) {
                    last = k;
                    u -= p.weight(k);
                    if (u < 0) {
                        return p.id(k);
                    }
                }
            }
            return p.id(last);
        }

        @Override
        public int verify(Probabilities p, int draft, Probabilities q) {
            double qd = q == null ? 0 : q.probability(draft);
            if (qd <= 0) {
                return verify(p, draft);   // not drawn from q (or no q): q is all on the draft
            }
            double pd = p.probability(draft);
            if (random.nextDouble() < Math.min(1.0, pd / qd)) {
                return draft;
            }
            java.util.Map<Integer, Double> qs = new java.util.HashMap<>(2 * q.size());
            for (int k = 0; k < q.size(); k++) {
                qs.put(q.id(k), q.weight(k) / q.total());
            }
            double[] residual = new double[p.size()];
            double rest = 0;
            for (int k = 0; k < p.size(); k++) {
                residual[k] = Math.max(0, p.weight(k) / p.total() - qs.getOrDefault(p.id(k), 0.0));
                rest += residual[k];
            }
            if (rest <= 0) {   // p and q agree: the draft was kept with probability 1 already
                return draft;
            }
            double u = random.nextDouble() * rest;
            int last = 0;
            for (int k = 0; k < p.size(); k++) {
                if (residual[k] > 0) {
                    last = k;
                    u -= residual[k];
                    if (u < 0) {
                        return p.id(k);
                    }
                }
            }
            return p.id(last);
        }

        /**
         * Two numbers per verified draft: one to accept it (u < p(d)), one to draw the replacement
         * from the candidates other than the draft, by the same inverse-CDF walk as {@link #select}.
         */
        @Override
        public int verify(Probabilities p, int draft) {
            double pd = p.probability(draft);
            if (random.nextDouble() < pd) {
                return draft;
            }
            double rest = 0;
            for (int k = 0; k < p.size(); k++) {
                rest += p.id(k) != draft ? p.weight(k) : 0;
            }
            if (rest == 0) {   // p is all on the draft: u < p(d) = 1 kept it already; no other candidate
                return draft;
            }
            return walk(p, random.nextDouble() * rest, draft);
        }
    }
}
