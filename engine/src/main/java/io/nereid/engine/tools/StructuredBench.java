package io.nereid.engine.tools;

import io.nereid.engine.json.Json;
import io.nereid.engine.structured.MaskBench;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.HfTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * {@code bin/nereid structured-bench}: MaskBench's procedure ({@link MaskBench}) over directories
 * of MaskBench files, one thread, and the table MaskBench publishes (passing, compile / validation /
 * invalidation errors, timeouts, TTFM and TBM percentiles in µs) per split and in total, plus a JSON
 * report. The last line is exactly {@code total: passing P/N (X.X %), compile errors A, validation
 * errors B, invalidation errors C, timeouts D}.
 */
public final class StructuredBench {

    /**
     * What to run: MaskBench files in {@code dirs} with {@code tokenizer} (a tokenizer.json, a directory
     * holding one, or a GGUF file), JSON compact or with {@code flexibleWhitespace}, {@code timeoutMs}
     * per schema, the JSON report to {@code json} (null: none; the tallies, the 25 slowest schemas to
     * compile and to mask, the failures with their causes), at most {@code limit} files (an even
     * sample across the sorted files).
     */
    public record Options(Path tokenizer, boolean flexibleWhitespace, long timeoutMs, Path json, int limit, List<Path> dirs) {
        public Options {
            if (timeoutMs < 1 || limit < 1 || dirs.isEmpty()) {
                throw new IllegalArgumentException("timeoutMs and limit must be > 0, and at least one DIR given");
            }
            dirs = List.copyOf(dirs);
        }
    }
    private static final double[] TBM_PERCENTILES = {25, 50, 75, 90, 99, 99.9};

    private StructuredBench() {
    }

    /** Per split (or in total): the outcome counts and the timings. */
    private static final class Tally {
        final Map<MaskBench.Outcome, Integer> outcomes = new EnumMap<>(MaskBench.Outcome.class);
        final List<Long> ttfm = new ArrayList<>();
        long[] tbm = new long[1024];
        int tbmCount;
        int schemas;

        void add(MaskBench.Result r) {
            schemas++;
            outcomes.merge(r.outcome(), 1, Integer::sum);
            if (r.ttfmMicros() >= 0) {
                ttfm.add(r.ttfmMicros());
            }
            if (tbmCount + r.tbmNanos().length > tbm.length) {
                tbm = Arrays.copyOf(tbm, Math.max(tbm.length * 2, tbmCount + r.tbmNanos().length));
            }
            System.arraycopy(r.tbmNanos(), 0, tbm, tbmCount, r.tbmNanos().length);
            tbmCount += r.tbmNanos().length;
        }

        int count(MaskBench.Outcome o) {
            return outcomes.getOrDefault(o, 0);
        }

        double[] tbmMicros() {
            long[] sorted = Arrays.copyOf(tbm, tbmCount);
            Arrays.sort(sorted);
            double[] out = new double[TBM_PERCENTILES.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = sorted.length == 0 ? Double.NaN : sorted[index(sorted.length, TBM_PERCENTILES[i])] / 1000.0;
            }
            return out;
        }

        double ttfmMicros(double percentile) {
            long[] sorted = ttfm.stream().mapToLong(Long::longValue).sorted().toArray();
            return sorted.length == 0 ? Double.NaN : sorted[index(sorted.length, percentile)];
        }

        private static int index(int n, double percentile) {
            return (int) Math.min(n - 1, Math.floor(percentile / 100.0 * n));
        }
    }

    /** Prints the table (and writes the report); 0, or 1 with the reason on {@code err}. */
    public static int run(Options o, PrintStream out, PrintStream err) {
        String tokenizerPath = o.tokenizer().toString();
        boolean free = o.flexibleWhitespace();
        long timeoutMs = o.timeoutMs();
        Path json = o.json();
        int limit = o.limit();
        List<Path> dirs = o.dirs();
        try {
            Tokenizer tokenizer = tokenizer(Path.of(tokenizerPath));
            List<Path> files = new ArrayList<>();
            for (Path d : dirs) {
                if (!Files.isDirectory(d)) {
                    err.println("nereid structured-bench: " + d + " is not a directory");
                    return 1;
                }
                try (Stream<Path> s = Files.list(d)) {
                    s.filter(p -> p.toString().endsWith(".json")).sorted().forEach(files::add);
                }
            }
            if (files.size() > limit) {
                // an even sample across the sorted files, so that every split is in it
                List<Path> sample = new ArrayList<>();
                for (int k = 0; k < limit; k++) {
                    sample.add(files.get((int) ((long) k * files.size() / limit)));
                }
                files = sample;
            }
            Map<String, Tally> splits = new TreeMap<>();
            Tally total = new Tally();
            List<MaskBench.Result> failures = new ArrayList<>();
            Slowest slowCompiles = new Slowest();
            Slowest slowMasks = new Slowest();
            for (Path f : files) {
                MaskBench.Result r = MaskBench.run(f, tokenizer, free, timeoutMs);
                splits.computeIfAbsent(r.split(), k -> new Tally()).add(r);
                total.add(r);
                if (r.outcome() != MaskBench.Outcome.PASSING) {
                    failures.add(r);
                }
                slowCompiles.offer(r.file(), r.ttfmMicros());
                long worst = 0;
                for (long t : r.tbmNanos()) {
                    worst = Math.max(worst, t);
                }
                slowMasks.offer(r.file(), worst / 1000);
            }
            print(out, splits, total);
            if (json != null) {
                Files.writeString(json, report(splits, total, failures, tokenizerPath, free, slowCompiles, slowMasks));
                out.println("report: " + json);
            }
            int n = total.schemas;
            int p = total.count(MaskBench.Outcome.PASSING);
            out.printf(Locale.ROOT, "total: passing %d/%d (%.1f %%), compile errors %d, validation errors %d,"
                    + " invalidation errors %d, timeouts %d%n", p, n, n == 0 ? 0.0 : 100.0 * p / n,
                    total.count(MaskBench.Outcome.COMPILE_ERROR), total.count(MaskBench.Outcome.VALIDATION_ERROR),
                    total.count(MaskBench.Outcome.INVALIDATION_ERROR), total.count(MaskBench.Outcome.TIMEOUT));
            return 0;
        } catch (IOException | RuntimeException e) {
            err.println("nereid structured-bench: " + e.getMessage());
            return 1;
        }
    }


    /** A tokenizer.json, a directory holding one, or a GGUF file's vocabulary. */
    static Tokenizer tokenizer(Path p) {
        if (Files.isDirectory(p)) {
            p = p.resolve("tokenizer.json");
        }
        if (!Files.exists(p)) {
            throw new IllegalArgumentException("no tokenizer at " + p);
        }
        return p.toString().endsWith(".json") ? HfTokenizerLoader.load(p) : GgufTokenizerLoader.load(p);
    }

    private static void print(PrintStream out, Map<String, Tally> splits, Tally total) {
        StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-20s %7s %8s %8s %8s %8s %8s %9s %9s",
                "split", "schemas", "passing", "compile", "valid.", "invalid.", "timeout", "TTFM p50", "TTFM p99"));
        for (double q : TBM_PERCENTILES) {
            head.append(String.format(Locale.ROOT, " %9s", "TBM p" + (q == Math.rint(q) ? String.valueOf((int) q) : String.valueOf(q))));
        }
        out.println(head);
        Map<String, Tally> rows = new LinkedHashMap<>(splits);
        rows.put("total", total);
        for (Map.Entry<String, Tally> e : rows.entrySet()) {
            Tally t = e.getValue();
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-20s %7d %8d %8d %8d %8d %8d %9.0f %9.0f",
                    e.getKey(), t.schemas, t.count(MaskBench.Outcome.PASSING), t.count(MaskBench.Outcome.COMPILE_ERROR),
                    t.count(MaskBench.Outcome.VALIDATION_ERROR), t.count(MaskBench.Outcome.INVALIDATION_ERROR),
                    t.count(MaskBench.Outcome.TIMEOUT), t.ttfmMicros(50), t.ttfmMicros(99)));
            for (double v : t.tbmMicros()) {
                row.append(String.format(Locale.ROOT, " %9.1f", v));
            }
            out.println(row);
        }
        out.println("(times in µs, one thread; TTFM = compile + first mask, TBM = each later mask)");
    }

    /** The schemas with the largest values seen (compile + first mask, or their slowest later mask), at most {@link #N}. */
    private static final class Slowest {
        static final int N = 25;
        private final java.util.PriorityQueue<Map.Entry<String, Long>> top =
                new java.util.PriorityQueue<>(Map.Entry.comparingByValue());

        void offer(String file, long micros) {
            if (micros < 0) {
                return;   // did not compile
            }
            top.add(Map.entry(file, micros));
            if (top.size() > N) {
                top.poll();
            }
        }

        void json(StringBuilder b) {
            List<Map.Entry<String, Long>> sorted = new ArrayList<>(top);
            sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
            b.append('[');
            for (int k = 0; k < sorted.size(); k++) {
                b.append(k > 0 ? "," : "").append("{\"file\":").append(Json.quote(sorted.get(k).getKey()))
                        .append(",\"us\":").append(sorted.get(k).getValue()).append('}');
            }
            b.append(']');
        }
    }

    private static String report(Map<String, Tally> splits, Tally total, List<MaskBench.Result> failures, String tokenizer,
            boolean free, Slowest slowCompiles, Slowest slowMasks) {
        StringBuilder b = new StringBuilder("{\"tokenizer\":").append(Json.quote(tokenizer)).append(",\"whitespace\":")
                .append(Json.quote(free ? "flexible" : "compact")).append(",\"splits\":{");
        int i = 0;
        for (Map.Entry<String, Tally> e : splits.entrySet()) {
            b.append(i++ > 0 ? "," : "").append(Json.quote(e.getKey())).append(':');
            tally(b, e.getValue());
        }
        b.append("},\"total\":");
        tally(b, total);
        b.append(",\"slowest_ttfm\":");
        slowCompiles.json(b);
        b.append(",\"slowest_tbm\":");
        slowMasks.json(b);
        b.append(",\"failures\":[");
        for (int k = 0; k < failures.size(); k++) {
            MaskBench.Result r = failures.get(k);
            b.append(k > 0 ? "," : "").append("{\"file\":").append(Json.quote(r.file())).append(",\"outcome\":")
                    .append(Json.quote(r.outcome().name().toLowerCase(Locale.ROOT))).append(",\"detail\":")
                    .append(Json.quote(r.detail() == null ? "" : r.detail())).append('}');
        }
        return b.append("]}\n").toString();
    }

    private static void tally(StringBuilder b, Tally t) {
        b.append("{\"schemas\":").append(t.schemas);
        for (MaskBench.Outcome o : MaskBench.Outcome.values()) {
            b.append(",\"").append(o.name().toLowerCase(Locale.ROOT)).append("\":").append(t.count(o));
        }
        b.append(String.format(Locale.ROOT, ",\"ttfm_us\":{\"p50\":%.0f,\"p99\":%.0f}", t.ttfmMicros(50), t.ttfmMicros(99)));
        b.append(",\"tbm_us\":{");
        double[] v = t.tbmMicros();
        for (int k = 0; k < v.length; k++) {
            b.append(k > 0 ? "," : "").append("\"p").append(TBM_PERCENTILES[k] == Math.rint(TBM_PERCENTILES[k])
                    ? String.valueOf((int) TBM_PERCENTILES[k]) : String.valueOf(TBM_PERCENTILES[k])).append("\":")
                    .append(Double.isNaN(v[k]) ? "null" : String.format(Locale.ROOT, "%.1f", v[k]));
        }
        b.append("}}");
    }
}
