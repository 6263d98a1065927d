package io.nereid.gateway.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nereid.engine.api.EngineHealth;
import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.Usage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@code GET /metrics} page in the Prometheus text format (0.0.4). The {@code vllm:*} series
 * carry vLLM's names, types, buckets and {@code model_name} label so vLLM dashboards and the
 * Gateway API Inference Extension read them unchanged; they are written here by hand because
 * Micrometer's Prometheus registry turns {@code :} into {@code _}. What only Nereid measures
 * ({@code nereid_*}) goes through Micrometer and is appended. One instance per served model; the
 * server merges the models' pages into one ({@link #merge}) and adds the CPU time by thread group
 * ({@link ThreadCpuMetrics}).
 *
 * <p>Engine-wide gauges and counters are read from {@link EngineStats} at scrape time; request
 * histograms are fed by {@link #finished} and {@link #tokenGap}. Thread-safe: the observe methods
 * run on the engine thread, {@link #render} on an event loop.
 */
final class ServingMetrics {

    // vLLM v1's buckets (vllm/v1/metrics/loggers.py).
    private static final double[] TTFT = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
        7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
    private static final double[] ITL = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
        10.0, 20.0, 40.0, 80.0};
    private static final double[] LATENCY = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
        60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

    private final String model;
    private final String modelLabel;
    private final Histogram ttft = new Histogram(TTFT);
    private final Histogram itl = new Histogram(ITL);
    private final Histogram e2e = new Histogram(LATENCY);
    private final Histogram queue = new Histogram(LATENCY);
    private final Histogram prefill = new Histogram(LATENCY);
    private final Histogram decode = new Histogram(LATENCY);
    private final Map<String, LongAdder> success = new ConcurrentHashMap<>();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Counter disconnects;
    private final Counter stalled;
    // Triton's counters for the same events (every engine request, whatever the protocol)
    private final LongAdder nvSuccess = new LongAdder();
    private final LongAdder nvFailure = new LongAdder();
    private final LongAdder nvRequestMicros = new LongAdder();
    private final LongAdder nvQueueMicros = new LongAdder();
    private final LongAdder nvComputeMicros = new LongAdder();

    ServingMetrics(String model) {
        this.model = model;
        this.modelLabel = "model_name=\"" + escape(model) + "\"";
        this.disconnects = Counter.builder("nereid.client.disconnects").tag("model_name", model)
                .description("Requests whose client went away before the response ended (engine request cancelled)")
                .register(registry);
        this.stalled = Counter.builder("nereid.stalled.streams").tag("model_name", model)
                .description("Streams dropped because the client read nothing for --stall-timeout"
                        + " (engine request cancelled)")
                .register(registry);
        for (String reason : new String[] {"stop", "length", "abort"}) {
            success.put(reason, new LongAdder());
        }
    }

    /** Engine thread: one choice ended. */
    void finished(FinishReason reason, Usage u) {
        success.computeIfAbsent(Exchange.finishReason(reason), k -> new LongAdder()).increment();
        if (reason == FinishReason.STOP || reason == FinishReason.LENGTH) {
            nvSuccess.increment();
            nvRequestMicros.add(u.totalNanos() / 1000);
            nvQueueMicros.add(u.queueNanos() / 1000);
            nvComputeMicros.add(Math.max(0, u.totalNanos() - u.queueNanos()) / 1000);
        } else {
            nvFailure.increment();
        }
        e2e.observe(u.totalNanos() / 1e9);
        queue.observe(u.queueNanos() / 1e9);
        if (u.firstTokenNanos() > 0) {
            ttft.observe(u.firstTokenNanos() / 1e9);
            prefill.observe(Math.max(0, u.firstTokenNanos() - u.queueNanos()) / 1e9);
            decode.observe(Math.max(0, u.totalNanos() - u.firstTokenNanos()) / 1e9);
        }
    }

    /** Engine thread: {@code tokens} tokens arrived {@code nanos} after the previous one of their choice. */
    void tokenGap(long nanos, int tokens) {
        for (int i = 0; i < tokens; i++) {
            itl.observe(nanos / 1e9 / tokens);
        }
    }

    void admissionRejected(String reason) {
        nvFailure.increment();
        Counter.builder("nereid.admission.rejections").tag("model_name", model).tag("reason", reason)
                .description("Requests the engine did not admit, by reason").register(registry).increment();
    }

    void clientDisconnected() {
        disconnects.increment();
    }

    void streamStalled() {
        stalled.increment();
    }

    /** The whole page for {@code stats} and {@code health}. */
    String render(EngineStats s, EngineHealth health, int blockSize, int numBlocks) {
        StringBuilder sb = new StringBuilder(8192);
        gauge(sb, "nereid_engine_alive", "1 while the engine thread runs; 0 once it stopped (after a failure: restart"
                + " the server).", health.alive() ? 1 : 0);
        gauge(sb, "vllm:num_requests_running", "Number of requests in model execution batches.", s.running());
        gauge(sb, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", s.waiting());
        gauge(sb, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", s.kvUsage());
        counter(sb, "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
                s.prefixQueryTokens());
        counter(sb, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
                s.prefixHitTokens());
        counter(sb, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", s.preemptions());
        counter(sb, "vllm:prompt_tokens", "Number of prefill tokens processed.", s.promptTokens());
        counter(sb, "vllm:generation_tokens", "Number of generation tokens processed.", s.generationTokens());
        EngineStats.Speculation sp = s.speculation();
        if (sp.enabled()) {   // as vLLM: only when speculative decoding is configured
            counter(sb, "vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", sp.drafts());
            counter(sb, "vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", sp.draftTokens());
            counter(sb, "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", sp.acceptedTokens());
            String total = "vllm:spec_decode_num_accepted_tokens_per_pos_total";
            sb.append("# HELP ").append(total).append(" Accepted tokens per draft position.\n")
                    .append("# TYPE ").append(total).append(" counter\n");
            long[] perPosition = sp.acceptedPerPosition();
            for (int pos = 0; pos < perPosition.length; pos++) {
                sb.append(total).append('{').append(modelLabel).append(",position=\"").append(pos).append("\"} ")
                        .append(num(perPosition[pos])).append('\n');
            }
        }
        sb.append("# HELP vllm:request_success_total Count of successfully processed requests.\n")
                .append("# TYPE vllm:request_success_total counter\n");
        success.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e ->
                sb.append("vllm:request_success_total{finished_reason=\"").append(e.getKey()).append("\",")
                        .append(modelLabel).append("} ").append(num(e.getValue().sum())).append('\n'));
        ttft.write(sb, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.");
        itl.write(sb, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.");
        e2e.write(sb, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.");
        queue.write(sb, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.");
        prefill.write(sb, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.");
        decode.write(sb, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.");
        sb.append("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
                .append("# TYPE vllm:cache_config_info gauge\n")
                .append("vllm:cache_config_info{block_size=\"").append(blockSize).append("\",num_gpu_blocks=\"")
                .append(numBlocks).append("\",").append(modelLabel).append("} 1.0\n");
        String triton = "{model=\"" + escape(model) + "\",version=\"" + KServeRoutes.VERSION + "\"} ";
        tritonCounter(sb, "nv_inference_request_success", "Number of successful inference requests, all batch sizes",
                triton, nvSuccess.sum());
        tritonCounter(sb, "nv_inference_request_failure", "Number of failed inference requests, all batch sizes",
                triton, nvFailure.sum());
        tritonCounter(sb, "nv_inference_count", "Number of inferences performed (does not include cached requests)",
                triton, nvSuccess.sum());
        tritonCounter(sb, "nv_inference_exec_count", "Number of model executions performed (engine steps)", triton,
                s.iterations());
        tritonCounter(sb, "nv_inference_request_duration_us", "Cumulative inference request duration in microseconds"
                + " (includes cached requests)", triton, nvRequestMicros.sum());
        tritonCounter(sb, "nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds"
                + " (includes cached requests)", triton, nvQueueMicros.sum());
        tritonCounter(sb, "nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in"
                + " microseconds (does not include cached requests)", triton, nvComputeMicros.sum());
        return sb.append(registry.scrape()).toString();
    }

    private void gauge(StringBuilder sb, String name, String help, double value) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(" gauge\n")
                .append(name).append('{').append(modelLabel).append("} ").append(num(value)).append('\n');
    }

    /** As Python's prometheus_client writes a counter: {@code _total} on the HELP, TYPE and sample lines. */
    private void counter(StringBuilder sb, String name, String help, double value) {
        String total = name + "_total";
        sb.append("# HELP ").append(total).append(' ').append(help).append('\n')
                .append("# TYPE ").append(total).append(" counter\n")
                .append(total).append('{').append(modelLabel).append("} ").append(num(value)).append('\n');
    }

    /** As Triton writes its counters: no {@code _total}, labels model and version. */
    private static void tritonCounter(StringBuilder sb, String name, String help, String labels, double value) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(" counter\n")
                .append(name).append(labels).append(num(value)).append('\n');
    }

    /**
     * One page of several: each metric family (a {@code # HELP} line, its {@code # TYPE} and its
     * samples) once, in the order families first appear, with the samples of every page that has it.
     */
    static String merge(List<String> pages) {
        if (pages.size() == 1) {
            return pages.getFirst();
        }
        final class Family {
            String help;
            String type;
            final List<String> samples = new ArrayList<>();
        }
        Map<String, Family> families = new LinkedHashMap<>();
        for (String page : pages) {
            Family current = null;
            for (String line : page.split("\n")) {
                boolean help = line.startsWith("# HELP ");
                if (help || line.startsWith("# TYPE ")) {
                    int end = line.indexOf(' ', 7);
                    current = families.computeIfAbsent(line.substring(7, end < 0 ? line.length() : end), n -> new Family());
                    if (help && current.help == null) {
                        current.help = line;
                    } else if (!help && current.type == null) {
                        current.type = line;
                    }
                } else if (current != null && !line.isEmpty() && !line.startsWith("#")) {
                    current.samples.add(line);
                }
            }
        }
        StringBuilder out = new StringBuilder();
        for (Family f : families.values()) {
            for (String l : new String[] {f.help, f.type}) {
                if (l != null) {
                    out.append(l).append('\n');
                }
            }
            f.samples.forEach(l -> out.append(l).append('\n'));
        }
        return out.toString();
    }

    static String num(double v) {
        return Double.isInfinite(v) ? (v > 0 ? "+Inf" : "-Inf") : Double.toString(v);
    }

    static String escape(String label) {
        return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** A Prometheus histogram with fixed upper bounds; {@code observe} is lock-free. */
    private final class Histogram {
        private final double[] bounds;
        private final LongAdder[] counts;   // per bucket, not cumulative; the last is +Inf
        private final DoubleAdder sum = new DoubleAdder();

        Histogram(double[] bounds) {
            this.bounds = bounds;
            this.counts = new LongAdder[bounds.length + 1];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = new LongAdder();
            }
        }

        void observe(double v) {
            int i = 0;
            while (i < bounds.length && v > bounds[i]) {
                i++;
            }
            counts[i].increment();
            sum.add(v);
        }

        void write(StringBuilder sb, String name, String help) {
            sb.append("# HELP ").append(name).append(' ').append(help).append('\n')
                    .append("# TYPE ").append(name).append(" histogram\n");
            long cumulative = 0;
            for (int i = 0; i < counts.length; i++) {
                cumulative += counts[i].sum();
                String le = i < bounds.length ? num(bounds[i]) : "+Inf";
                sb.append(name).append("_bucket{le=\"").append(le).append("\",").append(modelLabel).append("} ")
                        .append(num(cumulative)).append('\n');
            }
            sb.append(name).append("_count{").append(modelLabel).append("} ").append(num(cumulative)).append('\n');
            sb.append(name).append("_sum{").append(modelLabel).append("} ").append(num(sum.sum())).append('\n');
        }
    }
}
