package io.nereid.engine.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
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
 * F32 and Q8_0, each over an F32 and an F16 KV cache: a step that mixes decode and prefill slices
 * of 8 sequences gives each sequence the logits it gets alone; prefilling in chunks of 1, 7 and 64
 * tokens equals one pass; block sizes 16 and 32 agree; an F16 cache stays close to an F32 one.
 */
public class GeneratedModelsTest {

    /** Relative logit difference allowed between an F16 and an F32 KV cache (see the test). */
    private static final float F16_KV_TOLERANCE = 5e-4f;

    @TempDir
    static Path dir;

    /**
     * Relative logit difference allowed between runs that should agree (chunking, block size,
     * batching). Steps of different shapes sum in different orders, which leaves last-bit
     * differences in K and V (hence 1e-4 for F32); an F16 cache turns such a difference into a
     * whole binary16 ulp (2^-11) wherever a value sits on a rounding boundary, so F16 gets the
     * F16-versus-F32 bound instead (stories260K measured 1.1e-4 for one such flip).
     */
    static float invarianceTolerance(KvPrecision kvp) {
        return kvp == KvPrecision.F32 ? 1e-4f : F16_KV_TOLERANCE;
    }

    /**
     * {@link #invarianceTolerance(KvPrecision)} for {@code type} weights: with an F16 cache, Q8_0
     * weights get {@link #f16KvTolerance}'s bound for Q8_0, for the same reason.
     */
    static float invarianceTolerance(GgmlType type, KvPrecision kvp) {
        return kvp == KvPrecision.F32 ? invarianceTolerance(kvp) : f16KvTolerance(type);
    }

    /**
     * Relative logit difference allowed between an F16 and an F32 KV cache. Q8_0 weights multiply
     * activations quantized to int8 ({@code MatmulInput}), and quantization is a step function: a
     * binary16 rounding of K or V that moves an activation across a rounding boundary moves it by
     * a whole step, 1/127 of its block's largest magnitude. Measured on these models: up to 3.4e-3
     * (F32 weights: 1.2e-4, see the test); the bound leaves 3x room.
     */
    static float f16KvTolerance(GgmlType type) {
        return type == GgmlType.Q8_0 ? 1e-2f : F16_KV_TOLERANCE;
    }

    static List<Arguments> models() {
        List<Arguments> out = new ArrayList<>();
        for (Architecture a : Architecture.values()) {
            for (GgmlType t : new GgmlType[] {GgmlType.F32, GgmlType.Q8_0}) {
                out.add(Arguments.of(a, t));
            }
        }
        return out;
    }

    /** {@link #models()} with each KV cache precision. */
    static List<Arguments> modelsAndKvPrecisions() {
        List<Arguments> out = new ArrayList<>();
        for (Arguments m : models()) {
            for (KvPrecision p : new KvPrecision[] {KvPrecision.F32, KvPrecision.F16}) {   // the CPU's
                out.add(Arguments.of(m.get()[0], m.get()[1], p));
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

    public static int[] prompt(long seed, int length) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[length];
        for (int i = 0; i < length; i++) {
            t[i] = 3 + r.nextInt(317);
        }
        return t;
    }

    /** Logits of the last token after prefilling {@code tokens} in chunks. */
    public static float[] prefill(CpuForward f, int[] tokens, int chunk, int blockSize, KvPrecision precision) {
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(64, blockSize, 0, 1));
        KvStorage kv = new KvStorage(f.config(), 64, blockSize, precision);
        BlockTable table = cache.newTable(0);
        float[] logits = null;
        for (int start = 0; start < tokens.length; start += chunk) {
            int[] part = Arrays.copyOfRange(tokens, start, Math.min(tokens.length, start + chunk));
            table.append(part);
            logits = f.forward(List.of(new Slice(part, start, table.blockIds(), true)), kv)[0];
        }
        return logits;
    }

    public static void assertClose(float[] expected, float[] actual, float rel, String what) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            float tol = rel * Math.max(1f, Math.abs(expected[i]));
            assertTrue(Math.abs(expected[i] - actual[i]) <= tol, what + ": logit " + i + " " + expected[i] + " vs " + actual[i]);
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}")
    @MethodSource("modelsAndKvPrecisions")
    void chunkedPrefillAndBlockSizesGiveTheSameLogits(Architecture a, GgmlType type, KvPrecision kvp)
            throws IOException {
        try (CpuModel m = open(a, type)) {
            CpuForward f = m.forward(Kernels.provider(), RangeRunner.SERIAL, 256);
            int[] tokens = prompt(1, 150);
            String what = a + " " + type + " KV " + kvp;
            float[] whole = prefill(f, tokens, tokens.length, 16, kvp);
            for (int chunk : new int[] {1, 7, 64}) {
                assertClose(whole, prefill(f, tokens, chunk, 16, kvp), invarianceTolerance(type, kvp),
                        what + " chunk " + chunk);
            }
            assertClose(whole, prefill(f, tokens, tokens.length, 32, kvp), invarianceTolerance(type, kvp),
                    what + " block size 32");
        }
    }

    /**
     * An F16 cache rounds each K and V element by up to 2^-11 relative. Measured on these models
     * (prompts of 1, 40 and 150 tokens, F32 weights, every architecture) the logits move by at most
     * 1.2e-4 relative (to max(1, |logit|)), most for a single token, whose attention output is its
     * own rounded V; the bound leaves 4x room. Q8_0 weights: see {@link #f16KvTolerance}.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("models")
    void f16KvLogitsStayCloseToF32KvLogits(Architecture a, GgmlType type) throws IOException {
        try (CpuModel m = open(a, type)) {
            CpuForward f = m.forward(Kernels.provider(), RangeRunner.SERIAL, 256);
            for (int length : new int[] {1, 40, 150}) {
                int[] tokens = prompt(length, length);
                float[] f32 = prefill(f, tokens, tokens.length, 16, KvPrecision.F32);
                float[] f16 = prefill(f, tokens, 7, 16, KvPrecision.F16);
                assertClose(f32, f16, f16KvTolerance(type), a + " " + type + " length " + length);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} KV {2}")
    @MethodSource("modelsAndKvPrecisions")
    void aStepMixingEightSequencesGivesEachItsOwnLogits(Architecture a, GgmlType type, KvPrecision kvp)
            throws IOException {
        try (CpuModel m = open(a, type)) {
            CpuForward f = m.forward(Kernels.provider(), RangeRunner.SERIAL, 256);
            int[][] prompts = new int[8][];
            float[][] alone = new float[8][];
            for (int i = 0; i < 8; i++) {
                prompts[i] = prompt(100 + i, 5 + 9 * i);
                alone[i] = prefill(f, prompts[i], prompts[i].length, 16, kvp);
            }
            // Even sequences: everything but the last token is already cached (a decode slice);
            // odd ones: half is cached, the rest is a prefill chunk in the shared step.
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(128, 16, 0, 1));
            KvStorage kv = new KvStorage(f.config(), 128, 16, kvp);
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
                assertClose(alone[i], together[i], invarianceTolerance(type, kvp),
                        a + " " + type + " KV " + kvp + " sequence " + i);
            }
        }
    }

    /**
     * A speculative verification (one slice of n tokens and n logit rows, the default order) gives each
     * token the bits a decode of it alone gives, for up to 15 tokens (14 drafts), on a model whose query
     * heads share KV heads (four a head, of 64 dimensions, as Llama 3 8B's): greedy speculation keeps
     * exactly the tokens plain decoding picks. Q8_0 weights (their interleaved kernels give a token its lone bits up
     * to 15 tokens) and F16 (one chain per row and token for any count).
     */
    @ParameterizedTest(name = "{0} {1} KV {2}")
    @MethodSource("verifications")
    void aVerificationGivesEachTokenItsDecodeBits(Architecture a, GgmlType type, KvPrecision kvp) throws IOException {
        Path p = dir.resolve("gqa-" + a + "-" + type + ".gguf");
        if (!p.toFile().exists()) { // heads of 64 (several vectors: sums across lanes), four query heads a KV head
            RandomModelWriter.write(new RandomModelWriter.Spec(a, 256, 2, 4, 1, 384, 320, 256, type, a == Architecture.QWEN3,
                    9), p);
        }
        try (CpuModel m = CpuModel.open(p)) {
            CpuForward f = m.forward(Kernels.provider(), RangeRunner.SERIAL, 256, false);
            int[] prompt = prompt(7, 20);
            int[] drafts = prompt(8, 15);
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(64, 16, 0, 1));
            KvStorage kv = new KvStorage(f.config(), 64, 16, kvp);
            BlockTable t = cache.newTable(0);
            t.append(prompt);
            f.forward(List.of(new Slice(prompt, 0, t.blockIds(), false)), kv);
            float[][] alone = new float[drafts.length][];
            for (int i = 0; i < drafts.length; i++) {
                int[] one = {drafts[i]};
                t.append(one);
                alone[i] = f.forward(List.of(new Slice(one, prompt.length + i, t.blockIds(), true)), kv)[0];
            }
            for (int n = 2; n <= drafts.length; n++) {
                t.truncate(prompt.length);
                int[] run = Arrays.copyOf(drafts, n);
                t.append(run);
                float[] rows = f.forward(List.of(new Slice(run, prompt.length, t.blockIds(), n)), kv)[0];
                int vocab = alone[0].length;
                for (int j = 0; j < n; j++) {
                    for (int v = 0; v < vocab; v++) {
                        if (Float.floatToRawIntBits(alone[j][v]) != Float.floatToRawIntBits(rows[j * vocab + v])) {
                            throw new AssertionError(a + " " + type + " KV " + kvp + ": token " + j + " of a step of " + n
                                    + ", logit " + v + ": " + rows[j * vocab + v] + " against " + alone[j][v] + " alone");
                        }
                    }
                }
            }
        }
    }

    static List<Arguments> verifications() {
        List<Arguments> out = new ArrayList<>();
        for (Architecture a : new Architecture[] {Architecture.LLAMA, Architecture.QWEN2}) {
            for (GgmlType t : new GgmlType[] {GgmlType.Q8_0, GgmlType.F16}) {
                for (KvPrecision p : new KvPrecision[] {KvPrecision.F32, KvPrecision.F16}) {   // the CPU's
                    out.add(Arguments.of(a, t, p));
                }
            }
        }
        return out;
    }
}
