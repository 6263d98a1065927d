package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.sampling.Distribution;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.GgufToHf;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.kvcache.BlockCopy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CUDA backend against the CPU backend on the same weights and the same steps (runs where a CUDA
 * driver and device are present, and on the CUDA emulator in the native module's cuda-emulator
 * execution; skipped elsewhere): for every weight format, llama / qwen2 / qwen3, stories260K and a
 * Hugging Face safetensors directory, a prefill (cuBLAS when there is cuBLAS), then greedy decoding
 * batched with a second sequence that starts later, a copy-on-write fork of a block, and a third
 * sequence of 200 tokens (several 32-position chunks per attention warp). Both backends get
 * the CPU's greedy tokens, so their paths never part; each logit row must be within the format's
 * tolerance of the CPU's (relative to the row's largest magnitude), and the greedy id must be the CPU's
 * wherever the CPU's best two logits are further apart than that tolerance.
 *
 * <p>Tolerances: F32 weights 2e-3; F16 / BF16 1e-2 (activations rounded to the weight type for cuBLAS
 * as on the CPU, but summed in another order); quantized formats 3e-2 (the CPU multiplies with Q8
 * activations as llama.cpp does, the GPU with float ones: on the CUDA emulator, which runs the kernels'
 * float operations in the GPU's order, the 200-token sequence reaches 1.8e-2 on Q4_K / Q5_K / Q6_K).
 */
@Tag("gpu")
class CudaConsistencyTest {

    private static final int BLOCK = 16;
    private static final int BLOCKS = 64;
    private static final int MAX_POSITIONS = 256;

    @TempDir
    static Path dir;

    /** The backend checked against the CPU's: {@code cuda}, or {@code cpu} to check this harness itself without a GPU. */
    private static final String CHECKED = System.getProperty("nereid.test.checkedBackend", "cuda");

    @BeforeAll
    static void needsADevice() {
        if (!CHECKED.equals("cuda")) {
            return;
        }
        CudaEmulator.prepare();   // the cuda-emulator execution: the emulator stands in for the driver
        String reason = CudaDriver.unavailableReason();
        Assumptions.assumeTrue(reason == null, "no CUDA device here (" + reason + "): the GPU consistency tests are skipped");
    }

    /** huggingFace: the model as a Hugging Face directory; cudaKv: the CUDA backend's KV cache type (the CPU's is F16). */
    record Case(String name, Architecture architecture, GgmlType type, boolean tied, double tolerance, boolean huggingFace,
            KvPrecision cudaKv) {
        Case(String name, Architecture architecture, GgmlType type, boolean tied, double tolerance) {
            this(name, architecture, type, tied, tolerance, false, KvPrecision.F16);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> models() {
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("llama F32", Architecture.LLAMA, GgmlType.F32, false, 2e-3));
        cases.add(new Case("llama F16", Architecture.LLAMA, GgmlType.F16, false, 1e-2));
        cases.add(new Case("llama BF16 tied", Architecture.LLAMA, GgmlType.BF16, true, 1e-2));
        cases.add(new Case("qwen2 F32 (QKV bias)", Architecture.QWEN2, GgmlType.F32, false, 2e-3));
        cases.add(new Case("qwen3 F16 (Q/K norm)", Architecture.QWEN3, GgmlType.F16, false, 1e-2));
        for (GgmlType t : List.of(GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K)) {
            cases.add(new Case("llama " + t, Architecture.LLAMA, t, false, 3e-2));
        }
        cases.add(new Case("stories260K", Architecture.LLAMA, GgmlType.F32, false, 2e-3));
        // as check.sh's benchmark model comes: a Hugging Face directory (Q / K rows in HF order), BF16 safetensors
        cases.add(new Case("llama BF16 safetensors", Architecture.LLAMA, GgmlType.BF16, false, 1e-2, true, KvPrecision.F16));
        // a bfloat16 KV cache on the GPU against the CPU's F16 one: 8 significant bits against 11
        cases.add(new Case("qwen2 F32, BF16 KV cache", Architecture.QWEN2, GgmlType.F32, false, 2e-2, false, KvPrecision.BF16));
        return cases.stream().map(Arguments::of);
    }

    static Path fixtures() {
        String p = System.getProperty("nereid.fixtures");
        return p != null ? Path.of(p) : Path.of("").toAbsolutePath().getParent().resolveSibling("shared").resolve("fixtures");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void theCudaBackendComputesWhatTheCpuBackendDoes(Case c) throws Exception {
        Path model;
        if (c.name().equals("stories260K")) {
            model = fixtures().resolve("models/stories260K.gguf");
            assertTrue(Files.exists(model), model + " is missing");
        } else {
            model = dir.resolve(c.name().replaceAll("[^A-Za-z0-9]", "_") + ".gguf");
            RandomModelWriter.write(new RandomModelWriter.Spec(c.architecture(), 256, 2, 4, 2, 512, 512, MAX_POSITIONS,
                    c.type(), c.tied(), 11), model);
        }
        try (ModelSource source = open(model, c);
                Backend cpu = BackendProvider.named("cpu").open(new BackendConfig(source, KvPrecision.F16, 2));
                Backend cuda = BackendProvider.named(CHECKED).open(new BackendConfig(source, c.cudaKv(), 2))) {
            for (Backend b : List.of(cpu, cuda)) {
                b.allocate(BLOCKS, BLOCK, MAX_POSITIONS);
            }
            if (cuda instanceof CudaBackend g) {
                g.limitStaging(2L * 4 * cuda.vocabSize());   // logits come down two rows at a time: steps of 3 take two
                g.limitAttentionPartition(128);   // past 128 positions attention is split in parts (and merged)
            }
            int vocab = cpu.vocabSize();
            assertEquals(vocab, cuda.vocabSize());
            SplittableRandom random = new SplittableRandom(5);
            int[] prompt = random.ints(40, 3, vocab).toArray();   // 40 tokens: prefill through cuBLAS (>= 32)
            int[] tableA = {0, 1, 2, 3, 4, 5, 6, 7};
            int[] tableB = {8, 9, 10, 11, 12, 13, 14, 15};
            Compared compared = new Compared(c);
            int next = compared.step(cpu, cuda, new Step(List.of(new Slice(prompt, 0, tableA, 2))))[0];
            int posA = prompt.length;
            int[] promptB = random.ints(5, 3, vocab).toArray();
            int nextB = -1;
            int posB = 0;
            for (int i = 0; i < 16; i++) {
                List<Slice> slices = new ArrayList<>();
                // every other decode of A asks for its argmax only: the CUDA backend answers with the id computed on
                // the device (the CPU's rows are compared with it), beside B's rows (the layout puts them first)
                // (and every fourth with its logprob, rank and top 5, computed on the device too)
                slices.add(new Slice(new int[] {next}, posA++, tableA, 1, false,
                        i % 4 == 0 ? TokenChoice.ARGMAX : i % 4 == 2 ? TokenChoice.ARGMAX.withLogprobs(5) : null));
                if (i == 3) {   // the second sequence's prompt arrives mid-way and is prefilled beside the decode
                    slices.add(new Slice(promptB, 0, tableB, 1));
                    posB = promptB.length;
                } else if (i > 3) {
                    // and every other decode of B is drawn on the device (temperature 0.9, the number from a seed; from
                    // the whole softmax, top-k 40 with top-p 0.95 and min-p 0.05, top-p 0.9 or min-p 0.5 alone: these
                    // two the device would decline, sending the row, where the cut is wider than its 1,024 ranks: never
                    // on these 512-token vocabularies; CudaDeclineTest has a wider one)
                    TokenChoice draw = switch (i) {
                        case 5 -> TokenChoice.draw(0.9f, random.nextDouble());
                        case 9 -> TokenChoice.draw(0.9f, random.nextDouble(), 0, 0.9f, 0f);
                        case 13 -> TokenChoice.draw(0.9f, random.nextDouble(), 0, 1f, 0.5f);
                        default -> i % 4 == 3 ? TokenChoice.draw(0.9f, random.nextDouble(), 40, 0.95f, 0.05f) : null;
                    };
                    slices.add(new Slice(new int[] {nextB}, posB++, tableB, 1, false, draw));
                }
                int[] ids = compared.step(cpu, cuda, new Step(slices));
                next = ids[0];
                if (ids.length > 1) {
                    nextB = ids[1];
                }
            }
            // Fork sequence A at its last, partial block (copy-on-write) and decode both branches.
            int partial = (posA - 1) / BLOCK;
            int[] tableC = tableA.clone();
            tableC[partial] = 20;
            for (Backend b : List.of(cpu, cuda)) {
                b.copy(List.of(new BlockCopy(tableA[partial], 20, posA % BLOCK == 0 ? BLOCK : posA % BLOCK)));
            }
            compared.step(cpu, cuda, new Step(List.of(new Slice(new int[] {next}, posA, tableA, 1),
                    new Slice(new int[] {(next + 1) % vocab}, posA, tableC, 1))));
            // A third sequence long enough that each of the attention kernel's warps takes several 32-position
            // chunks (the online softmax rescales across them): a 200-token prefill, then decode.
            int[] tableD = java.util.stream.IntStream.range(24, 24 + MAX_POSITIONS / BLOCK).toArray();
            int[] promptD = random.ints(200, 3, vocab).toArray();
            int nextD = compared.step(cpu, cuda, new Step(List.of(new Slice(promptD, 0, tableD, 3))))[0];
            for (int i = 0; i < 2; i++) {
                nextD = compared.step(cpu, cuda, new Step(List.of(new Slice(new int[] {nextD}, promptD.length + i, tableD, 1))))[0];
            }
            System.out.printf(Locale.ROOT, "%s: %d rows, largest relative difference %.2e (tolerance %.0e), %d greedy ids"
                    + " compared, %d rows as argmax ids from the device, %d near ties skipped, %d draws on the device,"
                    + " %d declined%n",
                    c.name(), compared.rows, compared.worst, c.tolerance(), compared.ids, compared.argmaxRows, compared.ties,
                    compared.draws, compared.declined);
            assertEquals(CHECKED.equals("cuda") ? 8 : 0, compared.argmaxRows, "A's argmax-only decodes");
            assertEquals(CHECKED.equals("cuda") ? 4 : 0, compared.logprobRows, "A's decodes with logprobs from the device");
            assertEquals(CHECKED.equals("cuda") ? 6 : 0, compared.draws + compared.declined, "B's drawn decodes");
            assertTrue(!CHECKED.equals("cuda") || compared.draws >= 4, compared.draws + " draws on the device");
            assertTrue(compared.ids > 10, "too few comparable greedy ids: " + compared.ids);
        }
    }

    /** The model file, or (huggingFace) the model converted to a Hugging Face directory with the GGUF's tokenizer. */
    private static ModelSource open(Path gguf, Case c) throws java.io.IOException {
        if (!c.huggingFace()) {
            return ModelSource.open(gguf);
        }
        Path hf = dir.resolve(gguf.getFileName() + ".hf");
        GgufToHf.convert(gguf, hf, 1, true);
        return ModelSource.openHf(hf, GgufTokenizerLoader.fromMetadata(GgufFile.readMetadata(gguf)));
    }

    /** Runs steps on both backends and compares their logits; returns the CPU's greedy id of each row. */
    private static final class Compared {
        final Case c;
        int rows;
        int argmaxRows;
        int draws;
        int declined;
        int logprobRows;
        int ids;
        int ties;
        double worst;

        Compared(Case c) {
            this.c = c;
        }

        int[] step(Backend cpu, Backend cuda, Step step) {
            StepOutput a = cpu.forward(step);
            StepOutput b = cuda.forward(step);
            // the same step again without choices (the same K/V written again): the rows the device drew from
            StepOutput again = step.slices().stream().anyMatch(x -> x.choice() != null
                    && (!x.choice().argmax() || x.choice().logprobs()))
                    ? cuda.forward(new Step(step.slices().stream().map(x -> new Slice(x.tokens(), x.startPos(), x.blockTable(),
                            x.logitRows(), x.hidden())).toList())) : null;
            List<Integer> greedy = new ArrayList<>();
            for (int s = 0; s < step.slices().size(); s++) {
                assertEquals(a.rows(s), b.rows(s), "slice " + s + " rows");
                int[] deviceIds = b.chosen()[s];
                TokenChoice asked = step.slices().get(s).choice();
                if (CHECKED.equals("cuda") && asked != null && deviceIds == null) {
                    // declined: only a top-p / min-p cut without a top-k, and only where it is wider than 1,024 ranks
                    assertTrue(!asked.argmax() && asked.topK() == 0, "slice " + s + ": " + asked + " declined");
                    int keep = new io.nereid.engine.sampling.Distribution(new io.nereid.engine.api.SamplingParams(
                            asked.temperature(), -1, asked.topP(), asked.minP(), 1f, 0f, 0f, java.util.Map.of(), null, 0))
                            .of(b.row(s, 0)).size();
                    assertTrue(keep >= TokenChoice.MAX_TOP_K, "slice " + s + ": " + asked + " declined with a cut of " + keep);
                    declined++;
                } else if (CHECKED.equals("cuda")) {   // the CPU backend returns rows for them
                    assertEquals(asked != null, deviceIds != null, "slice " + s + ": ids for chosen slices");
                }
                for (int r = 0; r < a.rows(s); r++) {
                    float[] x = a.row(s, r);
                    float[] y = deviceIds != null ? null : b.row(s, r);
                    double scale = 1e-6;
                    int best = 0;
                    int second = -1;
                    for (int i = 0; i < x.length; i++) {
                        scale = Math.max(scale, Math.abs(x[i]));
                        if (x[i] > x[best]) {
                            second = best;
                            best = i;
                        } else if (i != best && (second < 0 || x[i] > x[second])) {
                            second = i;
                        }
                    }
                    int bestGpu = 0;
                    TokenChoice choice = step.slices().get(s).choice();
                    if (deviceIds != null && !choice.argmax()) {
                        // a draw: the same as the host's draw from the CUDA backend's own row (the step computed
                        // again without choices); the CPU's row may differ enough to move a draw on these flat
                        // random models, so it is not compared
                        draws++;
                        assertEquals(Distribution.choose(choice, again.row(s, r)), deviceIds[r], c.name() + ", slice " + s + " row " + r
                                + ": drawn id");
                        if (r == a.rows(s) - 1) {
                            greedy.add(best);
                        }
                        continue;
                    }
                    if (deviceIds != null) {
                        bestGpu = deviceIds[r];
                        argmaxRows++;
                        if (b.logprobs()[s] != null) {   // the device's logprobs: the host's on the device's own row
                            var expected = io.nereid.engine.sampling.RawLogprobs.score(again.row(s, r), bestGpu,
                                    choice.topLogprobs());
                            var actual = b.logprobs()[s][r];
                            String where = c.name() + ", slice " + s + " row " + r + ": ";
                            assertEquals(expected.logprob(), actual.logprob(), Math.ulp(expected.logprob()), where + "logprob");
                            assertEquals(expected.rank(), actual.rank(), where + "rank");
                            assertArrayEquals(expected.topIds(), actual.topIds(), where + "top ids");
                            logprobRows++;
                        }
                    } else {
                        double diff = 0;
                        for (int i = 0; i < x.length; i++) {
                            diff = Math.max(diff, Math.abs(x[i] - y[i]));
                            if (y[i] > y[bestGpu]) {
                                bestGpu = i;
                            }
                        }
                        double relative = diff / scale;
                        worst = Math.max(worst, relative);
                        rows++;
                        assertTrue(relative <= c.tolerance(), String.format(Locale.ROOT,
                                "%s, slice %d row %d: logits differ by %.3e of the row's scale %.3e (tolerance %.0e)", c.name(),
                                s, r, relative, scale, c.tolerance()));
                    }
                    if ((x[best] - x[second]) / scale > c.tolerance()) {
                        assertEquals(best, bestGpu, c.name() + ", slice " + s + " row " + r + ": greedy id");
                        ids++;
                    } else {
                        ties++;
                    }
                    if (r == a.rows(s) - 1) {
                        greedy.add(best);
                    }
                }
            }
            return greedy.stream().mapToInt(Integer::intValue).toArray();
        }
    }
}
