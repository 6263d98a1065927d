package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real signal: {@code Main serve} in a child JVM (the demo model, drain timeout 1 s) gets
 * SIGTERM ({@link Process#destroy}) while 20 long streams are open. Every stream ends either
 * normally (a finish_reason, then [DONE]) or with a terminal {@code data: {"error":...}} event then
 * [DONE]; the process exits 0.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class GatewaySigtermTest {

    private static final int STREAMS = 20;

    @Test
    void sigtermEndsEveryOpenStreamWellFormedAndExitsZero(@TempDir Path tmp) throws Exception {
        Path log = tmp.resolve("serve.err");
        Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(), "--add-modules",
                "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "serve", "--port", "0", "--max-num-seqs", "32", "--threads", "1",
                "--drain-timeout", "1").redirectError(log.toFile()).start();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(20)).build();
        try {
            String base = listeningOn(p, log);
            String body = "{\"model\":\"nereid-demo\",\"prompt\":\"Hello\",\"stream\":true,\"ignore_eos\":true,"
                    + "\"max_tokens\":2000}";
            List<CompletableFuture<HttpResponse<InputStream>>> streams = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                streams.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(), HttpResponse.BodyHandlers.ofInputStream()));
            }
            // Headers come with a stream's first chunk: once all are here, all 20 are running in the engine.
            List<HttpResponse<InputStream>> open = new ArrayList<>();
            for (CompletableFuture<HttpResponse<InputStream>> f : streams) {
                HttpResponse<InputStream> r = f.get(60, TimeUnit.SECONDS);
                assertEquals(200, r.statusCode());
                open.add(r);
            }

            p.destroy();   // SIGTERM

            ObjectMapper json = new ObjectMapper();
            int finished = 0;
            int cutOff = 0;
            for (HttpResponse<InputStream> r : open) {
                String sse;
                try (InputStream in = r.body()) {
                    sse = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                assertTrue(sse.endsWith("data: [DONE]\n\n"), () -> tail(sse) + "\nserver log:\n" + read(log));
                String[] frames = sse.split("\n\n");
                JsonNode last = json.readTree(frames[frames.length - 2].substring("data: ".length()));
                if (last.has("error")) {
                    assertEquals("shutdown", last.get("error").get("code").asText(), tail(sse));
                    cutOff++;
                } else {
                    assertEquals("length", last.get("choices").get(0).get("finish_reason").asText(), tail(sse));
                    finished++;
                }
            }
            assertEquals(STREAMS, finished + cutOff);
            // 2,000 tokens each cannot all be generated within the 1 s drain: the error path ran.
            assertTrue(cutOff > 0, "every stream finished within the drain timeout");
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the server did not exit after SIGTERM");
            assertEquals(0, p.exitValue(), () -> read(log));
            assertTrue(read(log).contains("nereid serve: stopped"), () -> read(log));
        } finally {
            client.close();
            p.destroyForcibly();
        }
    }

    /** The base URL from the server's "listening on" line; its stdout is then drained in the background. */
    private static String listeningOn(Process p, Path log) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> url = CompletableFuture.supplyAsync(() -> {
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    if (line.startsWith("nereid serve: listening on ")) {
                        return line.substring("nereid serve: listening on ".length());
                    }
                }
                return null;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String base = url.get(60, TimeUnit.SECONDS);
        assertTrue(base != null && base.startsWith("http://127.0.0.1:"), () -> "no listening line; log:\n" + read(log));
        Thread.ofVirtual().start(() -> {
            try {
                out.transferTo(java.io.Writer.nullWriter());
            } catch (java.io.IOException ignored) {
                // the process ended
            }
        });
        return base;
    }

    private static String tail(String s) {
        return s.substring(Math.max(0, s.length() - 400));
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (java.io.IOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }
}
