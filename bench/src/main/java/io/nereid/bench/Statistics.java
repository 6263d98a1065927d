package io.nereid.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The summary GenAI-Perf prints for a metric: mean, extremes, percentiles with linear interpolation
 * between closest ranks (numpy's default, which GenAI-Perf uses) and the population standard
 * deviation ({@code numpy.std}, ddof = 0). All fields are NaN when there were no samples.
 */
public record Statistics(int count, double avg, double min, double max, double p1, double p5, double p10,
                         double p25, double p50, double p75, double p90, double p95, double p99, double std) {

    public static final Statistics EMPTY = of(new double[0]);

    public static Statistics of(double[] samples) {
        int n = samples.length;
        if (n == 0) {
            double nan = Double.NaN;
            return new Statistics(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan);
        }
        double[] s = samples.clone();
        Arrays.sort(s);
        double sum = 0;
        for (double v : s) {
            sum += v;
        }
        double avg = sum / n;
        double squares = 0;
        for (double v : s) {
            squares += (v - avg) * (v - avg);
        }
        return new Statistics(n, avg, s[0], s[n - 1], percentile(s, 1), percentile(s, 5), percentile(s, 10),
                percentile(s, 25), percentile(s, 50), percentile(s, 75), percentile(s, 90), percentile(s, 95),
                percentile(s, 99), Math.sqrt(squares / n));
    }

    /** numpy's "linear" method on sorted data: rank (n−1)·q/100, interpolated between neighbours. */
    static double percentile(double[] sorted, double q) {
        double rank = (sorted.length - 1) * q / 100.0;
        int lo = (int) Math.floor(rank);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
    }

    /** GenAI-Perf's JSON layout for one metric: unit, then every statistic by its short name. */
    public Map<String, Object> toGenAiPerf(String unit) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("unit", unit);
        m.put("avg", avg);
        m.put("p1", p1);
        m.put("p5", p5);
        m.put("p10", p10);
        m.put("p25", p25);
        m.put("p50", p50);
        m.put("p75", p75);
        m.put("p90", p90);
        m.put("p95", p95);
        m.put("p99", p99);
        m.put("min", min);
        m.put("max", max);
        m.put("std", std);
        return m;
    }

    /** A statistic by GenAI-Perf's column name (avg, min, max, p25 … p99, std). */
    public double get(String name) {
        return switch (name) {
            case "avg" -> avg;
            case "min" -> min;
            case "max" -> max;
            case "p1" -> p1;
            case "p5" -> p5;
            case "p10" -> p10;
            case "p25" -> p25;
            case "p50" -> p50;
            case "p75" -> p75;
            case "p90" -> p90;
            case "p95" -> p95;
            case "p99" -> p99;
            case "std" -> std;
            default -> throw new IllegalArgumentException("statistic: unknown name '" + name + "'");
        };
    }
}
