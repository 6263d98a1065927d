package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Each processor's apply, accept and rollback, on logits small enough to check by hand. */
class LogitsProcessorTest {

    private static final float NEG_INF = Float.NEGATIVE_INFINITY;

    private static float[] applied(LogitsProcessor p, float... logits) {
        float[] z = logits.clone();
        p.apply(z);
        return z;
    }

    @Test
    void minTokensSuppressesTheIdsUntilEnoughTokensWereAccepted() {
        var p = new MinTokensProcessor(2, new int[] {1, 3, -1, 99});
        assertArrayEquals(new float[] {1f, NEG_INF, 2f, NEG_INF}, applied(p, 1f, 5f, 2f, 4f), "ids outside are ignored");
        p.accept(0);
        assertArrayEquals(new float[] {1f, NEG_INF, 2f, NEG_INF}, applied(p, 1f, 5f, 2f, 4f));
        p.accept(2);
        assertArrayEquals(new float[] {1f, 5f, 2f, 4f}, applied(p, 1f, 5f, 2f, 4f));
    }

    @Test
    void minTokensRolledBackBelowTheMinimumSuppressesAgain() {
        var p = new MinTokensProcessor(1, new int[] {0});
        p.accept(0);
        assertArrayEquals(new float[] {3f, 1f}, applied(p, 3f, 1f));
        p.rollback(1);
        assertArrayEquals(new float[] {NEG_INF, 1f}, applied(p, 3f, 1f));
    }

    @Test
    void minTokensOfZeroSuppressesNothing() {
        assertArrayEquals(new float[] {3f, 1f}, applied(new MinTokensProcessor(0, new int[] {0}), 3f, 1f));
    }

    @Test
    void logitBiasAddsEachBiasAndIgnoresAcceptAndRollback() {
        var p = new LogitBiasProcessor(Map.of(0, 1.5f, 2, -100f));
        assertArrayEquals(new float[] {2.5f, 1f, -99f}, applied(p, 1f, 1f, 1f));
        p.accept(0);
        p.rollback(1);
        assertArrayEquals(new float[] {2.5f, 1f, -99f}, applied(p, 1f, 1f, 1f));
    }

    @Test
    void repetitionPenaltyDividesPositiveAndMultipliesNegativeLogitsOfPromptAndOutputTokens() {
        var p = new PenaltyProcessor(2f, 0f, 0f, 4, new int[] {0, 1});
        assertArrayEquals(new float[] {2f, -6f, 4f, -1f}, applied(p, 4f, -3f, 4f, -1f));
        p.accept(3);
        assertArrayEquals(new float[] {2f, -6f, 4f, -2f}, applied(p, 4f, -3f, 4f, -1f));
    }

    @Test
    void frequencyAndPresencePenaltiesCountOutputTokensOnly() {
        var p = new PenaltyProcessor(1f, 0.5f, 0.25f, 3, new int[] {2});
        assertArrayEquals(new float[] {1f, 1f, 1f}, applied(p, 1f, 1f, 1f), "the prompt does not count");
        p.accept(0);
        p.accept(0);
        p.accept(1);
        // token 0: 1 - (0.25 x 2 + 0.5); token 1: 1 - (0.25 + 0.5)
        assertArrayEquals(new float[] {0f, 0.25f, 1f}, applied(p, 1f, 1f, 1f));
    }

    @Test
    void neutralPenaltiesLeaveTheLogitsAlone() {
        var p = new PenaltyProcessor(1f, 0f, 0f, 3, new int[] {0});
        p.accept(0);
        float[] z = {-0f, Float.NaN, 3f};
        assertArrayEquals(new float[] {-0f, Float.NaN, 3f}, applied(p, z));
    }

    @Test
    void penaltyRollbackRestoresExactlyTheStateBeforeTheAccepts() {
        var random = new SplittableRandom(11);
        float[] logits = new float[50];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) random.nextGaussian() * 3;
        }
        var p = new PenaltyProcessor(1.3f, 0.4f, -0.7f, 50, new int[] {1, 2, 3});
        for (int i = 0; i < 20; i++) {
            p.accept(random.nextInt(50));
        }
        float[] before = applied(p, logits);
        for (int i = 0; i < 40; i++) {   // past the history's first capacity
            p.accept(random.nextInt(8));
        }
        p.rollback(40);
        assertArrayEquals(before, applied(p, logits));
        p.rollback(20);
        assertArrayEquals(applied(new PenaltyProcessor(1.3f, 0.4f, -0.7f, 50, new int[] {1, 2, 3}), logits),
                applied(p, logits), "all rolled back: as new");
    }

    @Test
    void applyNeverChangesAProcessorsState() {
        var p = new PenaltyProcessor(1f, 1f, 0f, 2, new int[0]);
        p.accept(0);
        float[] once = applied(p, 1f, 1f);
        applied(p, 1f, 1f);
        assertArrayEquals(once, applied(p, 1f, 1f));
        assertEquals(0f, once[0]);
    }
}
