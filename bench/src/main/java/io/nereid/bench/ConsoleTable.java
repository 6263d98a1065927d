package io.nereid.bench;

import java.util.Locale;
import java.util.Map;

/** Renders a run's metrics as GenAI-Perf's console table (plain text; pure, any thread). */
public final class ConsoleTable {
    private ConsoleTable() {
    }

    public static String render(String title, RunMetrics m) {
        return render(title, m, null);
    }

    /** The table, then goodput and the SLO verdict when {@code slo} is not null. */
    public static String render(String title, RunMetrics m, SloReport slo) {
        String[] cols = {"avg", "min", "max", "p99", "p90", "p75", "p50", "p25", "std"};
        StringBuilder b = new StringBuilder();
        b.append(title).append('\n');
        b.append(String.format(Locale.ROOT, "%-48s", "Statistic"));
        for (String c : cols) {
            b.append(String.format(Locale.ROOT, "%11s", c));
        }
        b.append('\n');
        for (RunMetrics.Metric metric : m.requestMetrics()) {
            b.append(String.format(Locale.ROOT, "%-48s", metric.title() + " (" + metric.unit() + ")"));
            for (String c : cols) {
                b.append(String.format(Locale.ROOT, "%,11.2f", metric.stats().get(c)));
            }
            b.append('\n');
        }
        b.append(String.format(Locale.ROOT, "%-48s%,11.2f%n", "Output Token Throughput (tokens/sec)", m.outputTokenThroughput()));
        b.append(String.format(Locale.ROOT, "%-48s%,11.2f%n", "Request Throughput (per sec)", m.requestThroughput()));
        if (slo != null) {
            b.append(String.format(Locale.ROOT, "%-48s%,11.2f  (%d requests met every SLO)%n",
                    "Request Goodput (per sec)", slo.goodput(), slo.goodRequests()));
        }
        b.append(String.format(Locale.ROOT, "%-48s%11d%n", "Request Count (count)", m.requestCount()));
        b.append(String.format(Locale.ROOT, "%-48s%11d", "Error Count (count)", m.errorCount()));
        if (!m.errors().isEmpty()) {
            b.append("  ");
            for (Map.Entry<String, Integer> e : m.errors().entrySet()) {
                b.append(e.getKey()).append('=').append(e.getValue()).append(' ');
            }
        }
        b.append('\n');
        b.append("Token counts: input from ").append(describe(m.inputTokenSource())).append(", output from ")
                .append(describe(m.outputTokenSource())).append('\n');
        if (slo != null) {
            b.append("SLOs at p99:");
            if (slo.ttftSloMs() > 0) {
                b.append(String.format(Locale.ROOT, " TTFT %.2f ms <= %.2f ms %s;", slo.ttftP99Ms(), slo.ttftSloMs(),
                        slo.ttftMet() ? "yes" : "NO"));
            }
            if (slo.tpotSloMs() > 0) {
                b.append(String.format(Locale.ROOT, " TPOT %.2f ms <= %.2f ms %s;", slo.tpotP99Ms(), slo.tpotSloMs(),
                        slo.tpotMet() ? "yes" : "NO"));
            }
            b.append(slo.met() ? " SLOs MET" : " SLOs NOT MET (" + slo.reason() + ")").append('\n');
        }
        return b.toString();
    }

    private static String describe(String source) {
        return switch (source) {
            case RunMetrics.TOKENIZE -> "/tokenize (the server's tokenizer)";
            case "usage" -> "usage (the server's reported counts)";
            case "content events" -> "content events (no usage reported: one token per event)";
            default -> source + " (no usage reported, no /tokenize)";
        };
    }
}
