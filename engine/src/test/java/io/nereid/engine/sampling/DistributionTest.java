package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.api.SamplingParams;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The cut-offs and the temperature, read from the probabilities rather than from draws. */
class DistributionTest {

    private static final float NEG_INF = Float.NEGATIVE_INFINITY;
    /** Probabilities 0.4, 0.3, 0.2, 0.1 at temperature 1. */
    private static final float[] LOGITS = {(float) Math.log(0.3), (float) Math.log(0.1), (float) Math.log(0.4),
        (float) Math.log(0.2)};

    private static Probabilities of(float temperature, int topK, float topP, float minP, float... logits) {
        return new Distribution(new SamplingParams(temperature, topK, topP, minP, 1f, 0f, 0f, Map.of(), null, 0)).of(logits);
    }

    private static int[] ids(Probabilities p) {
        int[] ids = new int[p.size()];
        for (int k = 0; k < ids.length; k++) {
            ids[k] = p.id(k);
        }
        return ids;
    }

    @Test
    void withoutACutEveryTokenIsACandidateInVocabularyOrder() {
        Probabilities p = of(1f, -1, 1f, 0f, LOGITS);
        assertArrayEquals(new int[] {0, 1, 2, 3}, ids(p));
        assertEquals(0.3, p.probability(0), 1e-6);
        assertEquals(0.1, p.probability(1), 1e-6);
        assertEquals(1.0, p.weight(2), 1e-12, "the most likely has weight exp(0)");
    }

    @Test
    void topKKeepsTheKMostLikelyMostLikelyFirst() {
        Probabilities p = of(1f, 2, 1f, 0f, LOGITS);
        assertArrayEquals(new int[] {2, 0}, ids(p));
        assertEquals(0.4 / 0.7, p.probability(2), 1e-6);
        assertEquals(0, p.probability(3));
        assertArrayEquals(new int[] {2, 0, 3, 1}, ids(of(1f, 0, 0.99999f, 0f, LOGITS)), "top_k 0 disables");
    }

    @Test
    void topPKeepsTheSmallestSetThatReachesIt() {
        assertArrayEquals(new int[] {2}, ids(of(1f, -1, 0.39f, 0f, LOGITS)));
        assertArrayEquals(new int[] {2, 0}, ids(of(1f, -1, 0.41f, 0f, LOGITS)));
        assertArrayEquals(new int[] {2, 0, 3}, ids(of(1f, -1, 0.85f, 0f, LOGITS)));
        assertArrayEquals(new int[] {2}, ids(of(1f, 3, 0.42f, 0f, LOGITS)), "over the top-k renormalised: 0.4 / 0.9 >= 0.42");
    }

    @Test
    void minPDropsTokensLessLikelyThanItsShareOfTheTop() {
        assertArrayEquals(new int[] {2, 0, 3}, ids(of(1f, -1, 1f, 0.45f, LOGITS)), "0.1 < 0.45 x 0.4 < 0.2");
        assertArrayEquals(new int[] {2}, ids(of(1f, -1, 1f, 1f, LOGITS)));
        Probabilities p = of(1f, -1, 1f, 0.7f, LOGITS);
        assertEquals(0.4 / 0.7, p.probability(2), 1e-6);
    }

    @Test
    void temperatureSharpensAndFlattens() {
        Probabilities cold = of(0.5f, -1, 1f, 0f, LOGITS);
        assertEquals(0.16 / 0.30, cold.probability(2), 1e-6);   // p^2 / sum p^2 = 0.16 / 0.30
        Probabilities hot = of(1000f, -1, 1f, 0f, LOGITS);
        assertEquals(0.25, hot.probability(1), 1e-3);
    }

    @Test
    void temperatureZeroIsTheArgmaxWithCertaintyTiesToTheLowestId() {
        Probabilities p = of(0f, 2, 0.5f, 0.5f, 1f, 3f, 3f, -2f);
        assertArrayEquals(new int[] {1}, ids(p));
        assertEquals(1.0, p.probability(1));
        assertEquals(0.0, p.probability(2));
    }

    @Test
    void impossibleTokensAreNoCandidates() {
        Probabilities p = of(1f, -1, 1f, 0f, 0f, NEG_INF, 0f);
        assertArrayEquals(new int[] {0, 2}, ids(p));
        assertEquals(0.5, p.probability(0), 1e-12);
        assertEquals(0, p.probability(1));
    }

    @Test
    void whenEveryTokenIsImpossibleTheProbabilityFallsOnTokenZero() {
        assertArrayEquals(new int[] {0}, ids(of(1f, -1, 1f, 0f, NEG_INF, NEG_INF)));
    }
}
