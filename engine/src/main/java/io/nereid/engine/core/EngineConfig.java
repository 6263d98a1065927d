package io.nereid.engine.core;

/**
 * Limits of one engine, validated once.
 *
 * @param maxNumSeqs          sequences in one step (vLLM {@code max_num_seqs}, default 64)
 * @param maxNumBatchedTokens tokens in one step, decode and prefill chunks together (default 512 on CPU)
 * @param maxWaiting          queued requests before {@code submit} answers QUEUE_FULL
 * @param maxModelLen         context length: prompt + generated tokens of a sequence
 * @param numBlocks           KV blocks in the pool (the null block included)
 * @param blockSize           tokens per KV block
 * @param watermark           fraction of blocks kept free when admitting new prompts
 * @param prefixCaching       reuse cached prompt prefixes
 * @param chunkedPrefill      split long prompts into chunks within the token budget, so decoding
 *                            sequences keep streaming; off, a waiting prompt is computed whole in a
 *                            step of its own, ahead of the decodes (which stall for that step)
 */
public record EngineConfig(int maxNumSeqs, int maxNumBatchedTokens, int maxWaiting, int maxModelLen, int numBlocks,
        int blockSize, double watermark, boolean prefixCaching, boolean chunkedPrefill) {

    public EngineConfig {
        if (maxNumSeqs < 1 || maxNumBatchedTokens < 1 || maxWaiting < 1 || maxModelLen < 2) {
            throw new IllegalArgumentException("engine limits must be positive: " + this);
        }
        if (numBlocks < 2) {
            throw new IllegalArgumentException("the KV pool needs at least 2 blocks, got " + numBlocks);
        }
    }

    /** CPU defaults for a model with {@code maxModelLen} positions and a pool of {@code numBlocks}. */
    public static EngineConfig defaults(int maxModelLen, int numBlocks) {
        return new EngineConfig(64, 512, 1024, maxModelLen, numBlocks, 16, 0.01, true, true);
    }
}
