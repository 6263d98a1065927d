package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.EngineStats;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReadinessTest {

    private static final long S = 1_000_000_000L;

    private static EngineStats stats(int waiting, int running, long iterations) {
        return new EngineStats(waiting, running, 0, 0, 0, 0, iterations, 0, 0, 0);
    }

    @Test
    void anIdleEngineStaysReadyHoweverLongNothingHappens() {
        Readiness r = new Readiness(Duration.ofSeconds(5));
        assertTrue(r.observe(stats(0, 0, 7), 0));
        assertTrue(r.observe(stats(0, 0, 7), 1000 * S));
    }

    @Test
    void pendingWorkWithoutNewIterationsForLongerThanTheTimeoutIsNotReady() {
        Readiness r = new Readiness(Duration.ofSeconds(5));
        assertTrue(r.observe(stats(0, 0, 7), 0));
        assertTrue(r.observe(stats(3, 1, 7), 2 * S));
        assertTrue(r.observe(stats(3, 1, 7), 5 * S));
        assertFalse(r.observe(stats(3, 1, 7), 6 * S));
    }

    @Test
    void anEngineThatStepsAgainIsReadyAgain() {
        Readiness r = new Readiness(Duration.ofSeconds(5));
        assertTrue(r.observe(stats(1, 0, 7), 0));
        assertFalse(r.observe(stats(1, 0, 7), 10 * S));
        assertTrue(r.observe(stats(0, 1, 8), 11 * S));
        assertTrue(r.observe(stats(0, 1, 9), 20 * S));
    }
}
