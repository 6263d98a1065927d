package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
