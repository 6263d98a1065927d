package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void versionPrintsTheProjectVersionFromTheBuild() {
        assertEquals(0, run("version"));
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("Nereid 0."), text);
        assertTrue(!text.contains("${project.version}") && !text.contains("unknown"), text);
    }

    @Test
    void serveHelpListsEveryOptionAndABadOptionIsAUsageError() {
        assertEquals(0, run("serve", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        for (String flag : new String[] {"--model", "--served-model-name", "--host", "--port", "--max-num-seqs",
                "--max-num-batched-tokens", "--max-waiting", "--block-size", "--kv-cache-memory", "--chat-template",
                "--threads", "NEREID_PORT"}) {
            assertTrue(help.contains(flag), flag + " missing from:\n" + help);
        }
        assertEquals(64, run("serve", "--no-such-flag", "1"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option '--no-such-flag'"));
    }

    /** A user error, so one line naming the problem and no stack trace; it never gets as far as listening. */
    @Test
    void serveWithABadModelDirectoryFailsWithTheReason(@TempDir Path dir) throws IOException {
        assertEquals(1, run("serve", "--model", dir.toString(), "--port", "0"));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("nereid serve: " + dir + ": not a model directory: config.json is missing"), text);
        Files.writeString(dir.resolve("config.json"), "{\"model_type\": \"gpt_neox\"}");
        assertEquals(1, run("serve", "--model", dir.toString(), "--port", "0"));
        text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("model_type 'gpt_neox' is not supported; supported: llama, qwen2, qwen3"), text);
        assertTrue(!text.contains("\tat ") && !text.contains("Exception") && !text.contains("listening"), text);
    }

    @Test
    void generateWithABadModelDirectoryFailsWithTheReason(@TempDir Path dir) {
        assertEquals(1, run("generate", "--model", dir.toString(), "--prompt", "Hi"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("config.json is missing"));
    }

    @Test
    void unknownCommandIsAUsageError() {
        assertEquals(64, run("frobnicate"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown command 'frobnicate'"));
    }
}
