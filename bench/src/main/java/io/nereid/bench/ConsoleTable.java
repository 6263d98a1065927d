package io.nereid.bench;

import java.util.Locale;
import java.util.Map;

/** Renders a run's metrics as GenAI-Perf's console table (plain text; pure, any thread). */
public final class ConsoleTable {
    private ConsoleTable() {
    }

    public static String render(String title, RunMetrics m) {
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
        b.append(String.format(Locale.ROOT, "%-48s%11d%n", "Request Count (count)", m.requestCount()));
        b.append(String.format(Locale.ROOT, "%-48s%11d", "Error Count (count)", m.errorCount()));
        if (!m.errors().isEmpty()) {
            b.append("  ");
            for (Map.Entry<String, Integer> e : m.errors().entrySet()) {
                b.append(e.getKey()).append('=').append(e.getValue()).append(' ');
            }
        }
        b.append('\n');
        b.append("Token counts from: ").append(m.tokenSource())
                .append(m.tokenSource().equals("usage") ? " (the server's reported usage; no /tokenize used)"
                        : " (usage missing: OSL = content events, ISL unknown)")
                .append('\n');
        return b.toString();
    }
}
