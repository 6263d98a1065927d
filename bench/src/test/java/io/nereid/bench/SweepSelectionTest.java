package io.nereid.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The best-point choice and the frontier on hand-built sweep points (times in ms). */
class SweepSelectionTest {
    private static final long MS = 1_000_000L;

    /**
     * A point of {@code n} requests sent at 0, each with first token at {@code ttft} and {@code osl}
     * tokens {@code tpot} apart: duration = ttft + (osl − 1)·tpot, throughput = n·osl / duration.
     */
    private static SweepPoint point(String config, String load, int n, long ttft, long tpot, int osl,
                                    double ttftSlo, double tpotSlo) {
        List<RecordedRequest> rs = new ArrayList<>();
        for (int id = 0; id < n; id++) {
            List<Chunk> chunks = new ArrayList<>();
            long t = ttft;
            for (int i = 0; i < osl; i++) {
                chunks.add(new Chunk(t * MS, "{}", "x"));
                t += tpot;
            }
            rs.add(new RecordedRequest(id, "{}", 0, chunks, t * MS, 200, null, 4, osl));
        }
        RunMetrics m = RunMetrics.of(rs);
        return new SweepPoint(config, load, m, ttftSlo > 0 || tpotSlo > 0 ? SloReport.of(m, ttftSlo, tpotSlo) : null);
    }

    @Test
    void bestIsTheHighestThroughputMeetingTheSlos() {
        // a: 1 request, 11 tokens over 10 + 10·1 = 20 ms → 550 tok/s, TTFT 10, TPOT 1: meets.
        // b: 4 requests, 11 tokens over 10 + 10·2 = 30 ms → 1466.7 tok/s, TTFT 10, TPOT 2: meets.
        // c: 8 requests, 11 tokens over 50 + 10·2 = 70 ms → 1257.1 tok/s... and TTFT 50 > 40: misses.
        // d: 16 requests, 11 tokens over 10 + 10·5 = 60 ms → 2933.3 tok/s, TPOT 5 > 3: misses.
        SweepPoint a = point("seqs=8", "concurrency 1", 1, 10, 1, 11, 40, 3);
        SweepPoint b = point("seqs=8", "concurrency 4", 4, 10, 2, 11, 40, 3);
        SweepPoint c = point("seqs=16", "concurrency 8", 8, 50, 2, 11, 40, 3);
        SweepPoint d = point("seqs=16", "concurrency 16", 16, 10, 5, 11, 40, 3);
        assertEquals(4 * 11 / 0.030, b.throughput(), 1e-6);
        assertEquals(b, SweepSelection.best(List.of(a, b, c, d)).orElseThrow());
        SweepReport report = new SweepReport("t", List.of(a, b, c, d), 40, 3);
        assertTrue(report.verdict().startsWith("Best configuration: seqs=8, concurrency 4: 1466.67 output tokens/s"),
                report.verdict());
        assertTrue(report.console().contains(report.verdict()));
        assertEquals("concurrency 4", ((java.util.Map<?, ?>) report.json().get("best")).get("load"));
    }

    @Test
    void withoutSlosTheHighestThroughputWins() {
        SweepPoint a = point("seqs=8", "concurrency 1", 1, 10, 1, 11, 0, 0);
        SweepPoint d = point("seqs=16", "concurrency 16", 16, 10, 5, 11, 0, 0);
        assertEquals(d, SweepSelection.best(List.of(a, d)).orElseThrow());
        assertTrue(new SweepReport("t", List.of(a, d), 0, 0).verdict().endsWith("(no SLO given: highest throughput)"));
    }

    @Test
    void aTieGoesToThePointMeasuredFirst() {
        SweepPoint first = point("seqs=8", "concurrency 2", 2, 10, 1, 11, 100, 0);
        SweepPoint second = point("seqs=16", "concurrency 2", 2, 10, 1, 11, 100, 0);
        assertEquals(first.throughput(), second.throughput());
        assertEquals(first, SweepSelection.best(List.of(first, second)).orElseThrow());
        assertEquals(second, SweepSelection.best(List.of(second, first)).orElseThrow());
    }

    @Test
    void noneMeetingTheSlosIsSaid() {
        SweepPoint a = point("seqs=8", "concurrency 1", 1, 10, 1, 11, 5, 0);
        SweepPoint b = point("seqs=16", "concurrency 1", 1, 20, 1, 11, 5, 0);
        assertFalse(a.eligible());
        assertTrue(SweepSelection.best(List.of(a, b)).isEmpty());
        SweepReport report = new SweepReport("t", List.of(a, b), 5, 0);
        assertEquals("Best configuration: none meets the SLOs (p99 TTFT <= 5.00 ms, no failed request)", report.verdict());
        assertEquals(null, report.json().get("best"));
        assertTrue(report.html().contains("none meets the SLOs"));
    }

    @Test
    void aPointWithFailedRequestsIsNeverBestWithoutSlos() {
        SweepPoint ok = point("", "concurrency 1", 1, 10, 1, 11, 0, 0);
        RecordedRequest failed = new RecordedRequest(0, "{}", 0, List.of(), MS, 500, "HTTP 500", -1, -1);
        SweepPoint failing = new SweepPoint("", "concurrency 2", RunMetrics.of(List.of(failed)), null);
        assertEquals(ok, SweepSelection.best(List.of(failing, ok)).orElseThrow());
    }

    @Test
    void theFrontierKeepsOnlyUndominatedPointsByLatency() {
        // p99 latency = ttft + 10·tpot: a 20 ms / 550, b 30 ms / 1466.7, c 70 ms / 1257.1 (dominated by b),
        // d 60 ms / 2933.3.
        SweepPoint a = point("x", "1", 1, 10, 1, 11, 0, 0);
        SweepPoint b = point("x", "4", 4, 10, 2, 11, 0, 0);
        SweepPoint c = point("y", "8", 8, 50, 2, 11, 0, 0);
        SweepPoint d = point("y", "16", 16, 10, 5, 11, 0, 0);
        assertEquals(List.of(a, b, d), SweepSelection.frontier(List.of(d, c, b, a)));
    }
}
