package io.nereid.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Goodput and the p99 SLO verdict on hand-built streams (times in ms). */
class SloReportTest {
    private static final long MS = 1_000_000L;

    /** Sent at {@code sendMs}, first token at sendMs + ttft, then {@code osl − 1} tokens {@code tpot} apart. */
    private static RecordedRequest req(int id, long sendMs, long ttft, long tpot, int osl) {
        List<Chunk> chunks = new ArrayList<>();
        long t = sendMs + ttft;
        for (int i = 0; i < osl; i++) {
            chunks.add(new Chunk(t * MS, "{}", "x"));
            t += tpot;
        }
        chunks.add(new Chunk(t * MS, "[DONE]", ""));
        return new RecordedRequest(id, "{}", sendMs * MS, chunks, t * MS, 200, null, 4, osl);
    }

    @Test
    void goodputCountsRequestsMeetingBothSlosOverTheRunDuration() {
        // Request 0: TTFT 10, TPOT 5 (good). 1: TTFT 50 (bad TTFT). 2: TTFT 10, TPOT 20 (bad TPOT).
        // 3: one token, TTFT 10 (no TPOT: good). Duration: first send 0 → last token of request 2 at 100 + 10 + 2·20 = 150 ms.
        RunMetrics m = RunMetrics.of(List.of(req(0, 0, 10, 5, 3), req(1, 0, 50, 5, 3), req(2, 100, 10, 20, 3),
                req(3, 20, 10, 0, 1)));
        assertEquals(0.150, m.durationS(), 1e-12);
        SloReport r = SloReport.of(m, 20, 10);
        assertEquals(2, r.goodRequests());
        assertEquals(2 / 0.150, r.goodput(), 1e-9);
        assertFalse(r.ttftMet());
        assertFalse(r.tpotMet());
        assertFalse(r.met());
        SloReport ttftOnly = SloReport.of(m, 60, 0);
        assertEquals(4, ttftOnly.goodRequests());
        assertTrue(ttftOnly.met());
        assertNull(ttftOnly.reason());
    }

    @Test
    void theVerdictIsTakenAtThe99thPercentile() {
        // 100 requests with TTFT 10 ms, one with 1000 ms: p99 (numpy linear) = 10 + 0·… stays at 10 for rank 99 of 0..100.
        List<RecordedRequest> rs = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            rs.add(req(i, i, 10, 1, 2));
        }
        rs.add(req(100, 0, 1000, 1, 2));
        SloReport r = SloReport.of(RunMetrics.of(rs), 20, 0);
        assertEquals(10.0, r.ttftP99Ms(), 1e-9);
        assertTrue(r.ttftMet(), "one slow request in 101 is within p99");
        assertEquals(100, r.goodRequests());
    }

    @Test
    void failedRequestsAreNeverGoodAndInvalidateTheVerdict() {
        RecordedRequest failed = new RecordedRequest(1, "{}", 0, List.of(), 5 * MS, 500, "HTTP 500", -1, -1);
        SloReport r = SloReport.of(RunMetrics.of(List.of(req(0, 0, 10, 5, 3), failed)), 100, 100);
        assertEquals(1, r.goodRequests());
        assertTrue(r.ttftMet() && r.tpotMet());
        assertFalse(r.met());
        assertEquals("1 failed request(s)", r.reason());
        SloReport none = SloReport.of(RunMetrics.of(List.of(failed)), 100, 100);
        assertEquals(0, none.goodput());
        assertEquals("no successful request", none.reason());
    }
}
