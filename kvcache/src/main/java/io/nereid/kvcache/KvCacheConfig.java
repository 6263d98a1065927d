package io.nereid.kvcache;

/**
 * Configuration of one KV-cache block pool; validated here, once.
 *
 * @param numBlocks    blocks in the pool, including the reserved null block (so {@code numBlocks - 1}
 *                     are usable); at least 2
 * @param blockSize    tokens per block: 8, 16, 32 or 64
 * @param watermark    fraction of usable blocks that admitting new prompts must leave free, so that
 *                     running sequences can keep growing (vLLM's {@code watermark}, default 0.01);
 *                     in {@code [0, 1)}
 * @param hashSeed     key of the keyed block hash (SipHash-2-4). Use {@link #randomSeed()} in a
 *                     server so that nobody outside can craft colliding prompts; tests fix it.
 */
public record KvCacheConfig(int numBlocks, int blockSize, double watermark, long hashSeed) {

    /** Block sizes the CPU and CUDA attention kernels are written for. */
    public static final int[] SUPPORTED_BLOCK_SIZES = {8, 16, 32, 64};

    public static final double DEFAULT_WATERMARK = 0.01;

    public KvCacheConfig {
        if (numBlocks < 2) {
            throw new IllegalArgumentException(
                    "numBlocks must be at least 2 (one is the reserved null block), got " + numBlocks);
        }
        boolean supported = false;
        for (int size : SUPPORTED_BLOCK_SIZES) {
            supported |= size == blockSize;
        }
        if (!supported) {
            throw new IllegalArgumentException("blockSize must be one of 8, 16, 32, 64 tokens, got " + blockSize);
        }
        if (!(watermark >= 0 && watermark < 1)) {
            throw new IllegalArgumentException("watermark must be in [0, 1), got " + watermark);
        }
    }

    /** A pool with the default watermark and a random hash key. */
    public static KvCacheConfig of(int numBlocks, int blockSize) {
        return new KvCacheConfig(numBlocks, blockSize, DEFAULT_WATERMARK, randomSeed());
    }

    public static long randomSeed() {
        return new java.security.SecureRandom().nextLong();
    }

    /** Usable blocks: all but the null block. */
    public int usableBlocks() {
        return numBlocks - 1;
    }

    /** Blocks that admission of new prompts keeps free: {@code floor(watermark * usableBlocks)}. */
    public int watermarkBlocks() {
        return (int) (watermark * usableBlocks());
    }
}
