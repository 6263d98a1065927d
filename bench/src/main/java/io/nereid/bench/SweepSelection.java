package io.nereid.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Model Analyzer's choice over a sweep: the point with the highest output token throughput among
 * those that meet the SLOs ({@link SweepPoint#eligible()}); a tie goes to the point measured first
 * (sweeps run the smaller configuration and the lighter load first, so the cheaper point wins).
 * Also the throughput/latency Pareto frontier the report draws. Pure; any thread.
 */
public final class SweepSelection {
    private SweepSelection() {
    }

    /** The best eligible point, or empty when none meets the SLOs. */
    public static Optional<SweepPoint> best(List<SweepPoint> points) {
        SweepPoint best = null;
        for (SweepPoint p : points) {
            if (p.eligible() && (best == null || p.throughput() > best.throughput())) {
                best = p;
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * The points no other point dominates (another has at least the throughput at no more p99
     * latency, and is strictly better in one), ordered by latency: the frontier of the chart.
     * Points without a finite throughput or latency are left out.
     */
    public static List<SweepPoint> frontier(List<SweepPoint> points) {
        List<SweepPoint> measured = points.stream()
                .filter(p -> Double.isFinite(p.throughput()) && Double.isFinite(p.p99LatencyMs())).toList();
        List<SweepPoint> front = new ArrayList<>();
        for (SweepPoint p : measured) {
            boolean dominated = false;
            for (SweepPoint q : measured) {
                if (q != p && q.throughput() >= p.throughput() && q.p99LatencyMs() <= p.p99LatencyMs()
                        && (q.throughput() > p.throughput() || q.p99LatencyMs() < p.p99LatencyMs())) {
                    dominated = true;
                    break;
                }
            }
            if (!dominated) {
                front.add(p);
            }
        }
        front.sort((a, b) -> Double.compare(a.p99LatencyMs(), b.p99LatencyMs()));
        return front;
    }
}
