package io.nereid.engine.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bin/nereid quantize} and {@code bin/nereid bench-model} as the launcher runs them. */
class ToolsMainTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void benchModelPrintsLlamaBenchsTableWithPpAndTgRows() {
        assertEquals(0, run("bench-model", "--model", Fixtures.path("models/stories260K.gguf").toString(), "-p", "32", "-n",
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
    void benchModelNamesABadOption() {
        assertEquals(64, run("bench-model", "--model", "x.gguf", "-p", "many"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("-p must be an integer, got 'many'"));
        assertEquals(1, run("bench-model", "--model", "/nonexistent.gguf"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("/nonexistent.gguf"));
    }

    @Test
    void quantizeRewritesTheMatricesAndAnUnknownTypeIsNamed(@TempDir Path dir) {
        Path q8 = dir.resolve("q8.gguf");
        assertEquals(0, run("quantize", Fixtures.path("models/stories260K.gguf").toString(), q8.toString(), "q8_0"));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("matrices converted to Q8_0"));
        assertEquals(1, run("quantize", Fixtures.path("models/stories260K.gguf").toString(), q8.toString(), "q3_x"));
        assertEquals(64, run("quantize", "only-one-arg"));
        assertEquals(64, run("frobnicate"));
    }
}
