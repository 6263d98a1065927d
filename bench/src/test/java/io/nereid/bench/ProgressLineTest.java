package io.nereid.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The progress bar's text: filled by requests, or by time for a --duration run. */
class ProgressLineTest {
    @Test
    void aRequestCountRunFillsWithFinishedRequests() {
        assertEquals("[bench] concurrency 4 [#########-----------] 45/100 requests, 2 failed, 12.3 s",
                ProgressLine.render("concurrency 4", 45, 2, 100, 0, 12.34));
        assertEquals("[bench] [--------------------] 0/10 requests, 0 failed, 0.0 s",
                ProgressLine.render("", 0, 0, 10, 0, 0));
    }

    @Test
    void aTimedRunFillsWithElapsedTimeAndNeverOverflows() {
        assertEquals("[bench] x [#####---------------] 7 requests, 0 failed, 7.5 s of 30",
                ProgressLine.render("x", 7, 0, 100, 30, 7.5));
        assertEquals("[bench] x [####################] 70 requests, 0 failed, 31.0 s of 30",
                ProgressLine.render("x", 70, 0, 100, 30, 31));
    }
}
