package io.nereid.engine.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.core.EngineTestSupport.Recorder;
import io.nereid.engine.cpu.CpuForward;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.KvStorage;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Prompt logprobs of the real stories260K model against a hand computation: the prompt fed one
 * token at a time through the single-sequence forward, each position's log-softmax taken in double.
 */
@Timeout(120)
class PromptLogprobsTest {

    private static final int CONTEXT = 256;
    private static final int TOP = 5;
    private static final float TOLERANCE = 1e-4f;
    private static CpuModel model;
    private static int[] prompt;
    private static double[][] reference;   // (prompt length - 1, vocab): log-probabilities of position i + 1

    @BeforeAll
    static void computeByHand() {
        model = CpuModel.open(Fixtures.path("models/stories260K.gguf"));
        prompt = model.tokenizer().encode("Once upon a time, there was a little girl named Lily. She loved to play"
                + " outside in the park with her friends.", true, true);
        CpuForward f = model.forward(Kernels.provider(), RangeRunner.SERIAL, CONTEXT);
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(32, 16, 0, 1));
        KvStorage kv = new KvStorage(model.config(), 32, 16);
        BlockTable t = cache.newTable(0);
        reference = new double[prompt.length - 1][];
        for (int i = 0; i < prompt.length - 1; i++) {
            t.append(new int[] {prompt[i]});
            float[] logits = f.forward(List.of(new Slice(new int[] {prompt[i]}, i, t.blockIds(), true)), kv)[0];
            double max = Double.NEGATIVE_INFINITY;
            for (float v : logits) {
                max = Math.max(max, v);
            }
            double sum = 0;
            for (float v : logits) {
                sum += Math.exp(v - max);
            }
            double logSum = max + Math.log(sum);
            reference[i] = new double[logits.length];
            for (int v = 0; v < logits.length; v++) {
                reference[i][v] = logits[v] - logSum;
            }
        }
    }

    @AfterAll
    static void close() {
        model.close();
    }

    private static InflightEngine engine(int budget, boolean prefixCaching) {
        EngineConfig config = new EngineConfig(8, budget, 16, CONTEXT, 64, 16, 0.01, prefixCaching, true);
        return new InflightEngine(config, model.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F32,
                config.numBlocks(), config.blockSize(), CONTEXT), model.tokenizer());
    }

    private static GenerationRequest request(String id, int maxTokens, int n, int promptLogprobs) {
        return GenerationRequest.builder(id, prompt).maxTokens(maxTokens).ignoreEos(true).n(n)
                .promptLogprobs(promptLogprobs).build();
    }

    /** Each entry scores prompt token i + 1 as the hand computation does, its top alternatives and rank included. */
    private static void assertMatchesReference(List<TokenLogprob> got) {
        assertEquals(prompt.length - 1, got.size());
        for (int i = 0; i < got.size(); i++) {
            TokenLogprob lp = got.get(i);
            double[] ref = reference[i];
            assertEquals(prompt[i + 1], lp.tokenId());
            assertEquals(ref[lp.tokenId()], lp.logprob(), TOLERANCE, "position " + (i + 1));
            int rank = 1;
            for (double v : ref) {
                rank += v > ref[lp.tokenId()] ? 1 : 0;
            }
            assertEquals(rank, lp.rank(), "position " + (i + 1));
            Integer[] order = new Integer[ref.length];
            Arrays.setAll(order, v -> v);
            Arrays.sort(order, (a, b) -> Double.compare(ref[b], ref[a]));
            assertEquals(TOP, lp.topIds().length);
            for (int k = 0; k < TOP; k++) {
                assertEquals(ref[order[k]], lp.topLogprobs()[k], TOLERANCE, "position " + (i + 1) + " top " + k);
                assertEquals(ref[lp.topIds()[k]], lp.topLogprobs()[k], TOLERANCE);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 7, 16, 64})
    void promptLogprobsEqualTheHandComputationForEveryPrefillChunkSize(int budget) {
        assertTrue(prompt.length > 20, "the prompt spans several chunks of the smaller budgets");
        try (InflightEngine e = engine(budget, false)) {
            Recorder r = new Recorder(1);
            e.submit(request("chunked-" + budget, 3, 1, TOP), r);
            r.await();
            assertEquals(1, r.promptLogprobs.size());
            assertMatchesReference(r.promptLogprobs.getFirst());
            // Delivered in the step that completes the prompt, before that step's first token.
            List<String> log = r.log();
            assertEquals(List.of("prompt logprobs", "delta 0", "step end"), log.subList(0, 3));
        }
    }

    @Test
    void aRequestForPromptLogprobsTakesNothingFromThePrefixCacheAndLeavesItsBlocksForOthers() {
        try (InflightEngine e = engine(8, true)) {
            Recorder warm = new Recorder(1);
            e.submit(request("warm", 1, 1, -1), warm);
            warm.await();
            assertEquals(0, warm.promptLogprobs.size(), "not asked for, not sent");
            Recorder scored = new Recorder(1);
            e.submit(request("scored", 1, 1, TOP), scored);
            scored.await();
            assertEquals(0, scored.usages[0].cachedTokens(), "the whole prompt was computed");
            assertMatchesReference(scored.promptLogprobs.getFirst());
            Recorder after = new Recorder(1);
            e.submit(request("after", 1, 1, -1), after);
            after.await();
            assertTrue(after.usages[0].cachedTokens() > 0, "the cache still serves requests without prompt logprobs");
            assertEquals(warm.tokens(0), after.tokens(0));
        }
    }

    @Test
    void maxTokensZeroScoresThePromptOnceForEveryChoiceAndGeneratesNothing() {
        try (InflightEngine e = engine(16, true)) {
            Recorder r = new Recorder(2);
            e.submit(request("score", 0, 2, 0), r);
            r.await();
            assertEquals(1, r.promptLogprobs.size(), "once per request, not per choice");
            List<TokenLogprob> lps = r.promptLogprobs.getFirst();
            assertEquals(prompt.length - 1, lps.size());
            for (int i = 0; i < lps.size(); i++) {
                assertEquals(reference[i][prompt[i + 1]], lps.get(i).logprob(), TOLERANCE);
                assertArrayEquals(new int[0], lps.get(i).topIds());
            }
            for (int c = 0; c < 2; c++) {
                assertEquals(FinishReason.LENGTH, r.reasons[c]);
                assertEquals(0, r.tokens(c).size());
                assertEquals(0, r.usages[c].completionTokens());
                assertEquals(prompt.length, r.usages[c].promptTokens());
            }
        }
    }

    @Test
    void moreThanTwentyAlternativesAreRefused() {
        try (InflightEngine e = engine(16, true)) {
            assertThrows(RequestValidationException.class, () -> e.submit(request("many", 1, 1, 21), new Recorder(1)));
            assertEquals("prompt_logprobs", assertThrows(RequestValidationException.class,
                    () -> request("negative", 1, 1, -2)).param());
        }
    }
}
