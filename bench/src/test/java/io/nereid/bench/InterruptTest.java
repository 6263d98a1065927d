package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ctrl-C: the bench, run as its own process, gets SIGINT in the middle of a sweep's second level
 * and writes the partial report of that level and the sweep summary of what was measured.
 */
class InterruptTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void sigintWritesThePartialReportAndSweepSummary(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out");
        try (FakeSseServer server = new FakeSseServer(5)) {
            Process bench = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), Main.class.getName(), "--url", server.url(),
                    "--concurrency", "1,2", "--num-requests", "200", "--output-tokens-mean", "4",
                    "--output-dir", out.toString(), "--no-progress")
                    .redirectError(dir.resolve("stderr").toFile()).start();
            CountDownLatch firstLevelDone = new CountDownLatch(1);
            StringBuilder stdout = new StringBuilder();
            Thread reader = Thread.ofVirtual().start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(bench.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        synchronized (stdout) {
                            stdout.append(line).append('\n');
                        }
                        if (line.startsWith("reports: ")) {
                            firstLevelDone.countDown();
                        }
                    }
                } catch (java.io.IOException e) {
                    // the process ended
                }
            });
            try {
                // level 1 (200 requests of ~25 ms) ends; interrupt level 2 ten requests in
                assertTrue(firstLevelDone.await(60, TimeUnit.SECONDS), "first level did not finish");
                int seen = server.requests.get();
                while (server.requests.get() < seen + 10) {
                    Thread.sleep(20);
                }
                signal(bench, "INT");
                assertTrue(bench.waitFor(60, TimeUnit.SECONDS), "bench still running after SIGINT");
            } finally {
                bench.destroyForcibly();
            }
            reader.join(10_000);
            String stderr = Files.readString(dir.resolve("stderr"));
            assertEquals(130, bench.exitValue(), stderr);
            assertTrue(stderr.contains("interrupted; writing the partial report"), stderr);
            synchronized (stdout) {
                assertTrue(stdout.toString().contains("(partial)"), stdout::toString);
            }
        }
        JsonNode sweep = JSON.readTree(out.resolve("sweep.json").toFile());
        assertTrue(sweep.path("title").asText().endsWith("(partial)"), sweep::toString);
        assertEquals(2, sweep.path("points").size());
        assertEquals(200, sweep.path("points").get(0).path("request_count").asInt());
        Path level = out.resolve("concurrency2");
        JsonNode summary = JSON.readTree(level.resolve(GenAiPerfExport.JSON_FILE).toFile());
        int count = summary.path("request_count").path("avg").asInt();
        assertTrue(count >= 8 && count < 200, "requests recorded before the interrupt: " + count);
        assertEquals(count, sweep.path("points").get(1).path("request_count").asInt());
        assertEquals(count, JSON.readTree(level.resolve(GenAiPerfExport.PROFILE).toFile()).path("experiments").get(0)
                .path("requests").size());
        assertTrue(Files.readString(level.resolve("report.html")).contains("(partial)"));
    }

    private static void signal(Process p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, kill.exitValue());
    }
}
