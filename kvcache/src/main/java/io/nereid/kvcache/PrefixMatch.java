package io.nereid.kvcache;

/**
 * Result of {@link KvCacheManager#longestCachedPrefix}: the cached blocks that hold the first
 * {@link #numTokens()} tokens of a prompt. Block-aligned, and always shorter than the prompt so
 * that at least one token is computed (its logits are needed).
 *
 * <p>A match is a snapshot: adopt it with {@link KvCacheManager#newTable(long, PrefixMatch, int[])}
 * before anything else allocates, since allocation may evict a matched block that is free.
 * Immutable.
 */
public final class PrefixMatch {

    private final long extraKey;
    private final int[] blocks;   // (numBlocks) physical ids, logical order
    private final long[] hashes;  // (numBlocks) chain hash of each block
    private final int blockSize;

    PrefixMatch(long extraKey, int[] blocks, long[] hashes, int blockSize) {
        this.extraKey = extraKey;
        this.blocks = blocks;
        this.hashes = hashes;
        this.blockSize = blockSize;
    }

    public long extraKey() {
        return extraKey;
    }

    public int numBlocks() {
        return blocks.length;
    }

    /** Prompt tokens whose K/V is cached: {@code numBlocks() * blockSize}. */
    public int numTokens() {
        return blocks.length * blockSize;
    }

    public int blockId(int logicalBlock) {
        return blocks[logicalBlock];
    }

    long hash(int logicalBlock) {
        return hashes[logicalBlock];
    }

    @Override
    public String toString() {
        return "PrefixMatch[" + numTokens() + " tokens in " + blocks.length + " blocks]";
    }
}
