package io.nereid.kvcache;

/**
 * A snapshot of a block pool, taken on the engine thread and safe to hand to any other thread.
 *
 * @param totalBlocks       usable blocks (the null block is not counted)
 * @param usedBlocks        blocks referenced by at least one sequence
 * @param cachedFreeBlocks  unreferenced blocks that still hold a reusable prefix (evictable)
 * @param prefixQueries     prefix lookups made
 * @param prefixQueryTokens prompt tokens looked up, summed over lookups
 * @param prefixHitTokens   of those, tokens found cached
 * @param evictions         cached blocks whose contents were dropped to make room
 */
public record KvCacheStats(
        int totalBlocks,
        int usedBlocks,
        int cachedFreeBlocks,
        long prefixQueries,
        long prefixQueryTokens,
        long prefixHitTokens,
        long evictions) {

    /** Unreferenced blocks, cached or not: what can be allocated now. */
    public int freeBlocks() {
        return totalBlocks - usedBlocks;
    }

    /** Fraction of usable blocks in use, in [0, 1] ({@code vllm:kv_cache_usage_perc}). */
    public double usage() {
        return totalBlocks == 0 ? 0 : (double) usedBlocks / totalBlocks;
    }

    /** Fraction of looked-up tokens that were cached, in [0, 1]; 0 before any lookup. */
    public double prefixHitRate() {
        return prefixQueryTokens == 0 ? 0 : (double) prefixHitTokens / prefixQueryTokens;
    }
}
