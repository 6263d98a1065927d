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
 * @param speculation        speculative decoding's counters
 */
public record EngineStats(int waiting, int running, double kvUsage, long prefixQueryTokens, long prefixHitTokens,
        long preemptions, long iterations, int lastStepTokens, long promptTokens, long generationTokens,
        Speculation speculation) {

    /** A snapshot without speculation counters (none configured). */
    public EngineStats(int waiting, int running, double kvUsage, long prefixQueryTokens, long prefixHitTokens,
            long preemptions, long iterations, int lastStepTokens, long promptTokens, long generationTokens) {
        this(waiting, running, kvUsage, prefixQueryTokens, prefixHitTokens, preemptions, iterations, lastStepTokens,
                promptTokens, generationTokens, Speculation.NONE);
    }

    /**
     * Speculative decoding so far, as vLLM counts it.
     *
     * @param enabled             whether the engine speculates at all
     * @param drafts              decode slices that carried drafts
     * @param draftTokens         draft tokens verified
     * @param acceptedTokens      of those, accepted
     * @param acceptedPerPosition accepted drafts by position in their run (index 0: the first draft)
     */
    public record Speculation(boolean enabled, long drafts, long draftTokens, long acceptedTokens,
            long[] acceptedPerPosition) {

        public static final Speculation NONE = new Speculation(false, 0, 0, 0, new long[0]);

        public Speculation {
            acceptedPerPosition = acceptedPerPosition.clone();
        }

        @Override
        public long[] acceptedPerPosition() {
            return acceptedPerPosition.clone();
        }
    }
}
