package io.nereid.engine.backend;

/**
 * What the KV cache costs on a backend: each block holds {@code blockSize} positions of K and V
 * for every layer and KV head, in {@code precision}.
 *
 * @param blockSize     tokens per block
 * @param precision     element type of the stored K/V
 * @param bytesPerBlock bytes one block takes, all layers, K and V
 * @param maxBlocks     the most blocks the backend can hold at all (CPU: its array limits; a GPU:
 *                      what free device memory allows)
 */
public record KvCacheSpec(int blockSize, KvPrecision precision, long bytesPerBlock, int maxBlocks) {

    public KvCacheSpec {
        if (blockSize < 1 || bytesPerBlock < 1 || maxBlocks < 0) {
            throw new IllegalArgumentException("bad KV cache spec: block size " + blockSize + ", " + bytesPerBlock
                    + " bytes per block, at most " + maxBlocks + " blocks");
        }
    }

    /** How many blocks fit in {@code budgetBytes} (and in {@link #maxBlocks}). */
    public int blocksFor(long budgetBytes) {
        return (int) Math.min(maxBlocks, Math.max(0, budgetBytes) / bytesPerBlock);
    }

    /** Bytes {@code blocks} blocks take. */
    public long bytes(int blocks) {
        return bytesPerBlock * blocks;
    }
}
