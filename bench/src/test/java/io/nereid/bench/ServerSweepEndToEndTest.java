package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Model Analyzer style sweep against real Nereid servers: the bench starts one per
 * configuration (the gateway's Main from the test classpath, as bin/nereid serve runs it) on
 * stories260K, measures two concurrencies against each, stops it, and names the best point.
 */
class ServerSweepEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** {@code ../shared/fixtures/models/stories260K.gguf}; fails loudly when the fixtures are missing. */
    private static Path stories260K() {
        Path p = Path.of("").toAbsolutePath().getParent().resolveSibling("shared").resolve("fixtures/models/stories260K.gguf");
        assertTrue(Files.exists(p), "fixture missing: " + p);
        return p;
    }

    /** The serve command: this JVM's java, the engine's flags, the test classpath (with the gateway). */
    private static String serveCommand() {
        return Path.of(System.getProperty("java.home"), "bin", "java")
                + " --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -cp "
                + System.getProperty("java.class.path") + " io.nereid.gateway.Main serve";
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void theSameWorkloadRunsOverTritonsGenerateStreamAndGrpcModelStreamInfer(@TempDir Path dir) throws Exception {
        for (String endpoint : java.util.List.of("kserve-generate", "grpc-stream")) {
            Path out = dir.resolve(endpoint);
            ByteArrayOutputStream console = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int rc = Main.run(new String[] {"--serve-command", serveCommand(), "--serve-model", stories260K().toString(),
                    "--serve", "--threads 1", "--max-num-seqs", "4", "--concurrency", "2", "--endpoint", endpoint,
                    "--num-requests", "6", "--input-tokens-mean", "12", "--output-tokens-mean", "6",
                    "--output-dir", out.toString(), "--no-progress"},
                    new PrintStream(console, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
            assertEquals(0, rc, () -> console.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
            JsonNode point = JSON.readTree(out.resolve("sweep.json").toFile()).path("points").get(0);
            assertEquals(6, point.path("request_count").asInt(), point::toString);
            assertEquals(0, point.path("error_count").asInt(), point::toString);
            assertTrue(point.path("output_token_throughput").asDouble() > 0, point::toString);
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void sweepsTwoServerConfigurationsAndNamesTheBest(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Main.run(new String[] {"--serve-command", serveCommand(), "--serve-model", stories260K().toString(),
                "--serve", "--chat-template chatml --threads 1", "--max-num-seqs", "1,4", "--concurrency", "1,4",
                "--num-requests", "8", "--input-tokens-mean", "12", "--output-tokens-mean", "8",
                "--ttft-slo", "60000", "--tpot-slo", "60000", "--output-dir", dir.toString(), "--no-progress"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String console = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, () -> console + err.toString(StandardCharsets.UTF_8));

        JsonNode sweep = JSON.readTree(dir.resolve("sweep.json").toFile());
        JsonNode points = sweep.path("points");
        assertEquals(4, points.size(), sweep::toString);
        // Hand check: every point meets 60 s SLOs, so the best is the highest throughput (first on a tie).
        JsonNode expected = null;
        for (JsonNode p : points) {
            assertEquals(8, p.path("request_count").asInt());
            assertEquals(0, p.path("error_count").asInt());
            assertTrue(p.path("slo_met").asBoolean(), p::toString);
            assertTrue(p.path("time_to_first_token_p99_ms").asDouble() <= 60000);
            if (expected == null || p.path("output_token_throughput").asDouble()
                    > expected.path("output_token_throughput").asDouble()) {
                expected = p;
            }
        }
        assertNotNull(expected);
        JsonNode best = sweep.path("best");
        assertEquals(expected.path("config").asText(), best.path("config").asText());
        assertEquals(expected.path("load").asText(), best.path("load").asText());
        assertTrue(console.contains("Best configuration: " + expected.path("config").asText() + ", "
                + expected.path("load").asText() + ": "), console);
        assertTrue(Files.readString(dir.resolve("sweep.html")).contains("Best configuration: "
                + expected.path("config").asText()));

        for (String server : new String[] {"seqs1", "seqs4"}) {
            for (String level : new String[] {"concurrency1", "concurrency4"}) {
                JsonNode summary = JSON.readTree(dir.resolve(server).resolve(level).resolve(GenAiPerfExport.JSON_FILE).toFile());
                assertEquals(8, summary.path("request_count").path("avg").asInt());
                assertEquals(8.0, summary.path("output_sequence_length").path("avg").asDouble());
                assertEquals("/tokenize", summary.path("input_config").path("input_token_count_source").asText());
            }
            String log = Files.readString(dir.resolve(server).resolve("server.log"));
            assertTrue(log.contains("listening on http://127.0.0.1:"), log);
            assertTrue(log.contains("nereid serve: stopped"), "stopped with SIGTERM and drained: " + log);
        }
    }
}
