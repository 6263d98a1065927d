package io.nereid.kvcache;

import java.util.ArrayList;
import java.util.List;

/**
 * The paged KV-cache manager the scheduler talks to: creates {@link BlockTable}s, answers
 * prefix lookups, says whether a prompt or a decode step fits, and collects the copy-on-write
 * copies the backend must run before the next forward pass.
 *
 * <h2>Storage (owned by the backend, not by this class)</h2>
 * This class deals in block ids only: token {@code p} of a sequence lives in block
 * {@code table.blockId(p / blockSize)}, slot {@code p % blockSize}, and how a block's K/V are
 * stored is up to the backend. The CPU backend ({@code io.nereid.engine.cpu.KvStorage}) keeps, per
 * layer, one K and one V array on the Java heap ({@code float[]} for F32, {@code short[]} of
 * binary16 bits for F16) of shape
 * <pre>
 *   [kv_head][block][slot][head_dim]      (n_kv_heads, numBlocks, blockSize, head_dim)
 * </pre>
 * so that one head's keys of consecutive blocks are one run of memory for the attention loop
 * (DESIGN.md §5 names {@code [block][kv_head][slot][head_dim]}, the layout until 2026-12-06, under
 * which each block of a head was a short run the prefetchers did not follow at long contexts; see
 * {@code KvStorage}). {@link BlockTable#append(int[], int, int)} uses the blocks it opens in ascending
 * order for that reason. Block 0 (the null block) is allocated in storage too and never read.
 *
 * <h2>Use per engine step</h2>
 * <ol>
 *   <li>new request: {@link #longestCachedPrefix}, then {@link #blocksToAdmit} and
 *       {@link #canAdmit}; if it fits, {@link #newTable(long, PrefixMatch, int[])} and append the
 *       chunk to compute;</li>
 *   <li>running request: {@link #canAppend}, else preempt someone and {@link BlockTable#free()};</li>
 *   <li>{@link #drainCopies()} and hand them to the backend before its forward pass.</li>
 * </ol>
 *
 * <p><b>Not thread-safe.</b> Owned by the engine thread; {@link #stats()} returns an immutable
 * snapshot that may be handed to other threads.
 */
public final class KvCacheManager {

    private final KvCacheConfig config;
    private final BlockPool pool;
    private final List<BlockCopy> pendingCopies = new ArrayList<>();

    public KvCacheManager(KvCacheConfig config) {
        this.config = config;
        this.pool = new BlockPool(config);
    }

    public KvCacheConfig config() {
        return config;
    }

    public int blockSize() {
        return config.blockSize();
    }

    /** The underlying pool (reference counts, free counts); for backends and diagnostics. */
    public BlockPool pool() {
        return pool;
    }

    /** An empty table for a new sequence. */
    public BlockTable newTable(long extraKey) {
        return new BlockTable(this, extraKey);
    }

    /**
     * A table that starts with the cached prefix {@code match} of {@code prompt}; the caller then
     * appends {@code prompt[match.numTokens()..]} (in chunks, if it likes).
     *
     * @throws IllegalStateException if a matched block was evicted since the lookup: look up again
     */
    public BlockTable newTable(long extraKey, PrefixMatch match, int[] prompt) {
        if (match.extraKey() != extraKey) {
            throw new IllegalArgumentException("prefix match was made for another extra key");
        }
        if (prompt.length < match.numTokens()) {
            throw new IllegalArgumentException("prompt shorter than its prefix match");
        }
        for (int i = 0; i < match.numBlocks(); i++) {
            if (!pool.isCachedAs(match.blockId(i), match.hash(i))) {
                throw new IllegalStateException("stale prefix match: block " + match.blockId(i)
                        + " was evicted after the lookup; look up again");
            }
        }
        BlockTable table = new BlockTable(this, extraKey);
        table.adopt(match, prompt);
        return table;
    }

    /**
     * The longest run of full blocks, from the first, whose contents are cached for this prompt
     * and extra key. Stops at the first miss; never covers the last prompt token, so at least one
     * token is left to compute. Counts toward the prefix query/hit statistics. Changes no
     * reference count.
     */
    public PrefixMatch longestCachedPrefix(int[] prompt, long extraKey) {
        int bs = config.blockSize();
        int maxBlocks = prompt.length == 0 ? 0 : (prompt.length - 1) / bs;
        int[] blocks = new int[maxBlocks];
        long[] hashes = new long[maxBlocks];
        long parent = BlockHasher.ROOT;
        int found = 0;
        while (found < maxBlocks) {
            int offset = found * bs;
            long hash = pool.hasher().hash(parent, extraKey, prompt, offset, bs);
            int block = pool.lookup(hash, parent, extraKey, prompt, offset);
            if (block == BlockPool.NULL_BLOCK) {
                break;
            }
            blocks[found] = block;
            hashes[found] = hash;
            parent = hash;
            found++;
        }
        pool.recordQuery(prompt.length, found * bs);
        return new PrefixMatch(extraKey, java.util.Arrays.copyOf(blocks, found),
                java.util.Arrays.copyOf(hashes, found), bs);
    }

    /**
     * Blocks that admitting the first {@code numTokens} tokens of a prompt with this match takes
     * from the free pool: new blocks for the uncached part, plus matched blocks that are free
     * now (a hit on them takes them out of the free queue).
     */
    public int blocksToAdmit(PrefixMatch match, int numTokens) {
        if (numTokens < match.numTokens()) {
            throw new IllegalArgumentException("numTokens " + numTokens + " < matched " + match.numTokens());
        }
        int needed = (numTokens + config.blockSize() - 1) / config.blockSize() - match.numBlocks();
        for (int i = 0; i < match.numBlocks(); i++) {
            if (pool.refCount(match.blockId(i)) == 0) {
                needed++;
            }
        }
        return needed;
    }

    /**
     * Whether {@code blocks} can go to a new prompt while leaving the watermark free for the
     * sequences already running.
     */
    public boolean canAdmit(int blocks) {
        return pool.freeBlocks() - blocks >= config.watermarkBlocks();
    }

    /** Whether a running sequence can append {@code count} tokens now (the watermark is theirs). */
    public boolean canAppend(BlockTable table, int count) {
        return table.blocksNeededToAppend(count) <= pool.freeBlocks();
    }

    /** Unreferenced blocks, cached or not. */
    public int freeBlocks() {
        return pool.freeBlocks();
    }

    /** Unreferenced blocks that hold a cached prefix. */
    public int evictableBlocks() {
        return pool.evictableBlocks();
    }

    public int watermarkBlocks() {
        return config.watermarkBlocks();
    }

    /** Copy-on-write copies queued since the last call, in order; the queue is emptied. */
    public List<BlockCopy> drainCopies() {
        List<BlockCopy> copies = List.copyOf(pendingCopies);
        pendingCopies.clear();
        return copies;
    }

    /** Forgets all cached prefixes; see {@link BlockPool#resetPrefixCache()}. */
    public void resetPrefixCache() {
        pool.resetPrefixCache();
    }

    public KvCacheStats stats() {
        return pool.stats();
    }

    void queueCopy(BlockCopy copy) {
        pendingCopies.add(copy);
    }
}
