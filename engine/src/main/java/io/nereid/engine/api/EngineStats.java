package io.nereid.engine.api;

/**
 * A snapshot of the engine, safe to read from any thread.
 *
 * @param waiting            requests queued, not yet (or no longer: preempted) running
 * @param running            sequences holding KV blocks
 * @param kvUsage            fraction of KV blocks in use
 * @param prefixQueryTokens  prompt tokens looked up in the prefix cache
 * @param prefixHitTokens    of those, found cached
 * @param preemptions        sequences preempted (recomputed later) so far
 * @param iterations         engine steps run
 * @param lastStepTokens     tokens in the most recent step
 * @param promptTokens       prompt tokens computed so far (cache hits excluded)
 * @param generationTokens   tokens generated so far
 */
public record EngineStats(int waiting, int running, double kvUsage, long prefixQueryTokens, long prefixHitTokens,
        long preemptions, long iterations, int lastStepTokens, long promptTokens, long generationTokens) {
}
