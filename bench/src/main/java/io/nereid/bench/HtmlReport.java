package io.nereid.bench;

import java.util.List;
import java.util.Locale;

/**
 * A self-contained HTML report: the metrics table and inline SVG charts (TTFT and ITL histograms,
 * output tokens over time; sweeps: {@link SweepReport}). No scripts, no CDN, no
 * external fonts, so it renders offline and in headless browsers. Pure; any thread.
 */
public final class HtmlReport {
    private HtmlReport() {
    }

    public static String render(String title, RunMetrics m) {
        return render(title, m, null);
    }

    /** The report, with goodput and the SLO verdict in the table when {@code slo} is not null. */
    public static String render(String title, RunMetrics m, SloReport slo) {
        StringBuilder b = head(title);
        b.append("<pre>").append(escape(ConsoleTable.render(title, m, slo))).append("</pre>\n");
        b.append(histogram("Time to first token (ms)", m.requests().stream().mapToDouble(r -> r.ttftNs() / 1e6).toArray()));
        b.append(histogram("Inter-token latency (ms)", m.requests().stream().filter(r -> r.itlNs() >= 0)
                .mapToDouble(r -> r.itlNs() / 1e6).toArray()));
        b.append(tokensOverTime(m.requests()));
        return b.append("</body></html>\n").toString();
    }

    static StringBuilder head(String title) {
        return new StringBuilder("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
                .append(escape(title)).append("</title>\n<style>body{font-family:sans-serif;margin:2em}"
                        + "pre{font-family:monospace;font-size:12px}svg{background:#fafafa;border:1px solid #ddd}"
                        + "</style></head><body>\n<h1>").append(escape(title)).append("</h1>\n");
    }

    static String histogram(String label, double[] values) {
        int w = 640;
        int h = 240;
        StringBuilder s = new StringBuilder("<h2>").append(escape(label)).append("</h2>\n");
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">", w, h));
        if (values.length == 0) {
            return s.append("<text x=\"10\" y=\"20\">no samples</text></svg>\n").toString();
        }
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;
        for (double v : values) {
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        int bins = Math.max(1, Math.min(30, values.length));
        double width = max > min ? (max - min) / bins : 1;
        int[] counts = new int[bins];
        for (double v : values) {
            counts[Math.min(bins - 1, (int) ((v - min) / width))]++;
        }
        int top = 1;
        for (int c : counts) {
            top = Math.max(top, c);
        }
        double bw = (w - 60.0) / bins;
        for (int i = 0; i < bins; i++) {
            double bh = (h - 50.0) * counts[i] / top;
            s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4a7fb5\">"
                    + "<title>%.2f–%.2f: %d</title></rect>", 40 + i * bw, h - 30 - bh, Math.max(1, bw - 1), bh,
                    min + i * width, min + (i + 1) * width, counts[i]));
        }
        s.append(String.format(Locale.ROOT, "<text x=\"40\" y=\"%d\" font-size=\"11\">%.2f</text>", h - 12, min));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.2f</text>", w - 20, h - 12, max));
        s.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"16\" font-size=\"11\">%d</text>", top));
        return s.append("</svg>\n").toString();
    }

    /** Output tokens per second over the run, each request's OSL spread evenly over its content events. */
    static String tokensOverTime(List<RequestMetrics> requests) {
        StringBuilder s = new StringBuilder();
        if (requests.isEmpty()) {
            return "<h2>Output tokens over time</h2><p>no samples</p>\n";
        }
        long start = requests.stream().mapToLong(RequestMetrics::sendNs).min().orElse(0);
        long end = requests.stream().mapToLong(RequestMetrics::lastResponseNs).max().orElse(start + 1);
        int bins = 40;
        double binNs = Math.max(1, (end - start) / (double) bins);
        double[] tokens = new double[bins];
        for (RequestMetrics r : requests) {
            double each = (double) r.outputTokens() / r.contentArrivalsNs().size();
            for (long t : r.contentArrivalsNs()) {
                tokens[Math.min(bins - 1, (int) ((t - start) / binNs))] += each;
            }
        }
        double[] x = new double[bins];
        double[] y = new double[bins];
        for (int i = 0; i < bins; i++) {
            x[i] = (i + 0.5) * binNs / 1e9;
            y[i] = tokens[i] / (binNs / 1e9);
        }
        s.append("<h2>Output tokens over time</h2>\n");
        return s.append(lineChart("time since first request (s)", "output tokens/s", x, y)).toString();
    }

    static String lineChart(String xLabel, String yLabel, double[] x, double[] y) {
        int w = 640;
        int h = 260;
        double xMax = 0;
        double yMax = 0;
        for (int i = 0; i < x.length; i++) {
            if (Double.isFinite(x[i])) {
                xMax = Math.max(xMax, x[i]);
            }
            if (Double.isFinite(y[i])) {
                yMax = Math.max(yMax, y[i]);
            }
        }
        xMax = xMax > 0 ? xMax : 1;
        yMax = yMax > 0 ? yMax : 1;
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\"><polyline fill=\"none\" stroke=\"#c0504d\" stroke-width=\"2\" points=\"", w, h));
        for (int i = 0; i < x.length; i++) {
            if (!Double.isFinite(x[i]) || !Double.isFinite(y[i])) {
                continue;
            }
            double px = 50 + (w - 80) * x[i] / xMax;
            double py = h - 40 - (h - 60) * y[i] / yMax;
            s.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
        }
        s.append("\"/>");
        s.append(String.format(Locale.ROOT, "<text x=\"50\" y=\"%d\" font-size=\"11\">%s (max %.2f)</text>", h - 10, escape(xLabel), xMax));
        s.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"14\" font-size=\"11\">%s (max %.2f)</text>", escape(yLabel), yMax));
        return s.append("</svg>\n").toString();
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
