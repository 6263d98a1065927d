package io.nereid.engine.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.core.Generator;
import io.nereid.engine.cpu.kernel.ScalarKernels;
import io.nereid.engine.json.Json;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.tokenizer.TokenizerFixtureTest;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The real TinyStories model {@code stories260K.gguf} against llama.cpp's reference run: greedy
 * ids, top-2 log-probabilities, and the invariances of the paged forward pass (chunked prefill,
 * batching of several sequences in one step, block size).
 */
class StoriesModelTest {

    private static CpuModel model;
    private static Map<String, Object> reference;

    @BeforeAll
    static void open() {
        model = CpuModel.open(Fixtures.path("models/stories260K.gguf"));
        reference = Json.parseObject(Fixtures.read("models/stories260K.json"));
    }

    @AfterAll
    static void close() {
        model.close();
    }

    private static CpuForward forward() {
        return model.forward(ScalarKernels.INSTANCE, RangeRunner.SERIAL, 512);
    }

    private static List<SampledToken> greedy(int n, int prefillChunk, int blockSize) {
        return greedy(n, prefillChunk, blockSize, KvPrecision.F32);
    }

    private static List<SampledToken> greedy(int n, int prefillChunk, int blockSize, KvPrecision kvp) {
        int[] prompt = TokenizerFixtureTest.ints(reference.get("prompt_ids"));
        List<SampledToken> out = new ArrayList<>();
        Generator g = new Generator(model.backend(ScalarKernels.INSTANCE, RangeRunner.SERIAL, kvp), 512, blockSize, prefillChunk);
        SamplingParams params = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 2);
        g.generate(prompt, n, new SamplingChain(params, model.config().vocabSize(), prompt, 1), new int[0], out::add);
        return out;
    }

    @Test
    void configComesFromTheGgufMetadata() {
        ModelConfig c = model.config();
        assertEquals(Architecture.LLAMA, c.architecture());
        assertEquals(64, c.dim());
        assertEquals(5, c.layers());
        assertEquals(8, c.heads());
        assertEquals(4, c.kvHeads());
        assertEquals(8, c.headDim());
        assertEquals(172, c.ffnDim());
        assertEquals(512, c.vocabSize());
    }

    @Test
    void greedyContinuationMatchesLlamaCppExactly() {
        int[] expected = TokenizerFixtureTest.ints(reference.get("greedy_ids"));
        List<SampledToken> got = greedy(expected.length, 512, 16);
        assertArrayEquals(expected, got.stream().mapToInt(SampledToken::id).toArray());
        assertEquals(reference.get("greedy_text"), model.tokenizer().decode(got.stream().mapToInt(SampledToken::id).toArray()));
    }

    /**
     * The reference log-probs come from llama-server, whose CPU attention runs in F16 (F16 K/V
     * cache, Q and the softmax weights converted to F16 for the dot products); this forward pass
     * is F32 throughout. That difference moves the log-probs by up to ~1.5e-3 (top 1) and ~5e-3
     * (runner-up); emulating the F16 roundings in an experiment brought top 1 within 5e-4. The
     * ids must match exactly; the values within those F16-noise bounds.
     */
    @Test
    void topTwoLogprobsMatchWithinF16Noise() {
        List<?> steps = (List<?>) reference.get("top2_logprobs");
        List<SampledToken> got = greedy(steps.size(), 512, 16);
        for (int i = 0; i < steps.size(); i++) {
            Map<?, ?> s = (Map<?, ?>) steps.get(i);
            SampledToken t = got.get(i);
            assertEquals(((Long) s.get("id")).intValue(), t.topIds()[0], "step " + i);
            assertEquals(((Long) s.get("second_id")).intValue(), t.topIds()[1], "step " + i);
            assertEquals((Double) s.get("logprob"), t.topLogprobs()[0], 2e-3, "step " + i);
            assertEquals((Double) s.get("second_logprob"), t.topLogprobs()[1], 6e-3, "step " + i);
        }
    }

    @Test
    void greedyContinuationMatchesLlamaCppWithAnF16Cache() {
        int[] expected = TokenizerFixtureTest.ints(reference.get("greedy_ids"));
        List<SampledToken> got = greedy(expected.length, 512, 16, KvPrecision.F16);
        assertArrayEquals(expected, got.stream().mapToInt(SampledToken::id).toArray());
    }

    /**
     * llama.cpp's reference run used an F16 cache, so an F16 cache here removes one of the
     * roundings that separate the two; the others (Q and the softmax weights in F16) remain and
     * dominate. Measured max errors, top 1 / runner-up: F32 cache 1.40e-3 / 4.76e-3, F16 cache
     * 1.67e-3 / 4.36e-3, so no closer overall; the bounds are those of the F32 test.
     */
    @Test
    void topTwoLogprobsWithAnF16CacheMatchWithinF16Noise() {
        List<?> steps = (List<?>) reference.get("top2_logprobs");
        double[] f32 = logprobErrors(greedy(steps.size(), 512, 16, KvPrecision.F32), steps);
        double[] f16 = logprobErrors(greedy(steps.size(), 512, 16, KvPrecision.F16), steps);
        assertTrue(f32[0] <= 2e-3 && f32[1] <= 6e-3, "F32 cache " + java.util.Arrays.toString(f32));
        assertTrue(f16[0] <= 2e-3 && f16[1] <= 6e-3, "F16 cache " + java.util.Arrays.toString(f16));
    }

    /** Max |error| of the top-1 and runner-up logprobs over the steps; the ids must match. */
    private static double[] logprobErrors(List<SampledToken> got, List<?> steps) {
        double[] max = new double[2];
        for (int i = 0; i < steps.size(); i++) {
            Map<?, ?> s = (Map<?, ?>) steps.get(i);
            SampledToken t = got.get(i);
            assertEquals(((Long) s.get("id")).intValue(), t.topIds()[0], "step " + i);
            assertEquals(((Long) s.get("second_id")).intValue(), t.topIds()[1], "step " + i);
            max[0] = Math.max(max[0], Math.abs((Double) s.get("logprob") - t.topLogprobs()[0]));
            max[1] = Math.max(max[1], Math.abs((Double) s.get("second_logprob") - t.topLogprobs()[1]));
        }
        return max;
    }

    @Test
    void longGreedyRunMatchesTheReference() {
        Map<?, ?> long251 = (Map<?, ?>) reference.get("long_greedy");
        int[] expected = TokenizerFixtureTest.ints(long251.get("ids"));
        int[] got = greedy(expected.length, 512, 16).stream().mapToInt(SampledToken::id).toArray();
        int mismatch = java.util.Arrays.mismatch(expected, got);
        assertEquals(-1, mismatch, "first difference at token " + mismatch);
    }

    @ParameterizedTest
    @EnumSource(value = KvPrecision.class, names = {"F32", "F16"})   // the CPU backend's
    void chunkedPrefillAndBlockSizeDoNotChangeTheResult(KvPrecision kvp) {
        int[] base = greedy(12, 512, 16, kvp).stream().mapToInt(SampledToken::id).toArray();
        for (int chunk : new int[] {1, 2, 3}) {
            for (int bs : new int[] {8, 16, 32}) {
                assertArrayEquals(base, greedy(12, chunk, bs, kvp).stream().mapToInt(SampledToken::id).toArray(),
                        "KV " + kvp + ", chunk " + chunk + ", block size " + bs);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = KvPrecision.class, names = {"F32", "F16"})   // the CPU backend's
    void aStepMixingSequencesGivesEachTheLogitsItGetsAlone(KvPrecision kvp) {
        CpuForward f = forward();
        int[][] prompts = {{1, 403, 407, 261, 378}, {1, 300, 301}, {1, 403, 407, 261, 378, 432, 383}, {1, 50}};
        float[][] alone = new float[prompts.length][];
        for (int i = 0; i < prompts.length; i++) {
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(64, 16, 0, 1));
            KvStorage kv = new KvStorage(model.config(), 64, 16, kvp);
            BlockTable t = cache.newTable(0);
            t.append(prompts[i]);
            alone[i] = f.forward(List.of(new Slice(prompts[i], 0, t.blockIds(), true)), kv)[0];
        }
        // Together: sequence 0 and 2 share nothing; 1 and 3 are prefilled in part first, then all
        // four go through one step (two decode-like slices, two prefill chunks).
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(64, 16, 0, 1));
        KvStorage kv = new KvStorage(model.config(), 64, 16, kvp);
        List<Slice> step = new ArrayList<>();
        for (int i = 0; i < prompts.length; i++) {
            BlockTable t = cache.newTable(i);
            int done = prompts[i].length - (i % 2 == 0 ? prompts[i].length : 1);
            if (done > 0) {
                int[] head = java.util.Arrays.copyOf(prompts[i], done);
                t.append(head);
                f.forward(List.of(new Slice(head, 0, t.blockIds(), false)), kv);
            }
            int[] rest = java.util.Arrays.copyOfRange(prompts[i], done, prompts[i].length);
            t.append(rest);
            step.add(new Slice(rest, done, t.blockIds(), true));
        }
        float[][] together = f.forward(step, kv);
        float rel = GeneratedModelsTest.invarianceTolerance(kvp);
        for (int i = 0; i < prompts.length; i++) {
            for (int v = 0; v < alone[i].length; v++) {
                float tol = rel * Math.max(1f, Math.abs(alone[i][v]));
                assertTrue(Math.abs(alone[i][v] - together[i][v]) <= tol,
                        "KV " + kvp + " sequence " + i + " logit " + v + ": " + alone[i][v] + " vs " + together[i][v]);
            }
        }
    }
}
