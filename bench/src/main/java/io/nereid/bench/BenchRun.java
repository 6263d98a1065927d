package io.nereid.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code bin/nereid bench} invocation: every server configuration (one, the {@code --url}
 * server, unless a {@link ServeSweep} starts them) times every load level, each level measured
 * and written to its own directory, then the sweep summary ({@link SweepReport}) when there was
 * more than one point or the bench started the servers.
 * <p>
 * Ctrl-C (or SIGTERM) runs the shutdown hook {@link #run} installs: it writes the level in progress
 * as a partial report (what has been recorded so far, titled "(partial)"), the sweep summary of the
 * points measured so far, and stops the server the bench started. The hook and the main thread
 * take turns on one lock, so a report is never written by both; once interrupted, the main thread
 * writes and starts nothing more. Lifecycle: one {@link #run} per instance, on one thread.
 */
final class BenchRun {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final BenchConfig config;
    private final ServeSweep serveSweep;
    private final PrintStream out;
    private final PrintStream err;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private final List<SweepPoint> points = new ArrayList<>();
    private boolean interrupted;
    private boolean finished;
    private Level current;
    private ServerProcess server;

    /** The level being measured: enough for the hook to write its partial report. */
    private record Level(BenchConfig config, String serverLabel, String title, LoadGenerator generator,
                         GenAiPerfExport export) {
    }

    BenchRun(BenchConfig config, ServeSweep serveSweep, PrintStream out, PrintStream err) {
        this.config = config;
        this.serveSweep = serveSweep;
        this.out = out;
        this.err = err;
    }

    /** Measures everything; returns the exit status (0 ok, 1 failed). */
    int run() throws IOException, InterruptedException {
        Thread hook = new Thread(this::interrupt, "bench-partial-report");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (serveSweep == null) {
                BenchConfig target = config.model() == null ? config.withTarget(config.url(), Main.firstModel(config),
                        config.outputDir()) : config;
                measureServer(target, "");
            } else {
                for (ServeSweep.Setup setup : serveSweep.setups()) {
                    if (!measureStartedServer(setup)) {
                        return 130;
                    }
                }
            }
            synchronized (lock) {
                if (interrupted) {
                    return 130;
                }
                finished = true;
                if (points.size() > 1 || serveSweep != null) {
                    writeSweep(title());
                }
            }
            return 0;
        } finally {
            synchronized (lock) {
                finished = true;
            }
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down: the hook runs
            }
        }
    }

    private String title() {
        return "nereid bench sweep: " + (config.model() == null ? "" : config.model() + ", ")
                + (serveSweep == null ? config.url() : "servers started by the bench")
                + ("server".equals(config.scenario()) ? ", server scenario (Poisson, SLOs at p99)" : "");
    }

    /** Starts the configuration's server, measures every level against it, stops it; false when interrupted. */
    private boolean measureStartedServer(ServeSweep.Setup setup) throws IOException, InterruptedException {
        Path dir = config.outputDir().resolve(setup.dirName());
        List<String> command = serveSweep.commandLine(setup);
        err.println("[bench] starting server (" + setup.label() + "): " + String.join(" ", command));
        ServerProcess started = ServerProcess.start(command, dir.resolve("server.log"), serveSweep.startTimeoutS());
        synchronized (lock) {
            if (interrupted) {
                started.close();
                return false;
            }
            server = started;
        }
        try {
            BenchConfig target = config.withTarget(started.url(), config.model(), dir);
            if (target.model() == null) {
                target = target.withTarget(started.url(), Main.firstModel(target), dir);
            }
            if (started.grpcAddress() != null && config.grpcTarget() == null) {
                target = target.withGrpcTarget(started.grpcAddress());
            }
            measureServer(target, setup.label());
        } finally {
            err.println("[bench] stopping server (" + setup.label() + ")");
            synchronized (lock) {
                server = null;
            }
            started.close();
        }
        return true;
    }

    /** Every load level against one server. */
    private void measureServer(BenchConfig target, String serverLabel) throws IOException, InterruptedException {
        ServerTokenizer tokenizer = ServerTokenizer.probe(target);
        try {
            int[] costs = tokenizer == null || target.inputFile() != null ? null : Workload.wordCosts(tokenizer);
            List<BenchConfig> levels = target.levels();
            for (int level = 0; level < levels.size(); level++) {
                measure(levels.get(level), serverLabel, level, tokenizer, costs);
            }
        } finally {
            if (tokenizer != null) {
                tokenizer.close();
            }
        }
    }

    /** One level: run it, count its input tokens, write its reports and record its point. */
    private void measure(BenchConfig level, String serverLabel, int index, ServerTokenizer tokenizer, int[] costs)
            throws IOException, InterruptedException {
        String title = "nereid bench: " + level.model() + " @ " + level.url() + ", "
                + (serverLabel.isEmpty() ? "" : serverLabel + ", ")
                + (level.offline() ? "offline scenario, " + level.numRequests() + " requests at once"
                : level.openLoop() ? ("server".equals(level.scenario()) ? "server scenario, " : "")
                + level.loadLabel() + " (Poisson)" : level.loadLabel());
        try (LoadGenerator generator = new LoadGenerator(level)) {
            synchronized (lock) {
                if (interrupted) {
                    return;
                }
                current = new Level(level, serverLabel, title, generator, new GenAiPerfExport());
            }
            List<RecordedRequest> recorded;
            java.util.Optional<SpeculationCounters> before = SpeculationCounters.scrape(level.url(), level.apiKey());
            try (ProgressLine progress = new ProgressLine(level, pointLabel(serverLabel, level), err)) {
                recorded = generator.run(new Workload(level, index, costs), r -> progress.done(r.ok()));
            }
            java.util.Optional<SpeculationCounters> speculation = before.flatMap(b ->
                    SpeculationCounters.scrape(level.url(), level.apiKey()).map(after -> after.since(b)));
            List<RecordedRequest> counted = tokenizer == null ? null : tokenizer.withInputCounts(recorded);
            synchronized (lock) {
                if (interrupted) {
                    return;
                }
                Level l = current;
                current = null;
                String t = generator.stoppedEarly() ? title + " (stopped: --max-errors " + level.maxErrors() + ")" : title;
                write(l, t, counted == null ? recorded : counted, counted != null);
                if (speculation.isPresent()) {
                    out.println(speculation.get().describe());
                    Files.writeString(level.outputDir().resolve("speculation.json"), speculation.get().json());
                }
            }
            if (generator.stoppedEarly()) {
                throw new IOException("stopped after " + level.maxErrors() + " failed requests (--max-errors "
                        + level.maxErrors() + "); partial report in " + level.outputDir());
            }
        }
    }

    private static String pointLabel(String serverLabel, BenchConfig level) {
        return serverLabel.isEmpty() ? level.loadLabel() : serverLabel + ", " + level.loadLabel();
    }

    /** Writes one level's files and console table and records its sweep point. Holds {@link #lock}. */
    private void write(Level l, String title, List<RecordedRequest> recorded, boolean tokenized) throws IOException {
        RunMetrics metrics = RunMetrics.of(recorded, tokenized);
        SloReport slo = SloReport.of(metrics, l.config());
        l.export().writeAll(l.config().outputDir(), l.config(), recorded, metrics);
        Files.writeString(l.config().outputDir().resolve("report.html"), HtmlReport.render(title, metrics, slo));
        out.print(ConsoleTable.render(title, metrics, slo));
        out.println("reports: " + l.config().outputDir().toAbsolutePath());
        points.add(new SweepPoint(l.serverLabel(), l.config().loadLabel(), metrics, slo));
    }

    /** Writes sweep.json and sweep.html and prints the summary. Holds {@link #lock}. */
    private void writeSweep(String title) throws IOException {
        SweepReport report = new SweepReport(title, points, config.ttftSloMs(), config.tpotSloMs());
        Files.createDirectories(config.outputDir());
        JSON.writeValue(config.outputDir().resolve("sweep.json").toFile(), report.json());
        Files.writeString(config.outputDir().resolve("sweep.html"), report.html());
        out.print(report.console());
        out.println("sweep report: " + config.outputDir().resolve("sweep.html").toAbsolutePath());
    }

    /** The shutdown hook: partial report of the level in progress, sweep summary so far, server stopped. */
    private void interrupt() {
        ServerProcess running;
        synchronized (lock) {
            if (finished) {
                return;
            }
            interrupted = true;
            running = server;
            server = null;
            err.println("\nnereid bench: interrupted; writing the partial report to " + config.outputDir());
            try {
                if (current != null) {
                    write(current, current.title() + " (partial)", current.generator().recorded(), false);
                }
                if (points.size() > 1 || (serveSweep != null && !points.isEmpty())) {
                    writeSweep(title() + " (partial)");
                }
            } catch (IOException | RuntimeException e) {
                err.println("nereid bench: partial report: " + e.getMessage());
            }
            out.flush();
        }
        try {
            if (running != null) {
                running.close();
            }
            ServerProcess.stopAll();   // e.g. one still loading its model when the signal came
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
