package io.nereid.gateway.http;

import io.nereid.engine.api.EngineStats;
import java.time.Duration;

/**
 * Decides {@code GET /health/ready} from successive engine snapshots: the engine is ready while it
 * is idle (nothing waiting or running) or its iteration count moved within the last
 * {@code stallTimeout}. Work pending and no engine step for that long means a stuck engine loop.
 * Pure (the caller passes the clock); thread-safe.
 */
final class Readiness {

    private final long stallNanos;
    private long lastIterations = -1;
    private long lastProgressNanos;

    Readiness(Duration stallTimeout) {
        if (stallTimeout.isNegative() || stallTimeout.isZero()) {
            throw new IllegalArgumentException("stall timeout must be positive, got " + stallTimeout);
        }
        this.stallNanos = stallTimeout.toNanos();
    }

    /** Records {@code s} taken at {@code nowNanos} ({@link System#nanoTime}) and says whether the engine is ready. */
    synchronized boolean observe(EngineStats s, long nowNanos) {
        boolean idle = s.waiting() == 0 && s.running() == 0;
        if (idle || s.iterations() != lastIterations) {
            lastIterations = s.iterations();
            lastProgressNanos = nowNanos;
            return true;
        }
        return nowNanos - lastProgressNanos <= stallNanos;
    }

    /** Seconds since the engine last made progress or was idle. */
    synchronized double secondsSinceProgress(long nowNanos) {
        return (nowNanos - lastProgressNanos) / 1e9;
    }
}
