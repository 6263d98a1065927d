package io.nereid.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A sweep's summary in three forms: a console table of every point, {@code sweep.json}, and
 * {@code sweep.html} with the throughput against p99 latency chart (one line per server
 * configuration, the Pareto frontier dashed) followed by each point's table. All three name the
 * best point ({@link SweepSelection}) or say that none meets the SLOs. Pure; any thread.
 *
 * @param ttftSloMs 0 = no TTFT SLO
 * @param tpotSloMs 0 = no TPOT SLO
 */
public record SweepReport(String title, List<SweepPoint> points, double ttftSloMs, double tpotSloMs) {
    private static final String[] COLOURS = {"#4a7fb5", "#c0504d", "#9bbb59", "#8064a2", "#f79646", "#4bacc6"};

    public SweepReport {
        points = List.copyOf(points);
    }

    public Optional<SweepPoint> best() {
        return SweepSelection.best(points);
    }

    private boolean hasSlo() {
        return ttftSloMs > 0 || tpotSloMs > 0;
    }

    /** The SLOs in words, e.g. {@code p99 TTFT <= 200 ms, p99 TPOT <= 20 ms}; "no SLO given" without. */
    String sloText() {
        List<String> parts = new ArrayList<>();
        if (ttftSloMs > 0) {
            parts.add(String.format(Locale.ROOT, "p99 TTFT <= %.2f ms", ttftSloMs));
        }
        if (tpotSloMs > 0) {
            parts.add(String.format(Locale.ROOT, "p99 TPOT <= %.2f ms", tpotSloMs));
        }
        return parts.isEmpty() ? "no SLO given" : String.join(", ", parts);
    }

    /** The verdict line: the best point and its figures, or why there is none. */
    public String verdict() {
        Optional<SweepPoint> best = best();
        if (best.isEmpty()) {
            return hasSlo() ? "Best configuration: none meets the SLOs (" + sloText() + ", no failed request)"
                    : "Best configuration: none (no point completed without errors)";
        }
        SweepPoint p = best.get();
        return String.format(Locale.ROOT, "Best configuration: %s: %.2f output tokens/s, p99 TTFT %.2f ms,"
                        + " p99 TPOT %.2f ms (%s)", p.label(), p.throughput(), p.metrics().ttftMs().p99(),
                p.metrics().itlMs().p99(), hasSlo() ? "highest throughput meeting " + sloText()
                        : "no SLO given: highest throughput");
    }

    public String console() {
        List<SweepPoint> frontier = SweepSelection.frontier(points);
        StringBuilder b = new StringBuilder(title).append('\n');
        b.append(String.format(Locale.ROOT, "%-44s %-18s %12s %12s %12s %12s %6s %-5s%n", "Configuration", "Load",
                "Out tok/s", "p99 TTFT ms", "p99 TPOT ms", "p99 lat ms", "Errors", "SLOs"));
        for (SweepPoint p : points) {
            b.append(String.format(Locale.ROOT, "%-44s %-18s %12.2f %12.2f %12.2f %12.2f %6d %-5s%s%n",
                    p.config().isEmpty() ? "-" : p.config(), p.load(), p.throughput(), p.metrics().ttftMs().p99(),
                    p.metrics().itlMs().p99(), p.p99LatencyMs(), p.metrics().errorCount(),
                    p.slo() == null ? "-" : p.slo().met() ? "met" : "NOT", frontier.contains(p) ? "  frontier" : ""));
        }
        return b.append(verdict()).append('\n').toString();
    }

    public Map<String, Object> json() {
        List<SweepPoint> frontier = SweepSelection.frontier(points);
        List<Map<String, Object>> list = new ArrayList<>();
        for (SweepPoint p : points) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("config", p.config());
            m.put("load", p.load());
            m.put("output_token_throughput", finite(p.throughput()));
            m.put("request_throughput", finite(p.metrics().requestThroughput()));
            m.put("time_to_first_token_p99_ms", finite(p.metrics().ttftMs().p99()));
            m.put("inter_token_latency_p99_ms", finite(p.metrics().itlMs().p99()));
            m.put("request_latency_p99_ms", finite(p.p99LatencyMs()));
            m.put("request_count", p.metrics().requestCount());
            m.put("error_count", p.metrics().errorCount());
            m.put("slo_met", p.slo() == null ? null : p.slo().met());
            m.put("eligible", p.eligible());
            m.put("on_frontier", frontier.contains(p));
            list.add(m);
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("title", title);
        Map<String, Object> slo = new LinkedHashMap<>();
        slo.put("percentile", SloReport.PERCENTILE);
        slo.put("ttft_slo_ms", ttftSloMs > 0 ? ttftSloMs : null);
        slo.put("tpot_slo_ms", tpotSloMs > 0 ? tpotSloMs : null);
        root.put("slo", slo);
        root.put("points", list);
        root.put("best", best().map(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("config", p.config());
            m.put("load", p.load());
            m.put("output_token_throughput", p.throughput());
            return (Object) m;
        }).orElse(null));
        root.put("verdict", verdict());
        return root;
    }

    private static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }

    public String html() {
        StringBuilder b = HtmlReport.head(title);
        b.append("<p><b>").append(HtmlReport.escape(verdict())).append("</b></p>\n");
        b.append("<h2>Throughput vs p99 request latency</h2>\n").append(chart());
        b.append("<pre>").append(HtmlReport.escape(console())).append("</pre>\n");
        for (SweepPoint p : points) {
            b.append("<h2>").append(HtmlReport.escape(p.label())).append("</h2>\n<pre>")
                    .append(HtmlReport.escape(ConsoleTable.render(p.label(), p.metrics(), p.slo()))).append("</pre>\n");
        }
        return b.append("</body></html>\n").toString();
    }

    /** One polyline per configuration over its load levels, the frontier dashed, the best point ringed. */
    String chart() {
        int w = 760;
        int h = 360;
        double xMax = 0;
        double yMax = 0;
        for (SweepPoint p : points) {
            if (Double.isFinite(p.p99LatencyMs()) && Double.isFinite(p.throughput())) {
                xMax = Math.max(xMax, p.p99LatencyMs());
                yMax = Math.max(yMax, p.throughput());
            }
        }
        double xs = xMax > 0 ? xMax * 1.1 : 1;
        double ys = yMax > 0 ? yMax * 1.1 : 1;
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">", w, h));
        List<String> configs = points.stream().map(SweepPoint::config).distinct().toList();
        for (int c = 0; c < configs.size(); c++) {
            String colour = COLOURS[c % COLOURS.length];
            String config = configs.get(c);
            StringBuilder line = new StringBuilder();
            StringBuilder dots = new StringBuilder();
            for (SweepPoint p : points) {
                if (!p.config().equals(config) || !Double.isFinite(p.p99LatencyMs()) || !Double.isFinite(p.throughput())) {
                    continue;
                }
                double[] xy = xy(p, w, h, xs, ys);
                line.append(String.format(Locale.ROOT, "%.1f,%.1f ", xy[0], xy[1]));
                dots.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">"
                                + "<title>%s: %.2f tokens/s, p99 latency %.2f ms</title></circle>"
                                + "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s</text>", xy[0], xy[1], colour,
                        HtmlReport.escape(p.label()), p.throughput(), p.p99LatencyMs(), xy[0] + 5, xy[1] - 5,
                        HtmlReport.escape(p.load())));
            }
            s.append("<polyline fill=\"none\" stroke=\"").append(colour).append("\" stroke-width=\"2\" points=\"")
                    .append(line).append("\"/>").append(dots);
            s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                    + "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>", w - 250, 14 + 16 * c, colour, w - 235,
                    23 + 16 * c, HtmlReport.escape(config.isEmpty() ? "this server" : config)));
        }
        StringBuilder front = new StringBuilder();
        for (SweepPoint p : SweepSelection.frontier(points)) {
            double[] xy = xy(p, w, h, xs, ys);
            front.append(String.format(Locale.ROOT, "%.1f,%.1f ", xy[0], xy[1]));
        }
        s.append("<polyline fill=\"none\" stroke=\"#555\" stroke-dasharray=\"5,4\" points=\"").append(front)
                .append("\"><title>Pareto frontier</title></polyline>");
        best().ifPresent(p -> {
            double[] xy = xy(p, w, h, xs, ys);
            s.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"none\" stroke=\"#000\""
                    + " stroke-width=\"2\"><title>best: %s</title></circle>", xy[0], xy[1], HtmlReport.escape(p.label())));
        });
        s.append(String.format(Locale.ROOT, "<text x=\"60\" y=\"%d\" font-size=\"11\">p99 request latency (ms),"
                + " axis to %.2f; dashed: Pareto frontier; ringed: best</text>", h - 8, xs));
        s.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"14\" font-size=\"11\">output tokens/s (axis to %.2f)</text>", ys));
        return s.append("</svg>\n").toString();
    }

    private static double[] xy(SweepPoint p, int w, int h, double xs, double ys) {
        return new double[] {60 + (w - 100) * p.p99LatencyMs() / xs, h - 30 - (h - 60) * p.throughput() / ys};
    }
}
