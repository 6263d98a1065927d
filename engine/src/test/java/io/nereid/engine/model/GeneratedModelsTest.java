package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.kernel.Kernels;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Invariances of the paged, batched forward pass on generated models of every architecture, in
 * F32 and Q8_0: a step that mixes decode and prefill slices of 8 sequences gives each sequence
 * the logits it gets alone; prefilling in chunks of 1, 7 and 64 tokens equals one pass; block
 * sizes 16 and 32 agree.
 */
class GeneratedModelsTest {

    @TempDir
    static Path dir;

    static List<Arguments> models() {
        List<Arguments> out = new ArrayList<>();
        for (Architecture a : Architecture.values()) {
            for (GgmlType t : new GgmlType[] {GgmlType.F32, GgmlType.Q8_0}) {
                out.add(Arguments.of(a, t));
            }
        }
        return out;
    }

    private static CpuModel open(Architecture a, GgmlType type) throws IOException {
        Path p = dir.resolve(a + "-" + type + ".gguf");
        if (!p.toFile().exists()) {
            RandomModelWriter.write(new RandomModelWriter.Spec(a, 64, 2, 4, 2, 96, 320, 256, type, a == Architecture.QWEN3, 7), p);
        }
        return CpuModel.open(p);
    }

    private static int[] prompt(long seed, int length) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[length];
        for (int i = 0; i < length; i++) {
            t[i] = 3 + r.nextInt(317);
        }
        return t;
    }

    /** Logits of the last token after prefilling {@code tokens} in chunks. */
    private static float[] prefill(CpuForward f, int[] tokens, int chunk, int blockSize) {
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(64, blockSize, 0, 1));
        KvStorage kv = new KvStorage(f.config(), 64, blockSize);
        BlockTable table = cache.newTable(0);
        float[] logits = null;
        for (int start = 0; start < tokens.length; start += chunk) {
            int[] part = Arrays.copyOfRange(tokens, start, Math.min(tokens.length, start + chunk));
            table.append(part);
            logits = f.forward(List.of(new Slice(part, start, table.blockIds(), true)), kv)[0];
        }
        return logits;
    }

    private static void assertClose(float[] expected, float[] actual, float rel, String what) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            float tol = rel * Math.max(1f, Math.abs(expected[i]));
            assertTrue(Math.abs(expected[i] - actual[i]) <= tol, what + ": logit " + i + " " + expected[i] + " vs " + actual[i]);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("models")
    void chunkedPrefillAndBlockSizesGiveTheSameLogits(Architecture a, GgmlType type) throws IOException {
        try (CpuModel m = open(a, type)) {
            CpuForward f = m.forward(Kernels.provider(), RangeRunner.SERIAL, 256);
            int[] tokens = prompt(1, 150);
            float[] whole = prefill(f, tokens, tokens.length, 16);
            for (int chunk : new int[] {1, 7, 64}) {
                assertClose(whole, prefill(f, tokens, chunk, 16), 1e-4f, a + " " + type + " chunk " + chunk);
            }
            assertClose(whole, prefill(f, tokens, tokens.length, 32), 1e-4f, a + " " + type + " block size 32");
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("models")
    void aStepMixingEightSequencesGivesEachItsOwnLogits(Architecture a, GgmlType type) throws IOException {
        try (CpuModel m = open(a, type)) {
            CpuForward f = m.forward(Kernels.provider(), RangeRunner.SERIAL, 256);
            int[][] prompts = new int[8][];
            float[][] alone = new float[8][];
            for (int i = 0; i < 8; i++) {
                prompts[i] = prompt(100 + i, 5 + 9 * i);
                alone[i] = prefill(f, prompts[i], prompts[i].length, 16);
            }
            // Even sequences: everything but the last token is already cached (a decode slice);
            // odd ones: half is cached, the rest is a prefill chunk in the shared step.
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(128, 16, 0, 1));
            KvStorage kv = new KvStorage(f.config(), 128, 16);
            List<Slice> step = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int done = i % 2 == 0 ? prompts[i].length - 1 : prompts[i].length / 2;
                BlockTable t = cache.newTable(i);
                int[] head = Arrays.copyOf(prompts[i], done);
                t.append(head);
                if (done > 0) {
                    f.forward(List.of(new Slice(head, 0, t.blockIds(), false)), kv);
                }
                int[] rest = Arrays.copyOfRange(prompts[i], done, prompts[i].length);
                t.append(rest);
                step.add(new Slice(rest, done, t.blockIds(), true));
            }
            float[][] together = f.forward(step, kv);
            for (int i = 0; i < 8; i++) {
                assertClose(alone[i], together[i], 1e-4f, a + " " + type + " sequence " + i);
            }
        }
    }
}
