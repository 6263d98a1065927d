package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WorkloadTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static BenchConfig config(long seed) {
        return BenchConfig.parse(new String[]{"--model", "m", "--seed", Long.toString(seed),
                "--input-tokens-mean", "32", "--shared-prefix-tokens", "16", "--output-tokens-mean", "8",
                "--output-tokens-stddev", "3", "--output-dir", Path.of("unused").toString()});
    }

    private static List<JsonNode> payloads(Workload w, int n) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(JSON.readTree(w.nextPayload()));
        }
        return out;
    }

    private static String user(JsonNode body) {
        return body.path("messages").get(1).path("content").asText();
    }

    @Test
    void extraInputsGoIntoEveryBodyAndMustBeAJsonObject() throws Exception {
        BenchConfig c = BenchConfig.parse(new String[]{"--model", "m", "--output-dir", "unused", "--extra-inputs",
                "{\"response_format\":{\"type\":\"json_object\"},\"temperature\":0}"});
        for (JsonNode body : payloads(new Workload(c), 3)) {
            assertEquals("json_object", body.path("response_format").path("type").asText());
            assertEquals(0, body.path("temperature").asInt());
            assertEquals("m", body.path("model").asText());
        }
        for (String bad : List.of("[1]", "{nope")) {
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> BenchConfig.parse(new String[]{"--model", "m", "--extra-inputs", bad}));
            assertTrue(e.getMessage().startsWith("--extra-inputs: "), e.getMessage());
        }
    }

    @Test
    void anInputGroundedPromptAsksToRepeatItsPassageGreedily() throws Exception {
        BenchConfig c = BenchConfig.parse(new String[]{"--model", "m", "--workload", "input-grounded",
                "--input-tokens-mean", "40", "--output-tokens-mean", "30", "--output-dir", "unused"});
        Set<String> prompts = new HashSet<>();
        for (JsonNode body : payloads(new Workload(c), 5)) {
            String prompt = body.path("messages").get(0).path("content").asText();
            assertTrue(prompt.endsWith(Workload.REPEAT), prompt);
            String passage = prompt.substring(0, prompt.length() - Workload.REPEAT.length());
            assertEquals(30, passage.split(" ").length, "40 tokens less the instruction's 10, one per word: " + passage);
            assertEquals(0, body.path("temperature").asInt());
            assertTrue(body.path("temperature").isNumber());
            assertEquals(30, body.path("max_tokens").asInt());
            prompts.add(prompt);
        }
        assertEquals(5, prompts.size(), "each request its own passage");
        int[] costs = new int[Workload.costCount()];
        java.util.Arrays.fill(costs, 1);
        costs[costs.length - 1] = 25; // the instruction, in a tokenizer where it costs 25
        String measured = JSON.readTree(new Workload(c, 0, costs).nextPayload()).path("messages").get(0)
                .path("content").asText();
        assertEquals(15, measured.substring(0, measured.length() - Workload.REPEAT.length()).split(" ").length,
                "40 tokens less the instruction's measured 25");
        JsonNode sampled = JSON.readTree(new Workload(BenchConfig.parse(new String[]{"--model", "m",
                "--output-dir", "unused"})).nextPayload());
        assertTrue(sampled.path("temperature").isMissingNode(), "synthetic prompts leave the sampling to the server");
        JsonNode overridden = JSON.readTree(new Workload(BenchConfig.parse(new String[]{"--model", "m", "--workload",
                "input-grounded", "--extra-inputs", "{\"temperature\":0.7}", "--output-dir", "unused"})).nextPayload());
        assertEquals(0.7, overridden.path("temperature").asDouble(), "--extra-inputs wins");
        for (String[] bad : List.of(new String[]{"--workload", "copy"},
                new String[]{"--workload", "input-grounded", "--input-file", "p.jsonl"})) {
            String[] args = java.util.stream.Stream.concat(java.util.stream.Stream.of("--model", "m"),
                    java.util.Arrays.stream(bad)).toArray(String[]::new);
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> BenchConfig.parse(args));
            assertTrue(e.getMessage().startsWith("--workload"), e.getMessage());
        }
    }

    @Test
    void sameSeedAndLevelGiveTheSamePayloads() throws Exception {
        assertEquals(payloads(new Workload(config(7), 2, null), 20), payloads(new Workload(config(7), 2, null), 20));
        assertEquals(payloads(new Workload(config(7)), 20), payloads(new Workload(config(7), 0, null), 20));
    }

    @Test
    void levelsDoNotSharePromptsButShareThePrefix() throws Exception {
        Set<String> seen = new HashSet<>();
        Set<String> prefixes = new HashSet<>();
        for (int level = 0; level < 4; level++) {
            for (JsonNode body : payloads(new Workload(config(7), level, null), 50)) {
                assertTrue(seen.add(user(body)), "prompt repeated across levels at level " + level);
                prefixes.add(body.path("messages").get(0).path("content").asText());
            }
        }
        assertEquals(1, prefixes.size());
    }

    @Test
    void levelSeedsDifferFromTheSeedAndEachOther() {
        Set<Long> seeds = new HashSet<>();
        for (long seed = 0; seed < 3; seed++) {
            for (int level = 0; level < 100; level++) {
                seeds.add(Workload.levelSeed(seed, level));
            }
        }
        assertEquals(300, seeds.size());
        assertNotEquals(Workload.levelSeed(0, 1), Workload.levelSeed(1, 0));
    }

    @Test
    void kserveGenerateSendsTheTensorRtLlmEnsemblesInputs() throws Exception {
        BenchConfig c = BenchConfig.parse(new String[]{"--model", "m", "--endpoint", "kserve-generate",
                "--output-tokens-mean", "7", "--output-dir", "unused"});
        com.fasterxml.jackson.databind.JsonNode body = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(new Workload(c).nextPayload());
        assertTrue(body.get("text_input").asText().length() > 0);
        assertEquals(7, body.get("max_tokens").asInt());
        assertEquals(7, body.get("min_length").asInt());
        assertTrue(body.get("exclude_input_in_output").asBoolean());
        assertFalse(body.has("model"));
        assertEquals("/v2/models/m/generate_stream", LoadGenerator.path(c));
    }
}
