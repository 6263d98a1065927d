package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.api.SamplingParams;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The guard of the move from {@code Sampler} to {@link SamplingChain}: over thousands of seeded
 * random sequences (vocabularies of 1 to 300 with ties and -infinity, every sampling parameter,
 * several steps each) the chain draws the same token ids and reports the same logprob records, bit
 * for bit, as {@link ReferenceSampler} (the old code) with the same seed. min_tokens is compared
 * against what the engine did before the chain: suppress the ids in a copy of the logits, then
 * sample; its logprobs now come from the raw logits, so they are compared with the old
 * {@code score} of the unsuppressed logits.
 */
class SamplingChainEquivalenceTest {

    private static final int CASES = 5000;

    @Test
    void theChainDrawsTheSameTokensAndLogprobsAsTheSamplerItReplaced() {
        int steps = 0;
        for (int c = 0; c < CASES; c++) {
            steps += compare(c, new SplittableRandom(0x5EED_0000L + c));
        }
        assertEquals(true, steps > 3 * CASES, steps + " steps compared");
    }

    private static int compare(int c, SplittableRandom rnd) {
        int vocab = 1 + rnd.nextInt(300);
        SamplingParams params = randomParams(rnd, vocab);
        int[] prompt = new int[rnd.nextInt(24)];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = rnd.nextInt(vocab);
        }
        int steps = 1 + rnd.nextInt(8);
        int minTokens = rnd.nextInt(3) == 0 ? 1 + rnd.nextInt(steps + 1) : 0;
        int[] suppressed = new int[rnd.nextInt(4)];
        for (int i = 0; i < suppressed.length; i++) {
            suppressed[i] = rnd.nextInt(8) == 0 ? vocab + rnd.nextInt(3) : rnd.nextInt(vocab);   // some outside
        }
        long seed = rnd.nextLong();
        boolean logprobs = rnd.nextBoolean();
        var reference = new ReferenceSampler(params, vocab, prompt, seed);
        var chain = new SamplingChain(params, vocab, prompt, seed, minTokens, suppressed);
        for (int step = 0; step < steps; step++) {
            String where = "case " + c + " step " + step + " (vocab " + vocab + ", " + params + ", min_tokens " + minTokens + ")";
            float[] logits = randomLogits(rnd, vocab);
            float[] untouched = logits.clone();
            float[] old = logits;
            if (step < minTokens) {   // what InflightEngine did before the chain
                old = logits.clone();
                for (int id : suppressed) {
                    if (id < vocab) {
                        old[id] = Float.NEGATIVE_INFINITY;
                    }
                }
            }
            if (rnd.nextInt(4) == 0) {
                chain.distribution(logits);   // draws nothing, changes nothing
            }
            if (rnd.nextInt(4) == 0) {
                int k = 1 + rnd.nextInt(3);
                for (int i = 0; i < k; i++) {
                    chain.accept(rnd.nextInt(vocab));   // a draft the verifier will reject
                }
                chain.rollback(k);
            }
            SampledToken expected = reference.sample(old, logprobs);
            if (logprobs && step < minTokens) {
                expected = ReferenceSampler.score(logits, expected.id(), params.topLogprobs());
            }
            SampledToken actual = chain.sample(logits, logprobs);
            assertArrayEquals(untouched, logits, where + ": the raw logits are left unchanged");
            assertEquals(expected.id(), actual.id(), where);
            assertEquals(expected.logprob(), actual.logprob(), where);
            assertEquals(expected.rank(), actual.rank(), where);
            assertArrayEquals(expected.topIds(), actual.topIds(), where);
            assertArrayEquals(expected.topLogprobs(), actual.topLogprobs(), where);
            chain.accept(actual.id());
        }
        return steps;
    }

    private static SamplingParams randomParams(SplittableRandom rnd, int vocab) {
        float temperature = switch (rnd.nextInt(6)) {
            case 0 -> 0f;
            case 1 -> 1f;
            case 2 -> new float[] {0.05f, 0.3f, 0.7f, 1.5f, 3f}[rnd.nextInt(5)];
            default -> (float) (rnd.nextDouble() * 2);   // may be 0 too
        };
        int topK = switch (rnd.nextInt(4)) {
            case 0 -> -1;
            case 1 -> 0;
            default -> 1 + rnd.nextInt(vocab + 5);   // past the vocabulary as well
        };
        float topP = rnd.nextBoolean() ? 1f : rnd.nextInt(10) == 0 ? 0.5f : (float) Math.max(1e-3, rnd.nextDouble());
        float minP = rnd.nextBoolean() ? 0f : rnd.nextInt(10) == 0 ? 1f : (float) rnd.nextDouble();
        float repetition = rnd.nextBoolean() ? 1f : (float) (0.5 + rnd.nextDouble() * 1.5);
        float presence = rnd.nextBoolean() ? 0f : (float) (rnd.nextDouble() * 4 - 2);
        float frequency = rnd.nextBoolean() ? 0f : (float) (rnd.nextDouble() * 4 - 2);
        Map<Integer, Float> bias = new HashMap<>();
        if (rnd.nextBoolean()) {
            for (int i = rnd.nextInt(6); i > 0; i--) {
                bias.put(rnd.nextInt(vocab), rnd.nextInt(5) == 0 ? (rnd.nextBoolean() ? 100f : -100f)
                        : (float) (rnd.nextDouble() * 20 - 10));
            }
        }
        return new SamplingParams(temperature, topK, topP, minP, repetition, presence, frequency, bias, null,
                rnd.nextInt(SamplingParams.MAX_LOGPROBS + 1));
    }

    /** Gaussian logits at several scales, some rounded to force ties, some -infinity, rarely all of them. */
    private static float[] randomLogits(SplittableRandom rnd, int vocab) {
        float[] z = new float[vocab];
        if (rnd.nextInt(100) == 0) {
            java.util.Arrays.fill(z, Float.NEGATIVE_INFINITY);
            return z;
        }
        double scale = new double[] {0.01, 0.5, 2, 8, 40}[rnd.nextInt(5)];
        boolean ties = rnd.nextInt(3) == 0;
        double impossible = rnd.nextInt(3) == 0 ? rnd.nextDouble() * 0.6 : 0;
        for (int i = 0; i < vocab; i++) {
            double v = rnd.nextGaussian() * scale;
            z[i] = rnd.nextDouble() < impossible ? Float.NEGATIVE_INFINITY : ties ? (float) Math.rint(v) : (float) v;
        }
        return z;
    }
}
