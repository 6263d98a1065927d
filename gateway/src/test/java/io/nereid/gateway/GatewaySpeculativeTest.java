package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code --speculative-config} end to end on stories260K: the same greedy text as without it,
 * streamed or not, vLLM's spec-decode counters on /metrics, and bad configurations refused at
 * startup with a message naming the key.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class GatewaySpeculativeTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NGRAM = "{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":3,"
            + "\"prompt_lookup_min\":1}";
    private static final List<String> PROMPTS = List.of("Once upon a time", "Lily and Tom went to the park. Lily and Tom",
            "The cat sat on the mat. The cat sat on the", "One day, a little boy named Tim found a big red ball.");

    private static String complete(TestServer s, HttpClient client, String prompt, boolean stream) throws Exception {
        String body = JSON.writeValueAsString(Map.of("model", "stories260K", "prompt", prompt, "max_tokens", 48,
                "temperature", 0, "stream", stream));
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(s.url("/v1/completions")))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        if (!stream) {
            return JSON.readTree(r.body()).get("choices").get(0).get("text").asText();
        }
        StringBuilder text = new StringBuilder();
        for (String frame : r.body().split("\n\n")) {
            if (frame.startsWith("data: {")) {
                JsonNode choices = JSON.readTree(frame.substring(6)).get("choices");
                if (!choices.isEmpty()) {
                    text.append(choices.get(0).get("text").asText());
                }
            }
        }
        return text.toString();
    }

    private static long counter(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*} ([0-9.E]+)$").matcher(metrics);
        assertTrue(m.find(), name + " missing from /metrics");
        return (long) Double.parseDouble(m.group(1));
    }

    /** Every prompt's greedy text from {@code spec}, streamed and not, equals {@code plain}'s; returns {@code spec}'s /metrics. */
    private static String assertSameGreedyText(TestServer plain, TestServer spec, HttpClient client) throws Exception {
        for (String prompt : PROMPTS) {
            String expected = complete(plain, client, prompt, false);
            assertEquals(expected, complete(spec, client, prompt, false), prompt);
            assertEquals(expected, complete(spec, client, prompt, true), prompt + " (streamed)");
        }
        return metrics(spec, client);
    }

    private static String metrics(TestServer s, HttpClient client) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(s.url("/metrics"))).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void greedyTextIsTheSameWithNgramDraftsAndTheCountersShowThem() throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        try (TestServer plain = TestServer.start("--threads", "1");
                TestServer spec = TestServer.start("--threads", "1", "--speculative-config", NGRAM)) {
            String metrics = assertSameGreedyText(plain, spec, client);
            long drafts = counter(metrics, "vllm:spec_decode_num_drafts_total");
            long draftTokens = counter(metrics, "vllm:spec_decode_num_draft_tokens_total");
            long accepted = counter(metrics, "vllm:spec_decode_num_accepted_tokens_total");
            assertTrue(drafts > 0 && accepted > 0 && accepted <= draftTokens, metrics);
            assertTrue(metrics.contains("vllm:spec_decode_num_accepted_tokens_per_pos_total{"), metrics);
            assertTrue(!metrics(plain, client).contains("spec_decode"), "no spec-decode counters without --speculative-config");
        }
    }

    @Test
    void badConfigurationsAreRefusedNamingTheKey() {
        for (String[] bad : new String[][] {
                {"{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"lookahead\":2}", "unknown key \"lookahead\""},
                {"{\"method\":\"ngram\"}", "num_speculative_tokens is required"},
                {"{\"method\":\"ngram\",\"num_speculative_tokens\":0}", "num_speculative_tokens must be in [1, 32]"},
                {"{\"method\":\"ngram\",\"num_speculative_tokens\":\"4\"}", "num_speculative_tokens must be an integer"},
                {"{\"method\":\"medusa\",\"num_speculative_tokens\":4}", "method must be \"ngram\" or \"draft_model\""},
                {"{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_min\":4,\"prompt_lookup_max\":2}",
                        "prompt_lookup_min must be >= 1 and <= prompt_lookup_max"},
                {"{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"disable_by_batch_size\":0}",
                        "disable_by_batch_size must be >= 1"},
                {"[1]", "not a JSON object"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ServeConfig.parse(List.of("--speculative-config", bad[0]), Map.of()), bad[0]);
            assertTrue(e.getMessage().startsWith("--speculative-config: ") && e.getMessage().contains(bad[1]),
                    bad[0] + ": " + e.getMessage());
        }
        // the environment variable works too, and vLLM's defaults apply
        Exception e;
        var c = ServeConfig.parse(List.of(), Map.of("NEREID_SPECULATIVE_CONFIG",
                "{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}")).speculative();
        assertEquals(3, c.numSpeculativeTokens());
        assertEquals(4, c.promptLookupMin());
        assertEquals(4, c.promptLookupMax());
        // the draft length is chosen per step unless --speculative-adaptive false keeps vLLM's fixed one
        assertTrue(c.adaptive());
        String ngram = "{\"method\":\"ngram\",\"num_speculative_tokens\":3}";
        assertFalse(ServeConfig.parse(List.of("--speculative-config", ngram, "--speculative-adaptive", "false"), Map.of())
                .speculative().adaptive());
        assertFalse(ServeConfig.parse(List.of("--speculative-config", ngram), Map.of("NEREID_SPECULATIVE_ADAPTIVE", "off"))
                .speculative().adaptive());
        assertFalse(io.nereid.engine.api.SpeculativeConfig.parse(ngram).adaptive(), "vLLM's JSON alone: fixed");
        e = assertThrows(IllegalArgumentException.class, () -> ServeConfig.parse(List.of("--speculative-config", ngram,
                "--speculative-adaptive", "sometimes"), Map.of()));
        assertTrue(e.getMessage().contains("--speculative-adaptive must be true or false"), e.getMessage());
        // a draft model that is missing, or whose vocabulary is not the target's, is refused at startup
        e = assertThrows(IllegalArgumentException.class, () -> TestServer.start("--speculative-config",
                "{\"method\":\"draft_model\",\"model\":\"no-such-draft.gguf\",\"num_speculative_tokens\":4}").close());
        assertTrue(e.getMessage().contains("draft model no-such-draft.gguf does not exist"), e.getMessage());
        String other = TestModels.stories260K().resolveSibling("../parity/parity-a-llama-spm-q8_0.gguf").normalize().toString();
        e = assertThrows(IllegalArgumentException.class, () -> TestServer.start("--speculative-config",
                "{\"method\":\"draft_model\",\"model\":\"" + other + "\",\"num_speculative_tokens\":4}").close());
        assertTrue(e.getMessage().contains("does not share the target's vocabulary"), e.getMessage());
    }

    @Test
    void aRepositoryModelsOwnSpeculativeConfigFollowsTheServersAdaptiveFlag(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path repo) throws Exception {
        java.nio.file.Path m = java.nio.file.Files.createDirectories(repo.resolve("m"));
        java.nio.file.Files.copy(TestModels.stories260K(), m.resolve("model.gguf"));
        java.nio.file.Files.writeString(m.resolve("nereid.json"),
                "{\"speculative_config\": {\"method\": \"ngram\", \"num_speculative_tokens\": 2}}");
        for (String flag : new String[] {"true", "false"}) {
            ServeConfig base = ServeConfig.parse(List.of("--model-repository", repo.toString(), "--speculative-adaptive",
                    flag), Map.of());
            var c = new ModelCatalog(base, java.util.function.UnaryOperator.identity()).configFor("m").speculative();
            assertEquals(2, c.numSpeculativeTokens());
            assertEquals(Boolean.parseBoolean(flag), c.adaptive(), "the server has no --speculative-config of its own");
        }
    }

    @Test
    void theTargetAsItsOwnDraftModelGivesTheSameTextWithEveryDraftKept() throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        String draft = "{\"method\":\"draft_model\",\"model\":\"" + TestModels.stories260K() + "\",\"num_speculative_tokens\":3}";
        try (TestServer plain = TestServer.start("--threads", "1");
                // the fixed length: the draft then decodes in step with the target; an adaptive one that skips steps
                // catches up with a prompt-sized forward, whose bits may differ from a decode's (a near tie then
                // flips a draft: 181 of 186 kept in one run), which is lossless but not "every draft kept"
                TestServer spec = TestServer.start("--threads", "1", "--speculative-config", draft,
                        "--speculative-adaptive", "false")) {
            String metrics = assertSameGreedyText(plain, spec, client);
            long draftTokens = counter(metrics, "vllm:spec_decode_num_draft_tokens_total");
            assertTrue(draftTokens > 0, metrics);
            assertEquals(draftTokens, counter(metrics, "vllm:spec_decode_num_accepted_tokens_total"), metrics);
        }
    }
}
