package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class GenerateCommandTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private static Path storiesModel() {
        return TestModels.stories260K();
    }

    @Test
    void greedyGenerationStreamsTheReferenceContinuationAndReportsSpeed() {
        assertEquals(0, run("generate", "--model", storiesModel().toString(), "--prompt", "Once upon a time",
                "--temperature", "0", "--max-tokens", "12", "--context", "512", "--threads", "2"));
        // The first 12 of llama.cpp's greedy ids (stories260K.json) decode to this.
        assertEquals("Once upon a time, there was a little girl named Lily. She\n", out.toString(StandardCharsets.UTF_8));
        String stats = err.toString(StandardCharsets.UTF_8);
        assertTrue(stats.contains("prompt: 5 tokens") && stats.contains("decode: 12 tokens"), stats);
    }

    @Test
    void theKvCacheIsF16ByDefaultAndF32OnRequestWithTheSameGreedyText() {
        String expected = "Once upon a time, there was a little girl named Lily. She\n";
        assertEquals(0, run("generate", "--model", storiesModel().toString(), "--prompt", "Once upon a time",
                "--temperature", "0", "--max-tokens", "12", "--context", "512", "--threads", "1"));
        assertEquals(expected, out.toString(StandardCharsets.UTF_8));
        // stories260K: K and V x 5 layers x 33 blocks (one context + the null block) x 4 KV heads x 16 slots x 8 dims, 2 or 4 bytes.
        String f16 = err.toString(StandardCharsets.UTF_8);
        assertTrue(f16.contains("KV cache f16 0.3 MiB"), f16);
        out.reset();
        err.reset();
        assertEquals(0, run("generate", "--model", storiesModel().toString(), "--prompt", "Once upon a time",
                "--temperature", "0", "--max-tokens", "12", "--context", "512", "--threads", "1", "--kv-type", "f32"));
        assertEquals(expected, out.toString(StandardCharsets.UTF_8));
        String f32 = err.toString(StandardCharsets.UTF_8);
        assertTrue(f32.contains("KV cache f32 0.6 MiB"), f32);
    }

    @Test
    void anUnknownKvTypeIsNamedInTheError() {
        assertEquals(1, run("generate", "--model", storiesModel().toString(), "--prompt", "x", "--kv-type", "q4"));
        String e = err.toString(StandardCharsets.UTF_8);
        assertTrue(e.contains("KV cache type 'q4' is not one of f16, bf16, f32"), e);
    }

    @Test
    void anUnknownOptionIsAnErrorNamingTheOneMeantNotSilentlyIgnored() {
        assertEquals(64, run("generate", "--model", storiesModel().toString(), "--prompt", "x", "--max-token", "3"));
        String e = err.toString(StandardCharsets.UTF_8);
        assertTrue(e.contains("unexpected argument '--max-token'") && e.contains("--max-tokens"), e);
        assertEquals(0, run("generate", "--help"));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("--speculative-config"));
    }

    @Test
    void speculationPrintsTheReferenceTextWithAFixedOrAnAdaptiveDraftLength() {
        String expected = "Once upon a time, there was a little girl named Lily. She\n";
        String ngram = "{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":3}";
        for (String adaptive : new String[] {"true", "false"}) {
            out.reset();
            err.reset();
            assertEquals(0, run("generate", "--model", storiesModel().toString(), "--prompt", "Once upon a time",
                    "--temperature", "0", "--max-tokens", "12", "--context", "512", "--threads", "2",
                    "--speculative-config", ngram, "--speculative-adaptive", adaptive));
            assertEquals(expected, out.toString(StandardCharsets.UTF_8), adaptive);
            String stats = err.toString(StandardCharsets.UTF_8);
            assertTrue(stats.contains(" | drafts: ") && stats.contains("(draft length adaptive)") == adaptive.equals("true"),
                    stats);
        }
        err.reset();
        assertEquals(1, run("generate", "--model", storiesModel().toString(), "--prompt", "x", "--speculative-config", ngram,
                "--speculative-adaptive", "maybe"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--speculative-adaptive must be true or false, got 'maybe'"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void missingArgumentsAndBadFilesAreClearErrors() {
        assertEquals(64, run("generate", "--prompt", "x"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--model and --prompt (or --batch) are required"));
        assertEquals(1, run("generate", "--model", "/nonexistent/model.gguf", "--prompt", "x"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("/nonexistent/model.gguf"), err.toString(StandardCharsets.UTF_8));
        assertEquals(1, run("generate", "--model", storiesModel().toString(), "--prompt", "x", "--max-tokens", "1000"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("exceeds the context of 128"), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void offlineBatchRunsEveryPromptThroughTheEngineInInputOrder(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path batch = dir.resolve("prompts.jsonl");
        Files.writeString(batch, "{\"prompt\": \"Once upon a time\", \"max_tokens\": 12}\n{\"prompt\": \"Lily and Tom\"}\n");
        assertEquals(0, run("generate", "--model", storiesModel().toString(), "--batch", batch.toString(), "--temperature", "0",
                "--max-tokens", "6", "--context", "512", "--threads", "2"));
        String[] lines = out.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(2, lines.length);
        // Same greedy text as the single-sequence run above, through the batching engine.
        assertTrue(lines[0].startsWith("{\"index\":0,\"text\":\", there was a little girl named Lily. She\""), lines[0]);
        assertTrue(lines[0].contains("\"completion_tokens\":12"), lines[0]);
        assertTrue(lines[1].contains("\"index\":1") && lines[1].contains("\"completion_tokens\":6"), lines[1]);
        assertTrue(lines[1].contains("\"text\":\" "), "a completion keeps the space after its prompt: " + lines[1]);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("offline: 2 prompts, 18 output tokens"), err.toString(StandardCharsets.UTF_8));
    }
}
