package io.nereid.bench;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/**
 * Everything one {@code bin/nereid bench} run needs, built from its flags in one place
 * ({@link #parse}). Load is either closed loop ({@code --concurrency N}: N requests always in flight)
 * or open loop ({@code --request-rate R}: Poisson arrivals at R requests/s from a fixed seed).
 * Several comma-separated concurrencies ({@code --concurrency 1,4,16}) or rates
 * ({@code --request-rate 2,4,8}) make a sweep: one load level each ({@link #levels()}), measured in
 * the order given, each in its own subdirectory ({@link #levelDirName()}). A level is listed once.
 * <p>
 * MLPerf scenarios: {@code --scenario offline} sends all {@code --num-requests} at once (no
 * concurrency, no rate, no sweep); {@code --scenario server} is the Poisson open loop at
 * {@code --request-rate} (each rate of a list on its own) with latency constraints
 * ({@code --ttft-slo}, {@code --tpot-slo}, milliseconds) checked at the 99th percentile
 * ({@link SloReport}). SLOs may also be given without a scenario, for goodput alone.
 *
 * @param concurrencies    closed-loop levels; empty for an open-loop or offline run
 * @param requestRates     open-loop levels (requests/s, each > 0); empty for a closed-loop or offline run
 * @param numRequests      requests to measure; ignored when {@code durationS > 0}
 * @param durationS        measure for this long (seconds) instead of a request count; 0 = off
 * @param outputTokensMean 0 = let the server decide (no max_tokens/min_tokens/ignore_eos sent)
 * @param timeoutS         a request that has not finished after this long counts as a timeout
 * @param scenario         null (plain concurrency / request-rate run), "offline" or "server"
 * @param ttftSloMs        time-to-first-token SLO in ms; 0 = none
 * @param tpotSloMs        time-per-output-token SLO in ms (per request: (e2e − TTFT) / (OSL − 1),
 *                         GenAI-Perf's inter-token latency); 0 = none
 * @param maxErrors        stop sending after this many failed requests (warm-up included); 0 = no limit
 * @param extraInputs      a JSON object whose fields every request body gets (GenAI-Perf's --extra-inputs); null for none
 * @param grpcTarget       {@code HOST:PORT} of the KServe v2 gRPC service ({@code --endpoint grpc-stream}); null:
 *                         the {@code --url} host, port 8001
 * @param workload         {@code synthetic} (random words) or {@code input-grounded} (a passage the model is asked
 *                         to repeat, greedy: the output copies the input, as in summarising or editing, the case
 *                         n-gram speculation is built for); see {@link Workload}
 */
public record BenchConfig(String url, String model, String endpoint, String apiKey, List<Integer> concurrencies,
                          List<Double> requestRates, int numRequests, double durationS, int warmupRequests,
                          int inputTokensMean, int inputTokensStddev, int outputTokensMean,
                          int outputTokensStddev, int sharedPrefixTokens, long seed, Path inputFile,
                          Path outputDir, double timeoutS, boolean progress, String scenario,
                          double ttftSloMs, double tpotSloMs, int maxErrors, String extraInputs, String grpcTarget,
                          String workload) {

    /** The prompts' kinds ({@code --workload}). */
    static final List<String> WORKLOADS = List.of("synthetic", "input-grounded");

    public BenchConfig {
        if (!WORKLOADS.contains(workload)) {
            throw new IllegalArgumentException("--workload: expected synthetic or input-grounded, got '" + workload + "'");
        }
        if (workload.equals("input-grounded") && inputFile != null) { // the parameter: fields are not set yet
            throw new IllegalArgumentException("--workload input-grounded builds its own prompts: --input-file does not"
                    + " apply");
        }
        if (!List.of("chat", "completions", "responses", "kserve-generate", "grpc-stream").contains(endpoint)) {
            throw new IllegalArgumentException("--endpoint: expected chat, completions, responses, kserve-generate or"
                    + " grpc-stream,"
                    + " got '" + endpoint + "'");
        }
        if (scenario != null && !scenario.equals("offline") && !scenario.equals("server")) {
            throw new IllegalArgumentException("--scenario: expected offline or server, got '" + scenario + "'");
        }
        if ("offline".equals(scenario)) {
            if (!requestRates.isEmpty() || !concurrencies.isEmpty()) {
                throw new IllegalArgumentException("--scenario offline sends every request at once:"
                        + " --concurrency and --request-rate do not apply");
            }
            if (durationS > 0) {
                throw new IllegalArgumentException("--scenario offline sends --num-requests at once: --duration does not apply");
            }
        }
        if ("server".equals(scenario)) {
            if (requestRates.isEmpty()) {
                throw new IllegalArgumentException("--scenario server needs --request-rate R (Poisson arrivals)");
            }
            if (ttftSloMs <= 0 && tpotSloMs <= 0) {
                throw new IllegalArgumentException("--scenario server needs a latency constraint: --ttft-slo and/or --tpot-slo");
            }
        }
        if (ttftSloMs < 0 || tpotSloMs < 0 || Double.isNaN(ttftSloMs) || Double.isNaN(tpotSloMs)) {
            throw new IllegalArgumentException("--ttft-slo/--tpot-slo: must be > 0 ms");
        }
        if (!requestRates.isEmpty() && !concurrencies.isEmpty()) {
            throw new IllegalArgumentException("--concurrency and --request-rate are exclusive (closed vs open loop)");
        }
        if (requestRates.isEmpty() && concurrencies.isEmpty() && !"offline".equals(scenario)) {
            throw new IllegalArgumentException("no load level: give --concurrency N or --request-rate R");
        }
        for (double r : requestRates) {
            if (!(r > 0) || Double.isInfinite(r)) {
                throw new IllegalArgumentException("--request-rate: must be > 0 requests/s, got " + r);
            }
        }
        for (int c : concurrencies) {
            if (c < 1) {
                throw new IllegalArgumentException("--concurrency: must be >= 1, got " + c);
            }
        }
        listedOnce("--request-rate", requestRates);
        listedOnce("--concurrency", concurrencies);
        if (numRequests < 1 && durationS <= 0) {
            throw new IllegalArgumentException("--num-requests: must be >= 1, got " + numRequests);
        }
        if (inputTokensMean < 1 || inputTokensStddev < 0 || outputTokensMean < 0 || outputTokensStddev < 0
                || sharedPrefixTokens < 0 || warmupRequests < 0) {
            throw new IllegalArgumentException("token counts: means must be >= 1 (output >= 0), stddevs and"
                    + " --shared-prefix-tokens/--warmup-requests >= 0");
        }
        if (maxErrors < 0) {
            throw new IllegalArgumentException("--max-errors: must be >= 0, got " + maxErrors);
        }
        if (timeoutS <= 0) {
            throw new IllegalArgumentException("--request-timeout: must be > 0, got " + timeoutS);
        }
        concurrencies = List.copyOf(concurrencies);
        requestRates = List.copyOf(requestRates);
    }

    /** Refuses a list with a value twice: two levels with one name would share a report directory and a label. */
    static void listedOnce(String flag, List<? extends Number> values) {
        if (new HashSet<>(values).size() != values.size()) {
            throw new IllegalArgumentException(flag + ": a value is listed twice in " + values);
        }
    }

    /** {@code --workload input-grounded}: prompts whose answer copies them. */
    public boolean inputGrounded() {
        return workload.equals("input-grounded");
    }

    public boolean openLoop() {
        return !requestRates.isEmpty();
    }

    /** The (first) Poisson rate in requests/s; 0 for a closed-loop or offline run. */
    public double requestRate() {
        return requestRates.isEmpty() ? 0 : requestRates.getFirst();
    }

    /** MLPerf's offline scenario: every request sent at once. */
    public boolean offline() {
        return "offline".equals(scenario);
    }

    /** Whether any latency SLO was given (goodput and the SLO verdict are reported then). */
    public boolean hasSlo() {
        return ttftSloMs > 0 || tpotSloMs > 0;
    }

    /**
     * The load levels to measure, in the order given: this configuration itself when it has one
     * level (its reports go to {@code outputDir}); otherwise one configuration per concurrency or rate,
     * reporting to {@code outputDir/}{@link #levelDirName()}.
     */
    public List<BenchConfig> levels() {
        if (concurrencies.size() + requestRates.size() <= 1) {
            return List.of(this);
        }
        List<BenchConfig> levels = new ArrayList<>();
        for (int c : concurrencies) {
            levels.add(withLevel(List.of(c), List.of()));
        }
        for (double r : requestRates) {
            levels.add(withLevel(List.of(), List.of(r)));
        }
        return levels;
    }

    private BenchConfig withLevel(List<Integer> c, List<Double> r) {
        BenchConfig level = new BenchConfig(url, model, endpoint, apiKey, c, r, numRequests, durationS, warmupRequests,
                inputTokensMean, inputTokensStddev, outputTokensMean, outputTokensStddev, sharedPrefixTokens, seed,
                inputFile, outputDir, timeoutS, progress, scenario, ttftSloMs, tpotSloMs, maxErrors, extraInputs, grpcTarget, workload);
        return level.withTarget(url, model, outputDir.resolve(level.levelDirName()));
    }

    /** This configuration against another server, model and report directory (a server sweep's configuration). */
    public BenchConfig withTarget(String u, String m, Path dir) {
        return new BenchConfig(u, m, endpoint, apiKey, concurrencies, requestRates, numRequests, durationS,
                warmupRequests, inputTokensMean, inputTokensStddev, outputTokensMean, outputTokensStddev,
                sharedPrefixTokens, seed, inputFile, dir, timeoutS, progress, scenario, ttftSloMs, tpotSloMs, maxErrors,
                extraInputs, grpcTarget, workload);
    }

    /** This configuration with gRPC at {@code target} (a server the bench started printed it). */
    public BenchConfig withGrpcTarget(String target) {
        return new BenchConfig(url, model, endpoint, apiKey, concurrencies, requestRates, numRequests, durationS,
                warmupRequests, inputTokensMean, inputTokensStddev, outputTokensMean, outputTokensStddev,
                sharedPrefixTokens, seed, inputFile, outputDir, timeoutS, progress, scenario, ttftSloMs, tpotSloMs,
                maxErrors, extraInputs, target, workload);
    }

    /** Where {@code --endpoint grpc-stream} connects: {@code --grpc-target}, else the {@code --url} host on 8001. */
    public String grpcAddress() {
        return grpcTarget != null ? grpcTarget : java.net.URI.create(url).getHost() + ":8001";
    }

    /**
     * The (first) load level's label for reports: {@code concurrency 4}, {@code request rate 2.5/s},
     * {@code offline 100 requests}. Distinct levels have distinct labels.
     */
    public String loadLabel() {
        return offline() ? "offline " + numRequests + " requests"
                : openLoop() ? "request rate " + plain(requestRate()) + "/s" : "concurrency " + concurrencies.getFirst();
    }

    /**
     * The (first) level's report subdirectory in a sweep: {@code concurrency4}, {@code rate2.5},
     * {@code rate0.25}. Distinct levels have distinct names: a rate is written in full, without
     * exponent or trailing zeros.
     */
    public String levelDirName() {
        return offline() ? "offline" : openLoop() ? "rate" + plain(requestRate()) : "concurrency" + concurrencies.getFirst();
    }

    /** A rate as typed, shortest form: 2.0 is {@code 2}, 1e-3 is {@code 0.001}. */
    static String plain(double v) {
        return BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }

    /** One option: its flag, value label (null: a switch) and help. */
    record Opt(String name, String label, String help) {
    }

    /** Every option {@link #parse} takes, in the order the help lists them. */
    static final List<Opt> OPTS = List.of(
            new Opt("--url", "URL", "server base URL (default http://127.0.0.1:8000)"),
            new Opt("--model", "NAME", "model to request (default: the first of GET /v1/models)"),
            new Opt("--endpoint", "chat|completions|responses|kserve-generate|grpc-stream", "/v1/chat/completions"
                    + " (default), /v1/completions, /v1/responses, Triton's /v2/models/MODEL/generate_stream (KServe v2"
                    + " generate extension), or KServe v2 gRPC ModelStreamInfer (decoupled)"),
            new Opt("--grpc-target", "HOST:PORT", "gRPC address for grpc-stream (default: the --url host, port 8001)"),
            new Opt("--api-key", "KEY", "sent as Authorization: Bearer KEY (default: $OPENAI_API_KEY)"),
            new Opt("--concurrency", "N[,N...]", "closed loop, N requests in flight (default 1); a list sweeps"),
            new Opt("--request-rate", "R[,R...]", "open loop: Poisson arrivals, R requests/s (fixed by --seed); a list"
                    + " sweeps (reports in rateR/, e.g. rate2.5/)"),
            new Opt("--scenario", "offline|server", "MLPerf scenarios: offline sends all --num-requests at once; server"
                    + " is --request-rate (Poisson) under latency SLOs, each rate of a list checked on its own at p99"),
            new Opt("--ttft-slo", "MS", "time-to-first-token SLO, checked at p99; with --tpot-slo a run reports"
                    + " goodput (requests meeting every SLO per second)"),
            new Opt("--tpot-slo", "MS", "per-request time per output token SLO (= inter-token latency), checked at p99"),
            new Opt("--num-requests", "N", "requests to measure (default 100)"),
            new Opt("--duration", "S", "measure for S seconds instead of a request count"),
            new Opt("--warmup-requests", "N", "sent first and not measured (default 0)"),
            new Opt("--input-tokens-mean", "N", "synthetic prompt length (default 128; ~1 token per word)"),
            new Opt("--input-tokens-stddev", "N", "(default 0)"),
            new Opt("--output-tokens-mean", "N", "sent as max_tokens = min_tokens with ignore_eos (default 128; 0 = let"
                    + " the server stop)"),
            new Opt("--output-tokens-stddev", "N", "(default 0)"),
            new Opt("--shared-prefix-tokens", "N", "a common system prompt before every prompt (default 0)"),
            new Opt("--seed", "N", "prompts, lengths and arrivals (default 0)"),
            new Opt("--input-file", "F", "JSONL prompts ({\"text\": ...} or {\"prompt\": ...}), cycled"),
            new Opt("--workload", "synthetic|input-grounded", "synthetic: random words (default); input-grounded: a"
                    + " passage of --input-tokens-mean and the instruction to repeat it, sent with temperature 0, so"
                    + " the output copies the input (what n-gram speculation pays on; compare with serve-sweep"
                    + " --speculative-config)"),
            new Opt("--output-dir", "D", "where reports go (default artifacts/bench)"),
            new Opt("--request-timeout", "S", "a request unfinished after S seconds is a timeout (default 600)"),
            new Opt("--max-errors", "N", "stop the run after N failed requests, e.g. a dead server (default 0 = no"
                    + " limit); the partial report is written"),
            new Opt("--extra-inputs", "JSON", "fields added to every request body, as GenAI-Perf's --extra-inputs, e.g."
                    + " '{\"response_format\":{\"type\":\"json_object\"}}'"),
            new Opt("--no-progress", null, "no progress line on stderr"));

    /** The bench's command line for picocli (help, checking, typo suggestions), from {@link #OPTS}. */
    static picocli.CommandLine.Model.CommandSpec commandSpec() {
        picocli.CommandLine.Model.CommandSpec spec = picocli.CommandLine.Model.CommandSpec.create().name("bench");
        spec.usageMessage().customSynopsis("bin/nereid bench [OPTIONS]").description("Measures an OpenAI-compatible"
                + " server the way GenAI-Perf does (streaming requests; TTFT, inter-token latency, throughput) and writes"
                + " a console table, profile_export.json, profile_export_genai_perf.json/.csv and report.html to"
                + " --output-dir.").sortOptions(false).width(110);
        for (Opt o : OPTS) {
            picocli.CommandLine.Model.OptionSpec.Builder b = picocli.CommandLine.Model.OptionSpec.builder(o.name())
                    .description(o.help());
            if (o.label() == null) {
                b.arity("0").type(boolean.class);
            } else {
                b.arity("1").paramLabel(o.label()).type(String.class);
            }
            spec.addOption(b.build());
        }
        spec.addOption(picocli.CommandLine.Model.OptionSpec.builder("-h", "--help").usageHelp(true)
                .description("this text").build());
        spec.parser().overwrittenOptionsAllowed(true);
        return spec;
    }

    /** The help, generated from {@link #OPTS}. */
    public static String usage() {
        return "usage: " + new picocli.CommandLine(commandSpec()).getUsageMessage(picocli.CommandLine.Help.Ansi.OFF)
                .replaceFirst("^Usage: ", "");
    }


    /** The --extra-inputs value: a JSON object, kept as its text. */
    static String extraInputs(String v) {
        try {
            com.fasterxml.jackson.databind.JsonNode n = new com.fasterxml.jackson.databind.ObjectMapper().readTree(v);
            if (n == null || !n.isObject()) {
                throw new IllegalArgumentException("--extra-inputs: expected a JSON object, got " + v);
            }
            return n.toString();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("--extra-inputs: not JSON: " + e.getOriginalMessage());
        }
    }

    /**
     * The words checked by picocli against {@link #OPTS}: an unknown option is an error naming the
     * likely one meant, a missing value an error naming the option.
     */
    private static void check(String[] args) {
        try {
            new picocli.CommandLine(commandSpec()).parseArgs(args);
        } catch (picocli.CommandLine.UnmatchedArgumentException e) {
            List<String> like = e.getSuggestions();
            throw new IllegalArgumentException("unknown option '" + (e.getUnmatched().isEmpty() ? "" : e.getUnmatched()
                    .getFirst()) + "'" + (like.isEmpty() ? "" : "; did you mean " + String.join(" or ", like) + "?"));
        } catch (picocli.CommandLine.ParameterException e) {
            String m = e.getMessage();
            throw new IllegalArgumentException(m.startsWith("Missing required parameter for option '")
                    ? m.substring(m.indexOf('\'') + 1, m.indexOf('\'', m.indexOf('\'') + 1)) + ": missing value" : m);
        }
    }

    public static BenchConfig parse(String[] args) {
        check(args);
        String url = "http://127.0.0.1:8000";
        String model = null;
        String endpoint = "chat";
        String apiKey = System.getenv("OPENAI_API_KEY");
        List<Integer> concurrencies = new ArrayList<>();
        List<Double> rates = new ArrayList<>();
        int num = 100;
        double duration = 0;
        int warmup = 0;
        int inMean = 128;
        int inStd = 0;
        int outMean = 128;
        int outStd = 0;
        int prefix = 0;
        long seed = 0;
        Path inputFile = null;
        Path outputDir = Path.of("artifacts", "bench");
        double timeout = 600;
        boolean progress = true;
        String scenario = null;
        double ttftSlo = 0;
        double tpotSlo = 0;
        int maxErrors = 0;
        String extraInputs = null;
        String grpcTarget = null;
        String workload = "synthetic";
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (flag.equals("--no-progress")) {
                progress = false;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(flag + ": missing value");
            }
            String v = args[++i];
            try {
                switch (flag) {
                    case "--url" -> url = v.endsWith("/") ? v.substring(0, v.length() - 1) : v;
                    case "--model" -> model = v;
                    case "--endpoint" -> endpoint = v;
                    case "--api-key" -> apiKey = v;
                    case "--concurrency" -> {
                        for (String c : v.split(",", -1)) {
                            concurrencies.add(Integer.parseInt(c.strip()));
                        }
                    }
                    case "--request-rate" -> {
                        for (String r : v.split(",", -1)) {
                            rates.add(Double.parseDouble(r.strip()));
                        }
                    }
                    case "--num-requests" -> num = Integer.parseInt(v);
                    case "--duration" -> duration = Double.parseDouble(v);
                    case "--warmup-requests" -> warmup = Integer.parseInt(v);
                    case "--input-tokens-mean" -> inMean = Integer.parseInt(v);
                    case "--input-tokens-stddev" -> inStd = Integer.parseInt(v);
                    case "--output-tokens-mean" -> outMean = Integer.parseInt(v);
                    case "--output-tokens-stddev" -> outStd = Integer.parseInt(v);
                    case "--shared-prefix-tokens" -> prefix = Integer.parseInt(v);
                    case "--seed" -> seed = Long.parseLong(v);
                    case "--input-file" -> inputFile = Path.of(v);
                    case "--output-dir" -> outputDir = Path.of(v);
                    case "--request-timeout" -> timeout = Double.parseDouble(v);
                    case "--scenario" -> scenario = v;
                    case "--max-errors" -> maxErrors = Integer.parseInt(v);
                    case "--extra-inputs" -> extraInputs = extraInputs(v);
                    case "--grpc-target" -> grpcTarget = v;
                    case "--workload" -> workload = v;
                    case "--ttft-slo" -> ttftSlo = positive(flag, Double.parseDouble(v));
                    case "--tpot-slo" -> tpotSlo = positive(flag, Double.parseDouble(v));
                    default -> throw new IllegalArgumentException("unknown option '" + flag + "'");
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + ": not a number: '" + v + "'");
            }
        }
        if (rates.isEmpty() && concurrencies.isEmpty() && !"offline".equals(scenario)) {
            concurrencies.add(1);
        }
        return new BenchConfig(url, model, endpoint, apiKey, concurrencies, rates, num, duration, warmup, inMean,
                inStd, outMean, outStd, prefix, seed, inputFile, outputDir, timeout, progress, scenario, ttftSlo,
                tpotSlo, maxErrors, extraInputs, grpcTarget, workload);
    }

    private static double positive(String flag, double v) {
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(flag + ": must be > 0 ms, got " + v);
        }
        return v;
    }
}
