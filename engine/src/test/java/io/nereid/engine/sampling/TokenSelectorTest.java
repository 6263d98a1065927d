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
            double chi2 = 0;
            for (int k = 0; k < ids.length; k++) {
                double expected = n * w[k] / total;
                chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
            }
            assertTrue(chi2 < 20.5, "draft " + draft + ": chi-square " + chi2 + " (5 df), counts " + java.util.Arrays.toString(counts));
            // kept with probability p(draft): a draft p gives no weight is never kept
            assertEquals(p.probability(draft), (double) kept / n, 0.01, "draft " + draft + " kept " + kept + " times");
        }
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
