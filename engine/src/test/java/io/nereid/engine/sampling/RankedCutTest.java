package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.SamplingParams;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link Distribution#of} (a top-k from {@link Distribution#topKeys}, one pass; top-p / min-p alone from
 * {@link Distribution#ranked}, bucketed; no sort of the vocabulary) against {@link Distribution#sorted} (the
 * whole vocabulary sorted, the definition): the same candidates, weights and total, bit for bit, over thousands of seeded rows (vocabularies of 1 to 5,000; peaked, flat, tied,
 * quantised and -infinity logits; every temperature, top-k, top-p and min-p mix), and ranked answers
 * itself (no fallback) on rows shaped as a model's.
 */
class RankedCutTest {

    private static final int CASES = 4000;

    private static Distribution distribution(float temperature, int topK, float topP, float minP) {
        return new Distribution(new SamplingParams(temperature, topK, topP, minP, 1f, 0f, 0f, Map.of(), null, 0));
    }

    private static void assertSame(Probabilities expected, Probabilities actual, String where) {
        assertEquals(expected.size(), actual.size(), where + ": candidates");
        for (int k = 0; k < expected.size(); k++) {
            assertEquals(expected.id(k), actual.id(k), where + ": candidate " + k);
            assertEquals(Double.doubleToRawLongBits(expected.weight(k)), Double.doubleToRawLongBits(actual.weight(k)),
                    where + ": weight " + k);
        }
        assertEquals(Double.doubleToRawLongBits(expected.total()), Double.doubleToRawLongBits(actual.total()), where + ": total");
    }

    @Test
    void theRankedCutIsTheSortedCutBitForBit() {
        int answered = 0;
        for (int c = 0; c < CASES; c++) {
            SplittableRandom rnd = new SplittableRandom(0xC07_0000L + c);
            int vocab = rnd.nextInt(5) == 0 ? 1 + rnd.nextInt(40) : 1 + rnd.nextInt(5000);
            float[] z = logits(rnd, vocab);
            float temperature = new float[] {0.05f, 0.3f, 0.7f, 1f, 1.5f, 4f, 50f}[rnd.nextInt(7)];
            int topK = rnd.nextInt(3) == 0 ? -1 : rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(vocab + 2) : 1 + rnd.nextInt(64);
            float topP = rnd.nextInt(3) == 0 ? 1f : new float[] {0.01f, 0.5f, 0.8f, 0.9f, 0.95f, 0.99f, 0.999999f,
                (float) rnd.nextDouble()}[rnd.nextInt(8)];
            float minP = rnd.nextInt(2) == 0 ? 0f : new float[] {1e-6f, 0.01f, 0.05f, 0.1f, 0.5f, 1f,
                (float) rnd.nextDouble()}[rnd.nextInt(7)];
            if (topP <= 0f) {
                topP = 0.5f;
            }
            Distribution d = distribution(temperature, topK, topP, minP);
            if (d.unfiltered(vocab)) {
                continue;
            }
            String where = "case " + c + " (vocab " + vocab + ", T " + temperature + ", top-k " + topK + ", top-p " + topP
                    + ", min-p " + minP + ")";
            Probabilities sorted = d.sorted(z);
            if (topK <= 0 || topK >= vocab) {
                Probabilities ranked = d.ranked(z);
                if (ranked != null) {
                    answered++;
                    assertSame(sorted, ranked, where);
                }
            }
            assertSame(sorted, d.of(z), where + " through of()");
        }
        assertTrue(answered > CASES / 4, answered + " of " + CASES + " answered by ranked() without the sort");
    }

    @Test
    void onAModelShapedRowTheRankedCutNeedsNoFallback() {
        SplittableRandom rnd = new SplittableRandom(7);
        float[] z = new float[128_256];
        for (int i = 0; i < z.length; i++) {
            z[i] = (float) (3 * rnd.nextGaussian());
        }
        z[17] = 25f;
        z[4242] = 24f;
        for (float[] cut : new float[][] {{0.7f, -1, 0.9f, 0f}, {1f, 40, 1f, 0f}, {0.8f, 40, 0.95f, 0.05f},
                {1f, -1, 1f, 0.05f}, {1f, -1, 0.95f, 0.05f}, {1f, 256, 0.9f, 0f}, {1f, -1, 0.99f, 0f}}) {
            Distribution d = distribution(cut[0], (int) cut[1], cut[2], cut[3]);
            String where = "T " + cut[0] + " top-k " + cut[1] + " top-p " + cut[2] + " min-p " + cut[3];
            if (cut[1] < 0) {
                Probabilities ranked = d.ranked(z);
                assertNotNull(ranked, "ranked answers " + where);
                assertSame(d.sorted(z), ranked, where);
            }
            assertSame(d.sorted(z), d.of(z), where);
        }
    }

    @Test
    void aTopPJustPastABucketsShareGathersTheNextBucketToo() {
        float[] z = new float[4000];
        for (int i = 0; i < z.length; i++) {
            z[i] = -0.01f * i;   // 12 or 13 tokens a bucket (1/8 nat), the shares climbing slowly
        }
        double sum = 0;
        for (float v : z) {
            sum += Math.exp(v);
        }
        int checked = 0;
        for (int b = 0; b < 200; b += 7) {
            double share = 0;   // of the buckets 0..b
            for (float v : z) {
                if ((int) ((0 - v) * 8.0) <= b) {
                    share += Math.exp(v);
                }
            }
            float topP = Math.nextUp((float) (share / sum));
            if (topP >= 1f) {
                continue;
            }
            Distribution d = distribution(1f, -1, topP, 0f);
            Probabilities ranked = d.ranked(z);
            assertNotNull(ranked, "top-p " + topP + " just past bucket " + b + "'s share");
            assertSame(d.sorted(z), ranked, "top-p " + topP + " just past bucket " + b + "'s share");
            checked++;
        }
        assertTrue(checked >= 15, checked + " buckets");
    }

    @Test
    void theTopKeysAreTheSortsLastKeysWhateverTheRowsOrder() {
        SplittableRandom rnd = new SplittableRandom(11);
        for (int c = 0; c < 300; c++) {
            int vocab = 2 + rnd.nextInt(3000);
            float[] z = new float[vocab];
            int shape = c % 4;
            for (int i = 0; i < vocab; i++) {
                z[i] = switch (shape) {
                    case 0 -> (float) rnd.nextGaussian();
                    case 1 -> i;                                      // ascending: every token passes the bar
                    case 2 -> (float) rnd.nextInt(3);                 // ties across the cut
                    default -> rnd.nextInt(50) == 0 ? Float.NaN : rnd.nextInt(7) == 0 ? Float.NEGATIVE_INFINITY
                            : (float) rnd.nextGaussian();
                };
            }
            int k = 1 + rnd.nextInt(Math.min(vocab - 1, 300));
            long[] all = new long[vocab];
            for (int i = 0; i < vocab; i++) {
                int bits = Float.floatToIntBits(z[i]);
                all[i] = ((long) (bits >= 0 ? bits : bits ^ 0x7fffffff) << 32) | i;
            }
            java.util.Arrays.sort(all);
            org.junit.jupiter.api.Assertions.assertArrayEquals(java.util.Arrays.copyOfRange(all, vocab - k, vocab),
                    Distribution.topKeys(z, k), "case " + c + ": top " + k + " of " + vocab);
        }
    }

    @Test
    void aLowTemperatureWithMinPKeepsWhatTheSortKeeps() {
        // found in review: the float products' rounding at |max| ~ 1060 exceeded the bucket edge's old slack
        Distribution d = distribution(0.0731f, -1, 1f, 1.9174055E-10f);
        float[] z = {77.488976f, 75.85336f};
        assertSame(d.sorted(z), d.of(z), "min-p at T 0.0731");
        assertEquals(2, d.of(z).size());
        // a temperature so low that 8 / T overflows float: the sort answers (was an empty gather)
        Distribution cold = distribution(1e-38f, -1, 1f, 0.9f);
        float[] two = {0f, -1f};
        assertSame(cold.sorted(two), cold.of(two), "T 1e-38");
        SplittableRandom r = new SplittableRandom(41);
        for (int c = 0; c < 3000; c++) {   // large logits at low temperatures, min-p and top-p
            float[] row = new float[1 + r.nextInt(300)];
            float base = (float) (r.nextDouble() * 200 - 100);
            for (int i = 0; i < row.length; i++) {
                row[i] = base + (float) (r.nextGaussian() * 2);
            }
            float t = (float) Math.pow(10, -3 * r.nextDouble());
            float minP = (float) Math.pow(10, -12 * r.nextDouble());
            Distribution dist = distribution(t, -1, r.nextBoolean() ? 1f : 0.9f, minP);
            assertSame(dist.sorted(row), dist.of(row), "case " + c + " (T " + t + ", min-p " + minP + ", base " + base + ")");
        }
    }

    @Test
    void aNanOrAnInfiniteTopLeavesTheRowToTheSort() {
        Distribution d = distribution(1f, -1, 0.9f, 0f);
        float[] nan = {1f, Float.NaN, 2f};
        float[] inf = {1f, Float.POSITIVE_INFINITY, 2f};
        assertNull(d.ranked(nan));
        assertNull(d.ranked(inf));
        assertSame(d.sorted(nan), d.of(nan), "NaN");
        assertSame(d.sorted(inf), d.of(inf), "+infinity");
        Probabilities p = d.of(new float[] {1f, Float.NEGATIVE_INFINITY, 2f, Float.NEGATIVE_INFINITY});
        assertEquals(2, p.size(), "0.73 alone is short of 0.9; -infinity is never reached");
        assertEquals(2, p.id(0));
        assertEquals(0, p.id(1));
    }

    private static float[] logits(SplittableRandom rnd, int vocab) {
        float[] z = new float[vocab];
        int shape = rnd.nextInt(6);
        for (int i = 0; i < vocab; i++) {
            z[i] = switch (shape) {
                case 0 -> (float) (3 * rnd.nextGaussian());                       // model-like spread
                case 1 -> (float) (0.01 * rnd.nextGaussian());                    // flat: the cut needs many ranks
                case 2 -> (float) rnd.nextInt(6);                                 // heavy ties
                case 3 -> (float) (rnd.nextGaussian() * 40);                      // past 32 nats below the top
                case 4 -> i % 3 == 0 ? Float.NEGATIVE_INFINITY : (float) rnd.nextGaussian();
                default -> (float) (rnd.nextDouble() < 0.001 ? 20 + rnd.nextGaussian() : rnd.nextGaussian());   // peaked
            };
        }
        if (rnd.nextInt(10) == 0) {
            z[rnd.nextInt(vocab)] = (float) 1e30;   // a product past float at a low temperature
        }
        return z;
    }
}
