package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The top logprobs in one pass ({@link RawLogprobs#topInOnePass}) are what repeated selection picks
 * ({@link RawLogprobs#bySelection}: the largest first, equal values in id order), over rows of every shape; a
 * row with a NaN goes to selection; and the log-softmax sums to one.
 */
class RawLogprobsTest {

    @Test
    void onePassPicksWhatRepeatedSelectionPicks() {
        SplittableRandom r = new SplittableRandom(21);
        for (int c = 0; c < 3000; c++) {
            int n = 1 + r.nextInt(400);
            float[] raw = new float[n];
            int shape = c % 5;
            for (int i = 0; i < n; i++) {
                raw[i] = switch (shape) {
                    case 0 -> (float) r.nextGaussian();
                    case 1 -> r.nextInt(4);                                   // ties everywhere
                    case 2 -> i;                                              // ascending: every token enters
                    case 3 -> -i;                                             // descending
                    default -> r.nextInt(5) == 0 ? Float.NEGATIVE_INFINITY : i % 7 == 0 ? -0f : 0f;
                };
            }
            int k = Math.min(n, 1 + r.nextInt(20));
            int[] ids = new int[k];
            float[] values = new float[k];
            int[] expectedIds = new int[k];
            float[] expected = new float[k];
            assertTrue(RawLogprobs.topInOnePass(raw, ids, values));
            RawLogprobs.bySelection(raw, expectedIds, expected);
            assertArrayEquals(expectedIds, ids, "case " + c + ": top " + k + " of " + n);
            assertArrayEquals(expected, values, "case " + c);
        }
    }

    @Test
    void aRowWithANanIsLeftToSelection() {
        float[] raw = {Float.NaN, 1f, 2f};
        assertFalse(RawLogprobs.topInOnePass(raw, new int[2], new float[2]));
        SampledToken t = RawLogprobs.report(raw, 2, 2);
        assertEquals(0, t.topIds()[0], "selection keeps a NaN at id 0 first: nothing is greater than it");
    }

    @Test
    void theLogSoftmaxSumsToOne() {
        SplittableRandom r = new SplittableRandom(4);
        float[] logits = new float[50_000];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (4 * r.nextGaussian());
        }
        double total = 0;
        for (float v : RawLogprobs.logSoftmax(logits)) {
            total += Math.exp(v);
        }
        assertEquals(1.0, total, 1e-4);
    }
}
