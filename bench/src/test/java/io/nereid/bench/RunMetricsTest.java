package io.nereid.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Metrics on hand-built recorded streams, with expectations computed by hand (times in ms). */
class RunMetricsTest {
    private static final long MS = 1_000_000L;

    /** A recorded request: events are (arrival ms, content) pairs; usage and [DONE] follow the last one. */
    private static RecordedRequest ok(int id, long sendMs, int osl, Object... events) {
        List<Chunk> chunks = new ArrayList<>();
        long last = sendMs;
        for (int i = 0; i < events.length; i += 2) {
            last = ((Number) events[i]).longValue();
            chunks.add(new Chunk(last * MS, "{}", (String) events[i + 1]));
        }
        chunks.add(new Chunk((last + 1) * MS, "{\"usage\":{}}", ""));
        chunks.add(new Chunk((last + 2) * MS, "[DONE]", ""));
        return new RecordedRequest(id, "{}", sendMs * MS, chunks, (last + 2) * MS, 200, null, 7, osl);
    }

    @Test
    void singleTokenOutputHasTtftAndLatencyButNoItlOrSecondToken() {
        RequestMetrics m = RequestMetrics.of(ok(0, 0, 1, 5L, "", 10L, "Hi"));
        assertEquals(10 * MS, m.ttftNs(), "the role-only empty chunk at 5 ms is not the first token");
        assertEquals(10 * MS, m.latencyNs(), "latency ends at the last content event, not at usage/[DONE]");
        assertEquals(-1, m.ttstNs());
        assertEquals(-1, m.itlNs());
        assertTrue(Double.isNaN(m.tpsPerUser()));
    }

    @Test
    void chunkWithSeveralTokensUsesReportedOutputLength() {
        // 5 tokens in 3 events: ITL = (40 − 10) / (5 − 1) = 7.5 ms, TPS/user = 1 / 7.5 ms.
        RequestMetrics m = RequestMetrics.of(ok(0, 0, 5, 10L, "a", 20L, "b c", 40L, "d e"));
        assertEquals(10 * MS, m.ttftNs());
        assertEquals(10 * MS, m.ttstNs());
        assertEquals(40 * MS, m.latencyNs());
        assertEquals(7_500_000L, m.itlNs());
        assertEquals(1e9 / 7_500_000, m.tpsPerUser(), 1e-9);
        assertEquals(5, m.outputTokens());
    }

    @Test
    void emptyChunksBetweenTokensAreSkipped() {
        RequestMetrics m = RequestMetrics.of(ok(0, 2, 3, 4L, "", 12L, "x", 13L, "", 22L, "y", 32L, "z"));
        assertEquals(10 * MS, m.ttftNs());
        assertEquals(10 * MS, m.ttstNs(), "second token is the second content event (22 − 12), not the empty one at 13");
        assertEquals(30 * MS, m.latencyNs());
        assertEquals(10 * MS, m.itlNs());
    }

    @Test
    void withoutUsageOutputLengthFallsBackToContentEvents() {
        List<Chunk> chunks = List.of(new Chunk(10 * MS, "{}", "a"), new Chunk(30 * MS, "{}", "b"),
                new Chunk(31 * MS, "[DONE]", ""));
        RunMetrics run = RunMetrics.of(List.of(new RecordedRequest(0, "{}", 0, chunks, 31 * MS, 200, null, -1, -1)));
        assertEquals(2, run.requests().getFirst().outputTokens());
        assertEquals(20.0, run.itlMs().avg(), 1e-9);
        assertEquals("content events", run.outputTokenSource());
        assertEquals("unknown", run.inputTokenSource());
        assertEquals(0, run.inputTokens().count(), "ISL unknown without usage");
    }

    @Test
    void errorsMidStreamTimeoutsAndHttpErrorsCountOnlyAsErrors() {
        RecordedRequest midStream = new RecordedRequest(1, "{}", 0,
                List.of(new Chunk(5 * MS, "{}", "a"), new Chunk(6 * MS, "{\"error\":{}}", "")), 6 * MS, 200, "boom", -1, -1);
        RecordedRequest neverReturned = new RecordedRequest(2, "{}", 0, List.of(), -1, 0, "timeout", -1, -1);
        RecordedRequest http500 = new RecordedRequest(3, "{}", 0, List.of(), 3 * MS, 500, "HTTP 500", -1, -1);
        RecordedRequest refused = new RecordedRequest(4, "{}", 0, List.of(), 1 * MS, 0, "I/O", -1, -1);
        RunMetrics run = RunMetrics.of(List.of(ok(0, 0, 2, 10L, "a", 20L, "b"), midStream, neverReturned, http500, refused));
        assertEquals(5, run.sent());
        assertEquals(1, run.requestCount());
        assertEquals(Map.of("stream_error", 1, "timeout", 1, "500", 1, "connection_error", 1), run.errors());
        assertEquals(4, run.errorCount());
        assertEquals(10.0, run.ttftMs().max(), 1e-9, "failed requests do not enter the statistics");
        assertNull(RequestMetrics.of(midStream));
    }

    @Test
    void throughputIsOverFirstSendToLastContentEvent() {
        // A: sent at 0, last content at 40 ms, 5 tokens. B: sent at 10, last content at 50 ms, 3 tokens.
        RunMetrics run = RunMetrics.of(List.of(ok(0, 0, 5, 10L, "a", 40L, "b"), ok(1, 10, 3, 30L, "c", 50L, "d")));
        assertEquals(0.050, run.durationS(), 1e-12);
        assertEquals(8 / 0.050, run.outputTokenThroughput(), 1e-6);
        assertEquals(2 / 0.050, run.requestThroughput(), 1e-6);
        assertEquals(4.0, run.outputTokens().avg(), 1e-12);
        assertEquals(7.0, run.inputTokens().avg(), 1e-12);
        assertEquals("usage", run.outputTokenSource());
        assertEquals("usage", run.inputTokenSource());
        // ITLs: A (40−10)/4 = 7.5 ms, B (40−20)/2 = 10 ms.
        assertEquals(8.75, run.itlMs().avg(), 1e-9);
    }

    @Test
    void noSuccessfulRequestGivesNaNNotAnException() {
        RunMetrics run = RunMetrics.of(List.of(new RecordedRequest(0, "{}", 0, List.of(), -1, 0, "timeout", -1, -1)));
        assertEquals(0, run.requestCount());
        assertTrue(Double.isNaN(run.outputTokenThroughput()));
        assertTrue(Double.isNaN(run.ttftMs().avg()));
    }
}
