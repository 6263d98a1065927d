package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * {@code bin/nereid bench}: parses the flags and hands them to {@link BenchRun}, which measures
 * (one run, a sweep of load levels, or a sweep of servers it starts) and writes the reports.
 * Ctrl-C during a run writes the report of what was recorded so far.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the bench; returns the process exit status (0 ok, 1 run failed, 2 bad arguments). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 1 && args[0].equals("--list-options")) {   // for `bin/nereid completion`
            out.print(listOptions());
            return 0;
        }
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                out.print(BenchConfig.usage() + ServeSweep.USAGE);
                return 0;
            }
        }
        ServeSweep.Parsed serve;
        BenchConfig config;
        try {
            serve = ServeSweep.parse(args);
            config = BenchConfig.parse(serve.rest());
        } catch (IllegalArgumentException e) {
            err.println("nereid bench: " + e.getMessage());
            err.print(BenchConfig.usage() + ServeSweep.USAGE);
            return 2;
        }
        try {
            return new BenchRun(config, serve.sweep(), out, err).run();
        } catch (IOException | IllegalArgumentException | java.io.UncheckedIOException e) {
            err.println("nereid bench: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        }
    }

    /**
     * Every option, one per line: its name, a tab and its value label (empty for a switch); {@code bin/nereid
     * completion} builds the bench's part of the completion script from it.
     */
    static String listOptions() {
        StringBuilder b = new StringBuilder();
        for (BenchConfig.Opt o : BenchConfig.OPTS) {
            b.append(o.name()).append('\t').append(o.label() == null ? "" : o.label()).append('\n');
        }
        for (String f : ServeSweep.FLAGS) {
            b.append(f).append("\tVALUE\n");
        }
        return b.append("--help\t\n").toString();
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
