package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code bin/nereid bench}: parses the flags, runs one measurement (or one per concurrency of a
 * sweep) and writes the reports. Ctrl-C during a run writes the report of what was recorded so far.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the bench; returns the process exit status (0 ok, 1 run failed, 2 bad arguments). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                out.print(BenchConfig.USAGE);
                return 0;
            }
        }
        BenchConfig config;
        try {
            config = BenchConfig.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("nereid bench: " + e.getMessage());
            err.print(BenchConfig.USAGE);
            return 2;
        }
        try {
            if (config.model() == null) {
                config = config.withModel(firstModel(config));
            }
            if (config.concurrencies().size() <= 1) {
                measure(config, 0, out, err, true);
                return 0;
            }
            List<HtmlReport.SweepPoint> points = new ArrayList<>();
            for (int level = 0; level < config.concurrencies().size(); level++) {
                int c = config.concurrencies().get(level);
                BenchConfig point = config.withConcurrency(c, config.outputDir().resolve("concurrency" + c));
                points.add(new HtmlReport.SweepPoint("concurrency " + c, measure(point, level, out, err, false)));
            }
            Files.writeString(config.outputDir().resolve("sweep.html"),
                    HtmlReport.renderSweep("nereid bench sweep: " + config.model(), points));
            out.println("sweep report: " + config.outputDir().resolve("sweep.html"));
            return 0;
        } catch (IOException | IllegalArgumentException e) {
            err.println("nereid bench: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        }
    }

    /**
     * One measurement: run, then console table and files in {@code config.outputDir()}. {@code level}
     * is the sweep level (0 for a single run); each level sends its own prompts ({@link Workload}).
     */
    static RunMetrics measure(BenchConfig config, int level, PrintStream out, PrintStream err, boolean partialOnSigint)
            throws IOException, InterruptedException {
        String title = "nereid bench: " + config.model() + " @ " + config.url() + ", "
                + (config.offline() ? "offline scenario, " + config.numRequests() + " requests at once"
                : config.openLoop() ? ("server".equals(config.scenario()) ? "server scenario, " : "")
                + "request rate " + config.requestRate() + "/s (Poisson)"
                : "concurrency " + config.concurrencies().getFirst());
        GenAiPerfExport export = new GenAiPerfExport();
        AtomicBoolean finished = new AtomicBoolean();
        try (LoadGenerator generator = new LoadGenerator(config)) {
            BenchConfig cfg = config;
            Thread hook = new Thread(() -> {
                if (finished.compareAndSet(false, true)) {
                    err.println("\nnereid bench: interrupted; writing the partial report to " + cfg.outputDir());
                    try {
                        write(cfg, title + " (partial)", export, generator.recorded(), out);
                    } catch (IOException e) {
                        err.println("nereid bench: partial report: " + e.getMessage());
                    }
                }
            }, "bench-partial-report");
            if (partialOnSigint) {
                Runtime.getRuntime().addShutdownHook(hook);
            }
            AtomicInteger done = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            long start = System.nanoTime();
            java.util.concurrent.atomic.AtomicLong lastPrint = new java.util.concurrent.atomic.AtomicLong(start);
            String total = config.durationS() > 0 ? "(" + config.durationS() + " s)" : Integer.toString(config.numRequests());
            List<RecordedRequest> recorded = generator.run(new Workload(config, level), r -> {
                int d = done.incrementAndGet();
                int f = r.ok() ? failed.get() : failed.incrementAndGet();
                long now = System.nanoTime();
                long last = lastPrint.get();
                // At most five updates a second: the line is for people, not a log.
                if (config.progress() && now - last >= 200_000_000L && lastPrint.compareAndSet(last, now)) {
                    synchronized (err) {
                        err.printf("\r[bench] %d/%s requests, %d failed, %.1f s", d, total, f,
                                (System.nanoTime() - start) / 1e9);
                    }
                }
            });
            if (config.progress()) {
                err.printf("\r[bench] %d requests, %d failed, %.1f s%n", done.get(), failed.get(),
                        (System.nanoTime() - start) / 1e9);
            }
            if (!finished.compareAndSet(false, true)) {
                return RunMetrics.of(recorded); // the hook is writing the partial report
            }
            if (partialOnSigint) {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            if (generator.stoppedEarly()) {
                write(config, title + " (stopped: --max-errors " + config.maxErrors() + ")", export, recorded, out);
                throw new IOException("stopped after " + config.maxErrors() + " failed requests (--max-errors "
                        + config.maxErrors() + "); partial report in " + config.outputDir());
            }
            return write(config, title, export, recorded, out);
        }
    }

    private static RunMetrics write(BenchConfig config, String title, GenAiPerfExport export,
                                    List<RecordedRequest> recorded, PrintStream out) throws IOException {
        RunMetrics metrics = RunMetrics.of(recorded);
        export.writeAll(config.outputDir(), config, recorded, metrics);
        Files.writeString(config.outputDir().resolve("report.html"), HtmlReport.render(title, metrics,
                SloReport.of(metrics, config)));
        out.print(ConsoleTable.render(title, metrics, SloReport.of(metrics, config)));
        out.println("reports: " + config.outputDir().toAbsolutePath());
        return metrics;
    }

    /** The first model the server lists, for a run without --model. */
    static String firstModel(BenchConfig config) throws IOException, InterruptedException {
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(config.url() + "/v1/models")).GET();
            if (config.apiKey() != null && !config.apiKey().isEmpty()) {
                b.header("Authorization", "Bearer " + config.apiKey());
            }
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode data = new ObjectMapper().readTree(r.body()).path("data");
            if (r.statusCode() != 200 || data.isEmpty()) {
                throw new IOException(config.url() + "/v1/models: no model listed (HTTP " + r.statusCode()
                        + "); pass --model");
            }
            return data.get(0).path("id").asText();
        } catch (java.net.ConnectException e) {
            throw new IOException(config.url() + ": cannot connect (" + e.getMessage() + ")", e);
        }
    }
}
