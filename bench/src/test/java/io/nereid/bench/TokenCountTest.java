package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where token counts come from: the server's {@code /tokenize} when it has one (and synthetic
 * prompts are then sized in its tokens), else the usage it reports. {@link FakeSseServer}'s toy
 * tokenizer makes long words two tokens, so a prompt of N words is not N tokens.
 */
class TokenCountTest {
    @Test
    void withTokenizeInputTokensAreTheServersAndPromptsHitTheMean(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(0, true)) {
            String out = EndToEndTest.run("--url", server.url(), "--endpoint", "completions", "--concurrency", "2",
                    "--num-requests", "10", "--input-tokens-mean", "16", "--output-tokens-mean", "3",
                    "--shared-prefix-tokens", "5", "--output-dir", dir.toString(), "--no-progress");
            assertTrue(out.contains("Token counts: input from /tokenize (the server's tokenizer), output from usage"), out);
            for (JsonNode body : server.bodies) {
                // "prefix\nprompt": 5 + 16 toy tokens exactly, whichever words were drawn
                String[] parts = body.path("prompt").asText().split("\n");
                assertEquals(5, FakeSseServer.toyTokens(parts[0]), parts[0]);
                assertEquals(16, FakeSseServer.toyTokens(parts[1]), parts[1]);
            }
            assertTrue(server.tokenizeCalls.get() > 10, "word costs, then one count per request");
        }
        JsonNode s = EndToEndTest.summary(dir);
        assertEquals("/tokenize", s.path("input_config").path("input_token_count_source").asText());
        assertEquals("usage", s.path("input_config").path("output_token_count_source").asText());
        // ISL = 5 + 16 + BOS, every request; the fake's usage would have said otherwise (it counts JSON words)
        assertEquals(22.0, s.path("input_sequence_length").path("min").asDouble());
        assertEquals(22.0, s.path("input_sequence_length").path("max").asDouble());
    }

    @Test
    void chatPromptsAreCountedAsMessages(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(0, true)) {
            EndToEndTest.run("--url", server.url(), "--concurrency", "1", "--num-requests", "3", "--input-tokens-mean", "7",
                    "--output-tokens-mean", "2", "--output-dir", dir.toString(), "--no-progress");
        }
        // one user message: 7 toy tokens + 3
        assertEquals(10.0, EndToEndTest.summary(dir).path("input_sequence_length").path("avg").asDouble());
    }

    @Test
    void withoutTokenizeInputTokensComeFromUsage(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(0, false)) {
            String out = EndToEndTest.run("--url", server.url(), "--endpoint", "completions", "--concurrency", "2",
                    "--num-requests", "4", "--input-tokens-mean", "16", "--output-tokens-mean", "3",
                    "--output-dir", dir.toString(), "--no-progress");
            assertTrue(out.contains("Token counts: input from usage (the server's reported counts), output from usage"), out);
            int usage = server.bodies.peek().toString().split(" ").length; // what the fake reports as prompt_tokens
            assertEquals(usage, EndToEndTest.summary(dir).path("input_sequence_length").path("min").asDouble());
        }
        assertEquals("usage", EndToEndTest.summary(dir).path("input_config").path("input_token_count_source").asText());
    }
}
