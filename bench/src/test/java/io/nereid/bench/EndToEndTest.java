package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bench against an in-test fake SSE server: the files parse and their counts match what was sent. */
class EndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static String run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, rc, () -> err.toString(StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8);
    }

    private static void assertReports(Path dir, int requests, int outputTokens, String mode) throws Exception {
        JsonNode profile = JSON.readTree(dir.resolve(GenAiPerfExport.PROFILE).toFile());
        JsonNode experiment = profile.path("experiments").get(0);
        assertEquals(mode, experiment.path("experiment").path("mode").asText());
        JsonNode reqs = experiment.path("requests");
        assertEquals(requests, reqs.size());
        for (JsonNode r : reqs) {
            // role chunk (chat only), the tokens, usage, [DONE]; arrivals never before the send
            assertTrue(r.path("response_timestamps").size() >= outputTokens + 2);
            assertEquals(r.path("response_timestamps").size(), r.path("response_outputs").size());
            assertTrue(r.path("response_timestamps").get(0).asLong() >= r.path("timestamp").asLong());
        }
        JsonNode summary = JSON.readTree(dir.resolve(GenAiPerfExport.JSON_FILE).toFile());
        assertEquals(requests, summary.path("request_count").path("avg").asInt());
        assertEquals(outputTokens, summary.path("output_sequence_length").path("avg").asDouble(), 1e-9);
        assertEquals("ms", summary.path("time_to_first_token").path("unit").asText());
        assertTrue(summary.path("inter_token_latency").path("p99").asDouble() >= 0);
        assertEquals("usage", summary.path("input_config").path("input_token_count_source").asText());
        assertEquals("usage", summary.path("input_config").path("output_token_count_source").asText());
        List<String> csv = Files.readAllLines(dir.resolve(GenAiPerfExport.CSV_FILE));
        assertEquals("Metric,avg,min,max,p99,p95,p90,p75,p50,p25", csv.get(0));
        assertTrue(csv.get(1).startsWith("Time To First Token (ms),"));
        assertTrue(csv.contains("Request Count (count)," + requests + ".00"), csv::toString);
        String html = Files.readString(dir.resolve("report.html"));
        assertTrue(html.contains("<svg"));
        assertFalse(html.contains("http://") && html.contains("<script"), "self-contained: no scripts");
        assertFalse(html.contains("<link"), "self-contained: no external stylesheets or fonts");
    }

    @Test
    void concurrencyModeRecordsEveryRequestAndWritesParsableReports(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(1)) {
            String out = run("--url", server.url(), "--concurrency", "3", "--num-requests", "12", "--warmup-requests",
                    "2", "--input-tokens-mean", "16", "--output-tokens-mean", "5", "--output-dir", dir.toString(),
                    "--no-progress");
            assertTrue(out.contains("Time To First Token (ms)"), out);
            assertEquals(14, server.requests.get(), "12 measured + 2 warm-up");
            assertReports(dir, 12, 5, "concurrency");
        }
    }

    @Test
    void poissonModeOnCompletionsRecordsEveryRequest(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(0)) {
            run("--url", server.url(), "--model", "fake-model", "--endpoint", "completions", "--request-rate", "200",
                    "--num-requests", "10", "--output-tokens-mean", "4", "--seed", "3", "--output-dir", dir.toString(),
                    "--no-progress");
            assertEquals(10, server.requests.get());
            assertReports(dir, 10, 4, "request_rate");
        }
    }

    @Test
    void hungAndFailingRequestsAreCountedAsErrors(@TempDir Path dir) throws Exception {
        Path prompts = dir.resolve("prompts.jsonl");
        Files.writeString(prompts, "{\"text\":\"hello\"}\n{\"text\":\"HANG\"}\n{\"text\":\"FAIL\"}\n");
        try (FakeSseServer server = new FakeSseServer(0)) {
            run("--url", server.url(), "--concurrency", "3", "--num-requests", "3", "--input-file", prompts.toString(),
                    "--output-tokens-mean", "3", "--request-timeout", "1", "--output-dir", dir.resolve("out").toString(),
                    "--no-progress");
        }
        JsonNode summary = JSON.readTree(dir.resolve("out").resolve(GenAiPerfExport.JSON_FILE).toFile());
        assertEquals(1, summary.path("request_count").path("avg").asInt());
        assertEquals(2, summary.path("error_count").path("avg").asInt());
        assertEquals(1, summary.path("error_count").path("by_status").path("timeout").asInt());
        assertEquals(1, summary.path("error_count").path("by_status").path("500").asInt());
    }

    @Test
    void sweepWritesOneReportPerConcurrencyAndAFrontierChart(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(0)) {
            run("--url", server.url(), "--concurrency", "1,2", "--num-requests", "4", "--output-tokens-mean", "3",
                    "--output-dir", dir.toString(), "--no-progress");
        }
        assertReports(dir.resolve("concurrency1"), 4, 3, "concurrency");
        assertReports(dir.resolve("concurrency2"), 4, 3, "concurrency");
        assertTrue(Files.readString(dir.resolve("sweep.html")).contains("<polyline"));
    }

    @Test
    void serverScenarioSweepsRequestRatesAndNamesTheBestRate(@TempDir Path dir) throws Exception {
        // 8 requests per level: about 2 s of Poisson arrivals at 4/s, then about 1 s at 8/s.
        String out;
        try (FakeSseServer server = new FakeSseServer(1)) {
            out = run("--url", server.url(), "--scenario", "server", "--request-rate", "4,8", "--num-requests", "8",
                    "--output-tokens-mean", "3", "--ttft-slo", "20000", "--tpot-slo", "20000", "--seed", "2",
                    "--output-dir", dir.toString(), "--no-progress");
            assertEquals(16, server.requests.get());
        }
        JsonNode sweep = JSON.readTree(dir.resolve("sweep.json").toFile());
        JsonNode points = sweep.path("points");
        assertEquals(2, points.size(), sweep::toString);
        String[] loads = {"request rate 4/s", "request rate 8/s"};
        String[] dirs = {"rate4", "rate8"};
        double[] rates = {4, 8};
        JsonNode expected = null;
        for (int i = 0; i < 2; i++) {
            JsonNode p = points.get(i);
            assertEquals(loads[i], p.path("load").asText());
            assertEquals(8, p.path("request_count").asInt());
            assertEquals(0, p.path("error_count").asInt());
            assertTrue(p.path("slo_met").asBoolean(), p::toString);
            if (expected == null || p.path("output_token_throughput").asDouble()
                    > expected.path("output_token_throughput").asDouble()) {
                expected = p;
            }
            Path level = dir.resolve(dirs[i]);
            assertReports(level, 8, 3, "request_rate");
            JsonNode experiment = JSON.readTree(level.resolve(GenAiPerfExport.PROFILE).toFile()).path("experiments").get(0);
            assertEquals(rates[i], experiment.path("experiment").path("value").asDouble());
            JsonNode s = summary(level);
            assertEquals(rates[i], s.path("input_config").path("request_rate").asDouble());
            assertEquals("server", s.path("input_config").path("scenario").asText());
            assertEquals(99, s.path("slo").path("percentile").asDouble());
            assertTrue(s.path("slo").path("met").asBoolean());
        }
        assertEquals(expected.path("load").asText(), sweep.path("best").path("load").asText());
        assertTrue(out.contains("Best configuration: " + expected.path("load").asText() + ": "), out);
        String html = Files.readString(dir.resolve("sweep.html"));
        for (String load : loads) {
            assertTrue(html.contains(">" + load + "</text>"), "the chart labels the point " + load);
        }
        assertTrue(sweep.path("title").asText().contains("server scenario"), sweep::toString);
    }

    @Test
    void sweepLevelsSendDifferentPromptsBehindTheSameSharedPrefix(@TempDir Path dir) throws Exception {
        List<JsonNode> bodies;
        try (FakeSseServer server = new FakeSseServer(0)) {
            run("--url", server.url(), "--concurrency", "1,2", "--num-requests", "4", "--output-tokens-mean", "2",
                    "--input-tokens-mean", "24", "--shared-prefix-tokens", "32", "--seed", "5",
                    "--output-dir", dir.toString(), "--no-progress");
            bodies = List.copyOf(server.bodies);
        }
        assertEquals(8, bodies.size());
        // The levels run one after the other: the first 4 bodies are level 0's, the last 4 level 1's.
        java.util.Set<String> level0 = new java.util.HashSet<>();
        java.util.Set<String> level1 = new java.util.HashSet<>();
        java.util.Set<String> systems = new java.util.HashSet<>();
        for (int i = 0; i < bodies.size(); i++) {
            JsonNode messages = bodies.get(i).path("messages");
            assertEquals("system", messages.get(0).path("role").asText());
            systems.add(messages.get(0).path("content").asText());
            (i < 4 ? level0 : level1).add(messages.get(1).path("content").asText());
        }
        assertEquals(1, systems.size(), "the shared prefix is common to every level");
        assertEquals(4, level0.size());
        assertEquals(4, level1.size());
        java.util.Set<String> shared = new java.util.HashSet<>(level0);
        shared.retainAll(level1);
        assertTrue(shared.isEmpty(), () -> "levels share prompts: " + shared);
    }

    @Test
    void offlineScenarioSendsEveryRequestAtOnce(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(1)) {
            server.gate = 8; // no stream produces a token before all 8 requests have arrived
            String out = run("--url", server.url(), "--scenario", "offline", "--num-requests", "8",
                    "--output-tokens-mean", "3", "--output-dir", dir.toString(), "--no-progress");
            assertTrue(out.contains("offline scenario"), out);
            assertEquals(8, server.requests.get());
            assertEquals(8, server.maxInFlight.get(), "all requests in flight together");
            assertReports(dir, 8, 3, "offline");
        }
    }

    static JsonNode summary(Path dir) throws Exception {
        return JSON.readTree(dir.resolve(GenAiPerfExport.JSON_FILE).toFile());
    }

    @Test
    void serverScenarioMeetsGenerousSlosAndReportsGoodput(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(1)) {
            String out = run("--url", server.url(), "--scenario", "server", "--request-rate", "200",
                    "--num-requests", "10", "--output-tokens-mean", "4", "--ttft-slo", "20000", "--tpot-slo", "20000",
                    "--output-dir", dir.toString(), "--no-progress");
            assertTrue(out.contains("Request Goodput (per sec)"), out);
            assertTrue(out.contains("SLOs MET"), out);
            assertReports(dir, 10, 4, "request_rate");
        }
        JsonNode s = summary(dir);
        assertEquals("requests/sec", s.path("request_goodput").path("unit").asText());
        // every request is good, so goodput equals request throughput
        assertEquals(s.path("request_throughput").path("avg").asDouble(), s.path("request_goodput").path("avg").asDouble(), 1e-9);
        assertTrue(s.path("slo").path("met").asBoolean());
        assertEquals(10, s.path("slo").path("good_request_count").asInt());
        assertEquals(99, s.path("slo").path("percentile").asDouble());
        assertEquals("server", s.path("input_config").path("scenario").asText());
        assertEquals(20000, s.path("input_config").path("goodput").path("time_to_first_token").asDouble());
        assertTrue(Files.readString(dir.resolve(GenAiPerfExport.CSV_FILE)).contains("Request Goodput (per sec),"));
    }

    @Test
    void serverScenarioMissesSlosTighterThanTheServersTokenDelay(@TempDir Path dir) throws Exception {
        // Every token takes at least 30 ms to come, so TTFT and TPOT are both >= 30 ms: a 5 ms SLO cannot hold.
        try (FakeSseServer server = new FakeSseServer(30)) {
            String out = run("--url", server.url(), "--scenario", "server", "--request-rate", "100",
                    "--num-requests", "6", "--output-tokens-mean", "3", "--ttft-slo", "5", "--tpot-slo", "5",
                    "--output-dir", dir.toString(), "--no-progress");
            assertTrue(out.contains("SLOs NOT MET (p99 TTFT and p99 TPOT over their SLOs)"), out);
        }
        JsonNode slo = summary(dir).path("slo");
        assertFalse(slo.path("met").asBoolean());
        assertFalse(slo.path("ttft_met").asBoolean());
        assertFalse(slo.path("tpot_met").asBoolean());
        assertTrue(slo.path("ttft_p99_ms").asDouble() >= 30);
        assertTrue(slo.path("tpot_p99_ms").asDouble() >= 5);
        assertEquals(0, slo.path("good_request_count").asInt());
        assertEquals(0.0, summary(dir).path("request_goodput").path("avg").asDouble());
    }

    @Test
    void scenarioFlagsAreChecked() {
        String[][] bad = {
                {"--scenario", "offline", "--concurrency", "4"},
                {"--scenario", "offline", "--duration", "5"},
                {"--scenario", "server", "--ttft-slo", "100"},
                {"--scenario", "server", "--request-rate", "5"},
                {"--scenario", "batch"},
                {"--ttft-slo", "-1"},
        };
        for (String[] args : bad) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertEquals(2, Main.run(args, new PrintStream(new ByteArrayOutputStream()), new PrintStream(err)),
                    String.join(" ", args));
        }
    }

    private static int runStatus(String... args) {
        return Main.run(args, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    @Test
    void maxErrorsStopsARunAgainstADeadServer(@TempDir Path dir) throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again below: connections are refused
        }
        assertEquals(1, runStatus("--url", "http://127.0.0.1:" + port, "--model", "m", "--concurrency", "2",
                "--num-requests", "100000", "--max-errors", "5", "--output-dir", dir.toString(), "--no-progress"));
        JsonNode reqs = JSON.readTree(dir.resolve(GenAiPerfExport.PROFILE).toFile()).path("experiments").get(0)
                .path("requests");
        // The 5th failure stops the run; the other worker may have one more request in flight.
        assertTrue(reqs.size() >= 5 && reqs.size() <= 6, "requests sent: " + reqs.size());
        JsonNode summary = summary(dir);
        assertEquals(reqs.size(), summary.path("error_count").path("by_status").path("connection_error").asInt());
        assertEquals(5, summary.path("input_config").path("max_errors").asInt());
    }

    @Test
    void maxErrorsStopsAnOpenLoopRunOfFailingRequests(@TempDir Path dir) throws Exception {
        Path prompts = dir.resolve("prompts.jsonl");
        Files.writeString(prompts, "{\"text\":\"FAIL\"}\n");
        try (FakeSseServer server = new FakeSseServer(0)) {
            assertEquals(1, runStatus("--url", server.url(), "--model", "m", "--request-rate", "50",
                    "--num-requests", "100000", "--input-file", prompts.toString(), "--max-errors", "3",
                    "--output-dir", dir.resolve("out").toString(), "--no-progress"));
            assertTrue(server.requests.get() >= 3 && server.requests.get() < 100000, "sent " + server.requests.get());
        }
        assertTrue(summary(dir.resolve("out")).path("error_count").path("by_status").path("500").asInt() >= 3);
    }

    @Test
    void maxErrorsCountsWarmUpFailuresAndThenSendsNothingElse(@TempDir Path dir) throws Exception {
        Path prompts = dir.resolve("prompts.jsonl");
        Files.writeString(prompts, "{\"text\":\"FAIL\"}\n");
        try (FakeSseServer server = new FakeSseServer(0)) {
            assertEquals(1, runStatus("--url", server.url(), "--model", "m", "--warmup-requests", "10",
                    "--num-requests", "10", "--input-file", prompts.toString(), "--max-errors", "2",
                    "--output-dir", dir.toString(), "--no-progress"));
            assertEquals(2, server.requests.get(), "concurrency 1: the 2nd warm-up failure stops everything");
        }
    }
}
