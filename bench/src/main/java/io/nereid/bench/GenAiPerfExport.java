package io.nereid.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a run in GenAI-Perf's file layouts:
 * <ul>
 *   <li>{@code profile_export.json}: perf_analyzer's raw export, one experiment with every request's
 *       send timestamp, payload, each response's arrival timestamp and raw SSE line (plus our
 *       {@code status}/{@code error}); timestamps are epoch nanoseconds.</li>
 *   <li>{@code profile_export_genai_perf.json}: {@code {metric: {unit, avg, p1 … p99, min, max, std}}}
 *       for every metric, then {@code input_config}.</li>
 *   <li>{@code profile_export_genai_perf.csv}: the request-metrics table
 *       ({@code Metric,avg,min,max,p99,p95,p90,p75,p50,p25}, units in brackets except tokens), a blank
 *       line, then the system metrics ({@code Metric,Value}).</li>
 * </ul>
 * Stateless apart from the clock offset fixed at construction; call from one thread.
 */
public final class GenAiPerfExport {
    public static final String PROFILE = "profile_export.json";
    public static final String JSON_FILE = "profile_export_genai_perf.json";
    public static final String CSV_FILE = "profile_export_genai_perf.csv";
    static final List<String> CSV_STATS = List.of("avg", "min", "max", "p99", "p95", "p90", "p75", "p50", "p25");

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** Converts {@code nanoTime} to epoch nanoseconds (GenAI-Perf's timestamps are wall-clock). */
    private final long epochOffsetNs;

    public GenAiPerfExport() {
        Instant now = Instant.now();
        epochOffsetNs = now.getEpochSecond() * 1_000_000_000L + now.getNano() - System.nanoTime();
    }

    public void writeAll(Path dir, BenchConfig config, List<RecordedRequest> recorded, RunMetrics metrics)
            throws IOException {
        Files.createDirectories(dir);
        JSON.writeValue(dir.resolve(PROFILE).toFile(), profile(config, recorded));
        JSON.writeValue(dir.resolve(JSON_FILE).toFile(), summary(config, metrics));
        Files.writeString(dir.resolve(CSV_FILE), csv(metrics, SloReport.of(metrics, config)));
    }

    Map<String, Object> profile(BenchConfig config, List<RecordedRequest> recorded) {
        List<Map<String, Object>> requests = new ArrayList<>();
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (RecordedRequest r : recorded) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("timestamp", epochOffsetNs + r.sendNs());
            m.put("request_inputs", Map.of("payload", r.payload()));
            List<Long> times = new ArrayList<>();
            List<Map<String, String>> outputs = new ArrayList<>();
            for (Chunk c : r.chunks()) {
                times.add(epochOffsetNs + c.arrivalNs());
                outputs.add(Map.of("response", "data: " + c.data() + "\n\n"));
            }
            m.put("response_timestamps", times);
            m.put("response_outputs", outputs);
            m.put("status", r.status());
            m.put("error", r.error());
            requests.add(m);
            first = Math.min(first, r.sendNs());
            last = Math.max(last, r.endNs() >= 0 ? r.endNs() : r.sendNs());
        }
        Map<String, Object> experiment = new LinkedHashMap<>();
        experiment.put("experiment", config.offline()
                ? Map.of("mode", "offline", "value", config.numRequests())
                : config.openLoop()
                ? Map.of("mode", "request_rate", "value", config.requestRate())
                : Map.of("mode", "concurrency", "value", config.concurrencies().getFirst()));
        experiment.put("requests", requests);
        experiment.put("window_boundaries", recorded.isEmpty() ? List.of()
                : List.of(epochOffsetNs + first, epochOffsetNs + last));
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("experiments", List.of(experiment));
        root.put("version", "nereid-bench");
        root.put("service_kind", "openai");
        root.put("endpoint", LoadGenerator.path(config).substring(1));
        return root;
    }

    static Map<String, Object> summary(BenchConfig config, RunMetrics metrics) {
        Map<String, Object> root = new LinkedHashMap<>();
        for (RunMetrics.Metric m : metrics.requestMetrics()) {
            root.put(m.name(), m.stats().toGenAiPerf(m.unit()));
        }
        root.put("output_token_throughput", Map.of("unit", "tokens/sec", "avg", metrics.outputTokenThroughput()));
        root.put("request_throughput", Map.of("unit", "requests/sec", "avg", metrics.requestThroughput()));
        SloReport slo = SloReport.of(metrics, config);
        if (slo != null) {
            root.put("request_goodput", Map.of("unit", "requests/sec", "avg", slo.goodput()));
        }
        root.put("request_count", Map.of("unit", "count", "avg", metrics.requestCount()));
        root.put("error_count", Map.of("unit", "count", "avg", metrics.errorCount(), "by_status", metrics.errors()));
        Map<String, Object> input = new LinkedHashMap<>();
        input.put("url", config.url());
        input.put("model", config.model());
        input.put("endpoint_type", config.endpoint());
        input.put("streaming", true);
        input.put("scenario", config.scenario());
        if (config.offline()) {
            input.put("offline", true);
        } else if (config.openLoop()) {
            input.put("request_rate", config.requestRate());
        } else {
            input.put("concurrency", config.concurrencies().getFirst());
        }
        input.put("request_count", config.numRequests());
        input.put("measurement_duration_s", config.durationS());
        input.put("warmup_request_count", config.warmupRequests());
        input.put("max_errors", config.maxErrors());
        input.put("synthetic_input_tokens_mean", config.inputTokensMean());
        input.put("synthetic_input_tokens_stddev", config.inputTokensStddev());
        input.put("output_tokens_mean", config.outputTokensMean());
        input.put("output_tokens_stddev", config.outputTokensStddev());
        input.put("shared_prefix_tokens", config.sharedPrefixTokens());
        input.put("random_seed", config.seed());
        input.put("input_file", config.inputFile() == null ? null : config.inputFile().toString());
        input.put("input_token_count_source", metrics.inputTokenSource());
        input.put("output_token_count_source", metrics.outputTokenSource());
        if (slo != null) {
            Map<String, Object> goodput = new LinkedHashMap<>();
            if (config.ttftSloMs() > 0) {
                goodput.put("time_to_first_token", config.ttftSloMs());
            }
            if (config.tpotSloMs() > 0) {
                goodput.put("inter_token_latency", config.tpotSloMs());
            }
            input.put("goodput", goodput);
            root.put("slo", slo.toJson());
        }
        root.put("input_config", input);
        return root;
    }

    static String csv(RunMetrics metrics) {
        return csv(metrics, null);
    }

    static String csv(RunMetrics metrics, SloReport slo) {
        StringBuilder b = new StringBuilder("Metric," + String.join(",", CSV_STATS) + "\r\n");
        for (RunMetrics.Metric m : metrics.requestMetrics()) {
            b.append(m.title()).append(m.unit().equals("tokens") ? "" : " (" + m.unit() + ")");
            for (String s : CSV_STATS) {
                b.append(',').append(quoted(String.format(Locale.ROOT, "%,.2f", m.stats().get(s))));
            }
            b.append("\r\n");
        }
        b.append("\r\nMetric,Value\r\n");
        b.append("Output Token Throughput (tokens/sec),").append(fmt(metrics.outputTokenThroughput())).append("\r\n");
        b.append("Request Throughput (per sec),").append(fmt(metrics.requestThroughput())).append("\r\n");
        if (slo != null) {
            b.append("Request Goodput (per sec),").append(fmt(slo.goodput())).append("\r\n");
        }
        b.append("Request Count (count),").append(fmt(metrics.requestCount())).append("\r\n");
        return b.toString();
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** Python's csv module quotes a field only when it holds the delimiter (e.g. "1,234.50"). */
    private static String quoted(String field) {
        return field.contains(",") ? '"' + field + '"' : field;
    }
}
