package io.nereid.engine.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SamplerTest {

    private static final float[] LOGITS = {(float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.2)};

    private static SamplingParams params(float temperature, int topK, float topP, float minP) {
        return new SamplingParams(temperature, topK, topP, minP, 1f, 0f, 0f, Map.of(), null, 0);
    }

    private static int[] draws(SamplingParams p, float[] logits, long seed, int n) {
        Sampler s = new Sampler(p, logits.length, new int[0], seed);
        int[] counts = new int[logits.length];
        for (int i = 0; i < n; i++) {
            counts[s.sample(logits).id()]++;
        }
        return counts;
    }

    @Test
    void greedyTakesTheArgmaxAndLogitBiasCanOverrideIt() {
        assertEquals(0, new Sampler(SamplingParams.GREEDY, 3, new int[0], 1).sample(LOGITS).id());
        var biased = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(2, 5f), null, 0);
        assertEquals(2, new Sampler(biased, 3, new int[0], 1).sample(LOGITS).id());
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
        Sampler a = new Sampler(p, 64, new int[0], 7);
        Sampler b = new Sampler(p, 64, new int[0], 7);
        Sampler c = new Sampler(p, 64, new int[0], 8);
        int[] sa = new int[32];
        int[] sb = new int[32];
        int[] sc = new int[32];
        for (int i = 0; i < 32; i++) {
            sa[i] = a.sample(flat).id();
            sb[i] = b.sample(flat).id();
            sc[i] = c.sample(flat).id();
        }
        assertArrayEquals(sa, sb);
        assertNotEquals(java.util.Arrays.toString(sa), java.util.Arrays.toString(sc));
    }

    @Test
    void penaltiesFollowOpenAiAndVllm() {
        float[] logits = {2f, 1.9f, -1f};
        // Repetition penalty on a prompt token: 2 / 1.5 < 1.9.
        var rep = new SamplingParams(0f, -1, 1f, 0f, 1.5f, 0f, 0f, Map.of(), null, 0);
        assertEquals(1, new Sampler(rep, 3, new int[] {0}, 1).sample(logits).id());
        // Presence penalty applies once a token was output.
        var presence = new SamplingParams(0f, -1, 1f, 0f, 1f, 0.2f, 0f, Map.of(), null, 0);
        Sampler s = new Sampler(presence, 3, new int[0], 1);
        assertEquals(0, s.sample(logits).id());
        assertEquals(1, s.sample(logits).id());
        // Frequency penalty grows with each occurrence.
        var frequency = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0.06f, Map.of(), null, 0);
        Sampler f = new Sampler(frequency, 3, new int[0], 1);
        assertEquals(0, f.sample(logits).id()); // 2.0
        assertEquals(0, f.sample(logits).id()); // 1.94 > 1.9
        assertEquals(1, f.sample(logits).id()); // 1.88 < 1.9
    }

    @Test
    void logprobsComeFromTheRawDistribution() {
        var p = new SamplingParams(0.5f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 2);
        SampledToken t = new Sampler(p, 3, new int[0], 3).sample(LOGITS);
        assertArrayEquals(new int[] {0, 1}, t.topIds());
        assertEquals(Math.log(0.5), t.topLogprobs()[0], 1e-5);
        assertEquals(Math.log(0.3), t.topLogprobs()[1], 1e-5);
        assertEquals(Math.log(new double[] {0.5, 0.3, 0.2}[t.id()]), t.logprob(), 1e-5);
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
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Sampler(new SamplingParams(1f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(9, 1f), null, 0), 3, new int[0], 1));
        assertTrue(e.getMessage().contains("token 9"));
    }
}
