package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/nereid quantize}, {@code bench-model} and {@code structured-bench} as the launcher runs them:
 * picocli's command lines (help, unknown options with suggestions, values checked by name) over the engine's tools.
 */
class ToolCommandsTest {

    private static Path fixture(String relative) {
        return TestModels.stories260K().getParent().getParent().resolve(relative);
    }

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void benchModelPrintsLlamaBenchsTableWithPpAndTgRows() {
        assertEquals(0, run("bench-model", "--model", fixture("models/stories260K.gguf").toString(), "-p", "32", "-n",
                "8", "-r", "2", "--threads", "1"));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(4, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(0).matches("\\| model +\\| +size \\| +params \\| backend +\\| threads \\| +test \\| +t/s \\|"),
                lines.get(0));
        assertTrue(lines.get(2).matches("\\| llama 0.29M F32 +\\| +1.13 MiB \\| +0.29 M \\| CPU Java \\| +1 \\| +pp32 \\| +[0-9.]+ ± [0-9.]+ \\|"),
                lines.get(2));
        assertTrue(lines.get(3).matches(".*\\| +tg8 \\| +[0-9.]+ ± [0-9.]+ \\|$"), lines.get(3));
    }

    @Test
    void benchModelDepthStartsEachTestAfterThatManyTokensAndLabelsTheRows() {
        assertEquals(0, run("bench-model", "--model", fixture("models/stories260K.gguf").toString(), "-p", "8", "-n",
                "4", "-r", "1", "--threads", "1", "-d", "40"));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(4, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(2).matches(".*\\| +pp8 @ d40 \\| +[0-9.]+ ± [0-9.]+ \\|$"), lines.get(2));
        assertTrue(lines.get(3).matches(".*\\| +tg4 @ d40 \\| +[0-9.]+ ± [0-9.]+ \\|$"), lines.get(3));
    }

    @Test
    void benchModelDeterministicRunsTheBatchInvariantKernelsAndSaysSo() {
        assertEquals(0, run("bench-model", "--model", fixture("models/stories260K.gguf").toString(), "-p", "0", "-n",
                "4", "-r", "1", "--threads", "1", "--deterministic"));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertTrue(lines.get(2).matches("\\| llama 0.29M F32 +\\| .*\\| CPU Java det \\| +1 \\| +tg4 \\| .*"), lines.get(2));
    }

    @Test
    void structuredBenchPrintsMaskBenchsTableAndTheTotalLine(@TempDir Path dir) throws IOException {
        Path data = fixture("maskbench/data");
        for (String f : List.of("Github_easy---o10094.json", "Glaiveai2K---book_flight_d310c236.json", "BFCL_java_0.json")) {
            java.nio.file.Files.copy(data.resolve(f), dir.resolve(f));
        }
        Path report = dir.resolve("report.json");
        assertEquals(0, run("structured-bench", "--tokenizer", fixture("tokenizers/llama3").toString(), "--json",
                report.toString(), dir.toString()), err.toString(StandardCharsets.UTF_8));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertTrue(lines.get(0).startsWith("split") && lines.get(0).contains("TBM p99.9"), lines.get(0));
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("Glaiveai2K ")), String.join("\n", lines));
        assertTrue(lines.getLast().matches("total: passing [0-3]/3 \\([0-9]+\\.[0-9] %\\), compile errors [0-3], validation errors [0-3],"
                + " invalidation errors [0-3], timeouts [0-3]"), lines.getLast());
        String json = java.nio.file.Files.readString(report);
        assertTrue(json.contains("\"total\":{\"schemas\":3,"), json);
        assertTrue(json.contains("\"slowest_ttfm\":[{\"file\":\"") && json.contains("\"slowest_tbm\":[{\"file\":\""), json);
        assertEquals(64, run("structured-bench", dir.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--tokenizer and at least one DIR are required"));
    }

    @Test
    void benchModelNamesABadOption() {
        assertEquals(64, run("bench-model", "--model", "x.gguf", "-p", "many"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("-p/--n-prompt must be an integer, got 'many'"));
        assertEquals(64, run("bench-model", "--model", "x.gguf", "-r", "0"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("-r/--repetitions must be >= 1, got 0"));
        assertEquals(64, run("bench-model", "--model", "x.gguf", "--thread", "2"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option '--thread'; did you mean --threads?"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(1, run("bench-model", "--model", "/nonexistent.gguf"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("/nonexistent.gguf"));
    }

    @Test
    void quantizeWritesTheTypeMixAndSaysWhatItWrote(@TempDir Path dir) throws IOException {
        Path f32 = dir.resolve("f32.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 256, 2, 4, 2, 256, 512, 64, GgmlType.F32,
                false, 7), f32);
        Path q4 = dir.resolve("q4.gguf");
        assertEquals(0, run("quantize", f32.toString(), q4.toString(), "Q4_K_M"), err.toString(StandardCharsets.UTF_8));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains(": q4_k_m, 16 tensors converted, 5 copied (F32 x5, Q4_K x13, Q6_K x3)"),
                out.toString(StandardCharsets.UTF_8));
        assertEquals(0, run("quantize", "--pure", f32.toString(), q4.toString(), "q4_k_m"));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("q4_k_m --pure, 16 tensors converted, 5 copied (F32 x5, Q4_K x16)"),
                out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void quantizeNamesAnUnknownTypeOrOptionAndTheTensorItCannotWrite(@TempDir Path dir) {
        String model = fixture("models/stories260K.gguf").toString();
        Path q8 = dir.resolve("q8.gguf");
        assertEquals(64, run("quantize", model, q8.toString(), "q3_x"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown type 'q3_x'; valid types: q8_0, q4_0, q4_k_m,"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(64, run("quantize", "--imatrix", "x.dat", model, q8.toString(), "q8_0"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option '--imatrix'"));
        assertEquals(64, run("quantize", "only-one-arg"));
        assertEquals(64, run("frobnicate"));
        // stories260K's ffn_down rows hold 172 values: no Q8_0 blocks, and llama.cpp has no fallback for Q8_0
        assertEquals(1, run("quantize", model, q8.toString(), "q8_0"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("tensor blk.0.ffn_down.weight: rows of 172 values"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(0, run("quantize", model, q8.toString(), "f16"));
    }

    @Test
    void quantizeHelpListsTheTypesAndPure() {
        assertEquals(0, run("quantize", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        for (String t : List.of("q8_0", "q4_0", "q4_k_m", "q4_k_s", "q5_k_m", "q5_k_s", "q6_k", "f16", "bf16", "f32", "--pure")) {
            assertTrue(help.contains(t), t + " in\n" + help);
        }
    }

    @Test
    void everyToolsHelpIsGeneratedFromItsOptionTable() {
        assertEquals(0, run("bench-model", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        for (String flag : List.of("-m, --model=FILE", "-t, --threads=N", "-p, --n-prompt=N", "-n, --n-gen=N",
                "-r, --repetitions=N", "--backend=B", "(default 512; 0: no pp test)")) {
            assertTrue(help.contains(flag), flag + " in\n" + help);
        }
        out.reset();
        assertEquals(0, run("structured-bench", "-h"));
        help = out.toString(StandardCharsets.UTF_8);
        for (String flag : List.of("--tokenizer=PATH", "--whitespace=compact|flexible", "--timeout-ms=N", "--json=FILE",
                "--limit=N", "DIR...")) {
            assertTrue(help.contains(flag), flag + " in\n" + help);
        }
        assertEquals(64, run("structured-bench", "--tokenizer", "t.json", "--whitespace", "loose", "dir"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--whitespace must be compact or flexible, got loose"));
    }

    @Test
    void theCompletionScriptKnowsEveryCommandsOptionsTheBenchsToo(@TempDir Path dir) throws IOException {
        Path bench = dir.resolve("bench-options");
        java.nio.file.Files.writeString(bench, "--concurrency\tN[,N...]\n--no-progress\t\n");
        assertEquals(0, run("completion", "--bench-options", bench.toString()), err.toString(StandardCharsets.UTF_8));
        String script = out.toString(StandardCharsets.UTF_8);
        for (String word : List.of("--max-num-seqs", "--speculative-config", "--pure", "--n-prompt", "--tokenizer",
                "--concurrency", "--no-progress", "structured-bench")) {
            assertTrue(script.contains(word), word);
        }
        assertTrue(script.contains("complete -F _complete_nereid"), "a bash completion function, registered");
    }
}
