package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TokenSelectorTest {

    @Test
    void greedyTakesTheHeaviestCandidateAndTheLowestIdAmongEquals() {
        var greedy = new TokenSelector.Greedy();
        assertEquals(4, greedy.select(new Probabilities(new int[] {7, 4, 2}, new double[] {0.2, 0.5, 0.3}, 1.0)));
        assertEquals(2, greedy.select(new Probabilities(new int[] {7, 2, 4}, new double[] {0.5, 0.5, 0.5}, 1.5)));
        assertEquals(9, greedy.select(Probabilities.certain(9)));
    }

    @Test
    void drawWalksTheCandidatesWithOneNumberOfTheSeededStreamPerToken() {
        var p = new Probabilities(new int[] {5, 3, 8}, new double[] {1, 2, 1}, 4.0);
        var draw = new TokenSelector.Draw(21);
        var expected = new SplittableRandom(21);
        for (int i = 0; i < 100; i++) {
            double u = expected.nextDouble() * 4;
            assertEquals(u < 1 ? 5 : u < 3 ? 3 : 8, draw.select(p));
        }
    }

    @Test
    void drawFallsToTheLastCandidateWhenRoundingLeavesARemainder() {
        // A total larger than the weights stands for a remainder left by rounding.
        var p = new Probabilities(new int[] {1, 2}, new double[] {1e-300, 1e-300}, 1.0);
        assertEquals(2, new TokenSelector.Draw(3).select(p));
    }

    /**
     * Rejection sampling of an n-gram draft (q all on the draft) returns tokens distributed as p,
     * whatever the draft: the most likely, the least likely, or a token p gives no weight at all.
     * Chi-square goodness of fit over 40,000 seeded draws per draft, at the 0.1 % point.
     */
    @Test
    void verifiedDraftsAreDistributedAsTheTarget() {
        int[] ids = {11, 3, 7, 20, 5, 9};
        double[] w = {4.0, 0.25, 1.5, 2.0, 0.75, 1.0};
        double total = 0;
        for (double x : w) {
            total += x;
        }
        Probabilities p = new Probabilities(ids, w, total);
        for (int draft : new int[] {11, 3, 9, 42}) {
            TokenSelector.Draw draw = new TokenSelector.Draw(1234 + draft);
            int n = 40_000;
            long[] counts = new long[ids.length];
            long kept = 0;
            for (int i = 0; i < n; i++) {
                int t = draw.verify(p, draft);
                kept += t == draft ? 1 : 0;
                int k = java.util.stream.IntStream.range(0, ids.length).filter(j -> ids[j] == t).findFirst().orElseThrow(
                        () -> new AssertionError("draft " + draft + ": token " + t + " is no candidate"));
                counts[k]++;
            }
            double chi2 = goodnessOfFit(counts, w, total, n);
            assertTrue(chi2 < 20.5, "draft " + draft + ": chi-square " + chi2 + " (5 df), counts " + java.util.Arrays.toString(counts));
            // kept with probability p(draft): a draft p gives no weight is never kept
            assertEquals(p.probability(draft), (double) kept / n, 0.01, "draft " + draft + " kept " + kept + " times");
        }
    }

    /**
     * Drafts drawn from a draft model's q, verified against p (Leviathan et al.): the tokens come out
     * distributed as p for q close to p, far from it, and with zeros where p is not and mass where p has
     * none. Chi-square over 60,000 seeded rounds per q, at the 0.1 % point (5 degrees of freedom).
     */
    @Test
    void draftsDrawnFromQAndVerifiedAreDistributedAsTheTarget() {
        int[] ids = {11, 3, 7, 20, 5, 9};
        double[] w = {4.0, 0.25, 1.5, 2.0, 0.75, 1.0};
        double total = java.util.Arrays.stream(w).sum();
        Probabilities p = new Probabilities(ids, w, total);
        double[][] qs = {{3.5, 0.5, 1.5, 2.0, 0.5, 1.0}, {0.1, 5.0, 0.1, 0.1, 3.0, 0.1}, {0, 0, 2.0, 0, 0, 1.0},
            {1, 1, 1, 1, 1, 1}};
        int[][] qIds = {ids, ids, ids, {11, 3, 7, 20, 5, 42}};   // the last q puts mass on 42, which p never picks
        for (int c = 0; c < qs.length; c++) {
            Probabilities q = new Probabilities(qIds[c], qs[c], java.util.Arrays.stream(qs[c]).sum());
            TokenSelector.Draw proposer = new TokenSelector.Draw(77 + c);
            TokenSelector.Draw verifier = new TokenSelector.Draw(991 + c);
            int n = 60_000;
            long[] counts = new long[ids.length];
            for (int i = 0; i < n; i++) {
                int d = proposer.select(q);
                int t = verifier.verify(p, d, q);
                int k = java.util.stream.IntStream.range(0, ids.length).filter(j -> ids[j] == t).findFirst().orElseThrow(
                        () -> new AssertionError("token " + t + " is no candidate of p"));
                counts[k]++;
            }
            double chi2 = goodnessOfFit(counts, w, total, n);
            assertTrue(chi2 < 20.5, "q " + c + ": chi-square " + chi2 + ", counts " + java.util.Arrays.toString(counts));
        }
    }

    /** Pearson's statistic of {@code counts} over {@code n} draws against weights {@code w} summing to {@code total}. */
    private static double goodnessOfFit(long[] counts, double[] w, double total, int n) {
        double chi2 = 0;
        for (int k = 0; k < counts.length; k++) {
            double expected = n * w[k] / total;
            chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
        }
        return chi2;
    }

    @Test
    void greedyKeepsADraftExactlyWhenItIsTheMostLikely() {
        var greedy = new TokenSelector.Greedy();
        var p = new Probabilities(new int[] {7, 4, 2}, new double[] {0.2, 0.5, 0.3}, 1.0);
        assertEquals(4, greedy.verify(p, 4));
        assertEquals(4, greedy.verify(p, 7));
        assertEquals(4, greedy.verify(p, 99));
    }
}
