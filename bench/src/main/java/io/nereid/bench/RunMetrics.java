package io.nereid.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * A run's metrics, computed from its recorded requests the way GenAI-Perf computes them: per-request
 * metrics over the successful requests with content ({@link RequestMetrics}), then
 * <pre>
 *   duration                = last content event of any request − first send
 *   output token throughput = Σ OSL / duration
 *   request throughput      = successful requests / duration
 * </pre>
 * Failed requests (HTTP errors, error events mid-stream, timeouts) count only in {@link #errors}.
 * Immutable; build it once the run is over (or interrupted: it works on any prefix).
 *
 * @param sent       requests recorded (warm-up excluded)
 * @param errors     failed requests by {@link RecordedRequest#errorKey()}
 * @param inputTokenSource  where ISL came from: {@code "/tokenize"} (the server's tokenizer), {@code "usage"}
 *                          (the server's reported prompt_tokens) or {@code "unknown"} (neither)
 * @param outputTokenSource where OSL came from: {@code "usage"} (completion_tokens) or {@code "content events"}
 */
public record RunMetrics(int sent, List<RequestMetrics> requests, Map<String, Integer> errors, double durationS,
                         Statistics ttftMs, Statistics ttstMs, Statistics latencyMs, Statistics itlMs,
                         Statistics tpsPerUser, Statistics outputTokens, Statistics inputTokens,
                         double outputTokenThroughput, double requestThroughput, String inputTokenSource,
                         String outputTokenSource) {
    public static final String TOKENIZE = "/tokenize";

    /** The metrics with token counts from the server's usage (or content events without it). */
    public static RunMetrics of(List<RecordedRequest> recorded) {
        return of(recorded, false);
    }

    /**
     * The metrics; {@code tokenized}: the requests' input tokens were counted by the server's
     * {@code /tokenize} ({@link ServerTokenizer#withInputCounts}) rather than taken from usage.
     */
    public static RunMetrics of(List<RecordedRequest> recorded, boolean tokenized) {
        List<RequestMetrics> ok = new ArrayList<>();
        Map<String, Integer> errors = new TreeMap<>();
        for (RecordedRequest r : recorded) {
            String key = r.errorKey();
            if (key != null) {
                errors.merge(key, 1, Integer::sum);
                continue;
            }
            RequestMetrics m = RequestMetrics.of(r);
            if (m != null) {
                ok.add(m);
            }
        }
        long firstSend = Long.MAX_VALUE;
        long lastResponse = Long.MIN_VALUE;
        long totalOutput = 0;
        boolean allUsage = !ok.isEmpty();
        boolean allInputs = !ok.isEmpty();
        for (RequestMetrics m : ok) {
            firstSend = Math.min(firstSend, m.sendNs());
            lastResponse = Math.max(lastResponse, m.lastResponseNs());
            totalOutput += m.outputTokens();
            allUsage &= m.usageReported();
            allInputs &= m.inputTokens() >= 0;
        }
        double duration = ok.isEmpty() ? Double.NaN : (lastResponse - firstSend) / 1e9;
        double outputThroughput = ok.isEmpty() || duration <= 0 ? Double.NaN : totalOutput / duration;
        double requestThroughput = ok.isEmpty() || duration <= 0 ? Double.NaN : ok.size() / duration;
        return new RunMetrics(recorded.size(), List.copyOf(ok), Map.copyOf(errors), duration,
                stats(ok, m -> m.ttftNs() / 1e6, m -> true),
                stats(ok, m -> m.ttstNs() / 1e6, m -> m.ttstNs() >= 0),
                stats(ok, m -> m.latencyNs() / 1e6, m -> true),
                stats(ok, m -> m.itlNs() / 1e6, m -> m.itlNs() >= 0),
                stats(ok, RequestMetrics::tpsPerUser, m -> !Double.isNaN(m.tpsPerUser())),
                stats(ok, RequestMetrics::outputTokens, m -> true),
                stats(ok, RequestMetrics::inputTokens, m -> m.inputTokens() >= 0),
                outputThroughput, requestThroughput, tokenized ? TOKENIZE : allInputs ? "usage" : "unknown",
                allUsage ? "usage" : "content events");
    }

    private static Statistics stats(List<RequestMetrics> ms, ToDoubleFunction<RequestMetrics> value,
                                    java.util.function.Predicate<RequestMetrics> defined) {
        return Statistics.of(ms.stream().filter(defined).mapToDouble(value).toArray());
    }

    public int requestCount() {
        return requests.size();
    }

    public int errorCount() {
        return errors.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** GenAI-Perf's per-request metrics in its display order: name, unit, statistics. */
    public List<Metric> requestMetrics() {
        return List.of(
                new Metric("time_to_first_token", "ms", ttftMs),
                new Metric("time_to_second_token", "ms", ttstMs),
                new Metric("request_latency", "ms", latencyMs),
                new Metric("inter_token_latency", "ms", itlMs),
                new Metric("output_token_throughput_per_user", "tokens/sec/user", tpsPerUser),
                new Metric("output_sequence_length", "tokens", outputTokens),
                new Metric("input_sequence_length", "tokens", inputTokens));
    }

    /** One named metric with its unit, e.g. {@code time_to_first_token} in ms. */
    public record Metric(String name, String unit, Statistics stats) {
        /** GenAI-Perf's label: {@code time_to_first_token} → {@code Time To First Token}. */
        public String title() {
            StringBuilder b = new StringBuilder();
            for (String w : name.split("_")) {
                if (!b.isEmpty()) {
                    b.append(' ');
                }
                b.append(Character.toUpperCase(w.charAt(0))).append(w.substring(1));
            }
            return b.toString();
        }
    }
}
