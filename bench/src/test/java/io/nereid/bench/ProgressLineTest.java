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

    @Test
    void inALogTheFinalLineIsPlainWithoutCarriageReturns() throws Exception {
        BenchConfig config = BenchConfig.parse(new String[] {"--url", "http://127.0.0.1:1", "--num-requests", "3"});
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.PrintStream err = new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8);
        ProgressLine log = new ProgressLine(config, "c1", err, false);
        log.done(true);
        log.done(false);
        log.close();
        String text = bytes.toString(java.nio.charset.StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertFalse(text.contains("\r"), text);
        org.junit.jupiter.api.Assertions.assertTrue(text.startsWith("[bench] c1 [") && text.contains("2/3 requests, 1 failed")
                && text.endsWith(System.lineSeparator()), text);
        bytes.reset();
        ProgressLine tty = new ProgressLine(config, "c1", err, true);
        tty.close();
        org.junit.jupiter.api.Assertions.assertTrue(bytes.toString(java.nio.charset.StandardCharsets.UTF_8).contains("\r"));
    }
}
