package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SamplingChainTest {

    private static final float[] LOGITS = {(float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.2)};

    private static SamplingParams params(float temperature, int topK, float topP, float minP) {
        return new SamplingParams(temperature, topK, topP, minP, 1f, 0f, 0f, Map.of(), null, 0);
    }

    private static SamplingParams penalties(float repetition, float presence, float frequency) {
        return new SamplingParams(0f, -1, 1f, 0f, repetition, presence, frequency, Map.of(), null, 0);
    }

    /** Samples and accepts, as the engine does for each emitted token. */
    private static SampledToken next(SamplingChain chain, float[] logits) {
        SampledToken t = chain.sample(logits, true);
        chain.accept(t.id());
        return t;
    }

    private static int[] draws(SamplingParams p, float[] logits, long seed, int n) {
        SamplingChain chain = new SamplingChain(p, logits.length, new int[0], seed);
        int[] counts = new int[logits.length];
        for (int i = 0; i < n; i++) {
            counts[next(chain, logits).id()]++;
        }
        return counts;
    }

    @Test
    void greedyTakesTheArgmaxAndLogitBiasCanOverrideIt() {
        assertEquals(0, next(new SamplingChain(SamplingParams.GREEDY, 3, new int[0], 1), LOGITS).id());
        var biased = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(2, 5f), null, 0);
        assertEquals(2, next(new SamplingChain(biased, 3, new int[0], 1), LOGITS).id());
    }

    @Test
    void temperatureOneSamplesTheModelDistribution() {
        int[] counts = draws(params(1f, -1, 1f, 0f), LOGITS, 42, 20_000);
        assertEquals(0.5, counts[0] / 20_000.0, 0.02);
        assertEquals(0.3, counts[1] / 20_000.0, 0.02);
        assertEquals(0.2, counts[2] / 20_000.0, 0.02);
    }

    @Test
    void temperatureSharpensOrFlattensTheDistributionTheSameWithAndWithoutACut() {
        // p ~ (0.5, 0.3, 0.2)^(1/T): T = 0.5 gives 25/38, 9/38, 4/38. Without top-k the draw walks the
        // tokens unsorted; top_k 2 (which drops token 2) goes through the sorted path.
        int[] unfiltered = draws(params(0.5f, -1, 1f, 0f), LOGITS, 7, 20_000);
        assertEquals(25 / 38.0, unfiltered[0] / 20_000.0, 0.02);
        assertEquals(9 / 38.0, unfiltered[1] / 20_000.0, 0.02);
        assertEquals(4 / 38.0, unfiltered[2] / 20_000.0, 0.02);
        int[] topTwo = draws(params(0.5f, 2, 1f, 0f), LOGITS, 7, 20_000);
        assertEquals(0, topTwo[2]);
        assertEquals(25 / 34.0, topTwo[0] / 20_000.0, 0.02);
        int[] all = draws(params(2f, 3, 1f, 0f), LOGITS, 7, 20_000);   // top_k = vocabulary: no cut
        double z = Math.sqrt(0.5) + Math.sqrt(0.3) + Math.sqrt(0.2);
        assertEquals(Math.sqrt(0.2) / z, all[2] / 20_000.0, 0.02);
    }

    @Test
    void topKTopPAndMinPCutTheTail() {
        assertArrayEquals(new int[] {1000, 0, 0}, draws(params(1f, 1, 1f, 0f), LOGITS, 1, 1000), "top_k 1");
        assertArrayEquals(new int[] {1000, 0, 0}, draws(params(1f, -1, 0.5f, 0f), LOGITS, 1, 1000), "top_p 0.5");
        int[] topP = draws(params(1f, -1, 0.75f, 0f), LOGITS, 1, 10_000);
        assertEquals(0, topP[2], "top_p 0.75 keeps 0.5 + 0.3");
        assertEquals(0.625, topP[0] / 10_000.0, 0.02, "renormalized over the kept tokens");
        int[] minP = draws(params(1f, -1, 1f, 0.5f), LOGITS, 1, 10_000);
        assertEquals(0, minP[2], "0.2 < 0.5 x 0.5");
        assertTrue(minP[1] > 0);
    }

    @Test
    void theSameSeedGivesTheSameTokensAndAnotherSeedOthers() {
        float[] flat = new float[64];
        SamplingParams p = params(1f, -1, 1f, 0f);
        SamplingChain a = new SamplingChain(p, 64, new int[0], 7);
        SamplingChain b = new SamplingChain(p, 64, new int[0], 7);
        SamplingChain c = new SamplingChain(p, 64, new int[0], 8);
        int[] sa = new int[32];
        int[] sb = new int[32];
        int[] sc = new int[32];
        for (int i = 0; i < 32; i++) {
            sa[i] = next(a, flat).id();
            sb[i] = next(b, flat).id();
            sc[i] = next(c, flat).id();
        }
        assertArrayEquals(sa, sb);
        assertNotEquals(Arrays.toString(sa), Arrays.toString(sc));
    }

    @Test
    void penaltiesFollowOpenAiAndVllm() {
        float[] logits = {2f, 1.9f, -1f};
        // Repetition penalty on a prompt token: 2 / 1.5 < 1.9.
        assertEquals(1, next(new SamplingChain(penalties(1.5f, 0f, 0f), 3, new int[] {0}, 1), logits).id());
        // Presence penalty applies once a token was output.
        SamplingChain s = new SamplingChain(penalties(1f, 0.2f, 0f), 3, new int[0], 1);
        assertEquals(0, next(s, logits).id());
        assertEquals(1, next(s, logits).id());
        // Frequency penalty grows with each occurrence.
        SamplingChain f = new SamplingChain(penalties(1f, 0f, 0.06f), 3, new int[0], 1);
        assertEquals(0, next(f, logits).id()); // 2.0
        assertEquals(0, next(f, logits).id()); // 1.94 > 1.9
        assertEquals(1, next(f, logits).id()); // 1.88 < 1.9
    }

    @Test
    void samplingWithoutAcceptLeavesThePenaltiesWhereTheyWere() {
        float[] logits = {2f, 1.9f, -1f};
        SamplingChain s = new SamplingChain(penalties(1f, 0.2f, 0f), 3, new int[0], 1);
        assertEquals(0, s.sample(logits, false).id());
        assertEquals(0, s.sample(logits, false).id(), "nothing accepted yet: no presence penalty");
        s.accept(0);
        assertEquals(1, s.sample(logits, false).id());
        assertEquals(1, s.accepted());
    }

    @Test
    void rollbackForgetsTheLastAcceptedTokens() {
        float[] logits = {2f, 1.9f, -1f};
        SamplingChain s = new SamplingChain(penalties(1f, 0.2f, 0f), 3, new int[0], 1);
        s.accept(0);
        s.accept(0);
        s.rollback(2);
        assertEquals(0, s.accepted());
        assertEquals(0, s.sample(logits, false).id(), "the presence penalty is gone with the tokens");
        assertThrows(IllegalArgumentException.class, () -> s.rollback(1));
    }

    @Test
    void theDistributionIsWhatTheDrawSamplesFromAndTheLogitsStayUnchanged() {
        var bias = new SamplingParams(1f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(1, -100f), null, 0);
        SamplingChain s = new SamplingChain(bias, 3, new int[0], 5);
        float[] logits = LOGITS.clone();
        Probabilities p = s.distribution(logits);
        assertArrayEquals(LOGITS, logits);
        assertEquals(0.5 / 0.7, p.probability(0), 1e-6);
        assertEquals(0, p.probability(1), 1e-30);
        for (int i = 0; i < 200; i++) {
            assertNotEquals(1, s.sample(logits, false).id());
        }
        assertArrayEquals(LOGITS, logits);
    }

    @Test
    void minTokensHoldsBackTheSuppressedIdsUntilEnoughWereAccepted() {
        SamplingChain s = new SamplingChain(SamplingParams.GREEDY, 3, new int[0], 1, 2, new int[] {0, 7});
        assertEquals(1, next(s, LOGITS).id());
        assertEquals(1, next(s, LOGITS).id());
        assertEquals(0, next(s, LOGITS).id(), "two accepted: EOS may end the sequence");
        s.rollback(2);
        assertEquals(1, s.sample(LOGITS, false).id(), "rolled back below min_tokens: suppressed again");
    }

    @Test
    void logprobsComeFromTheRawDistribution() {
        var p = new SamplingParams(0.5f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 2);
        SampledToken t = next(new SamplingChain(p, 3, new int[0], 3), LOGITS);
        assertArrayEquals(new int[] {0, 1}, t.topIds());
        assertEquals(Math.log(0.5), t.topLogprobs()[0], 1e-5);
        assertEquals(Math.log(0.3), t.topLogprobs()[1], 1e-5);
        assertEquals(Math.log(new double[] {0.5, 0.3, 0.2}[t.id()]), t.logprob(), 1e-5);
    }

    @Test
    void logprobsUnderMinTokensStillComeFromTheRawDistribution() {
        var p = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 1);
        SampledToken t = next(new SamplingChain(p, 3, new int[0], 1, 1, new int[] {0}), LOGITS);
        assertEquals(1, t.id());
        assertEquals(Math.log(0.3), t.logprob(), 1e-5);
        assertEquals(2, t.rank());
        assertArrayEquals(new int[] {0}, t.topIds(), "the suppressed id is still the most likely raw token");
    }

    @Test
    void withoutLogprobsOnlyTheTokenIsReported() {
        SampledToken t = new SamplingChain(SamplingParams.GREEDY, 3, new int[0], 1).sample(LOGITS, false);
        assertEquals(0, t.id());
        assertTrue(Float.isNaN(t.logprob()));
        assertEquals(0, t.rank());
        assertEquals(0, t.topIds().length);
    }

    @Test
    void scoringAPromptTokenReportsItLikeASampledOne() {
        SampledToken t = RawLogprobs.score(LOGITS, 2, 2);
        assertEquals(2, t.id());
        assertEquals(Math.log(0.2), t.logprob(), 1e-5);
        assertEquals(3, t.rank());
        assertArrayEquals(new int[] {0, 1}, t.topIds());
    }

    @Test
    void invalidParametersNameTheField() {
        assertEquals("temperature", assertThrows(RequestValidationException.class, () -> params(-1f, -1, 1f, 0f)).param());
        var v = assertThrows(RequestValidationException.class, () -> params(1f, -1, 0f, 0f));
        assertEquals("top_p", v.param());
        assertTrue(v.getMessage().startsWith("top_p"));
        v = assertThrows(RequestValidationException.class,
                () -> new SamplingParams(1f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(1, 101f), null, 0));
        assertEquals("logit_bias", v.param());
        // The engine checks logit_bias ids against the vocabulary first (RequestLimits); the chain only guards.
        var e = assertThrows(IllegalArgumentException.class, () -> new SamplingChain(
                new SamplingParams(1f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(9, 1f), null, 0), 3, new int[0], 1));
        assertTrue(e.getMessage().contains("token 9"));
        e = assertThrows(IllegalArgumentException.class,
                () -> new SamplingChain(SamplingParams.GREEDY, 3, new int[0], 1).sample(new float[4], false));
        assertTrue(e.getMessage().contains("vocabulary of 3"));
    }
}
