package io.nereid.engine.backend;

import io.nereid.kvcache.BlockCopy;
import java.util.List;

/**
 * A compute backend: runs forward passes over paged K/V it stores itself. The KV-cache manager
 * ({@code kvcache}) decides which blocks a sequence uses; the backend only holds their contents.
 * Nothing here is CPU-shaped: a slice names its tokens, positions, block table and how many logit
 * rows it needs, and only those rows come back.
 *
 * <p>Lifecycle: opened by a {@link BackendProvider} with the model's weights; the engine asks
 * {@link #kvCacheSpec} what a block costs, then calls {@link #allocate} once, then any number of
 * {@link #copy} and {@link #forward}; {@link #close} frees everything (the engine thread must have
 * stopped). Threads: every method but {@code kvCacheSpec} and {@code vocabSize} is called from the
 * engine thread only; a backend may use threads of its own inside a call.
 */
public interface Backend extends AutoCloseable {

    /** Entries per logit row: the model's vocabulary. */
    int vocabSize();

    /** What KV blocks of {@code blockSize} tokens cost here, and how many the backend could hold at most. */
    KvCacheSpec kvCacheSpec(int blockSize);

    /**
     * Allocates the KV cache: {@code numBlocks} blocks of {@code blockSize} tokens, for sequences of
     * at most {@code maxPositions} positions. Once, before the first {@link #forward}.
     *
     * @throws IllegalArgumentException if it cannot hold that many
     */
    void allocate(int numBlocks, int blockSize, int maxPositions);

    /** Copies to run before the next forward (copy-on-write of shared partial blocks), in order. */
    void copy(List<BlockCopy> copies);

    /**
     * Computes the step: writes every slice's K/V into its blocks and returns the logit rows the
     * slices asked for; for a slice with a {@link Slice#choice()} either its rows or only the tokens
     * chosen from them ({@link StepOutput#chosen()}), as the backend prefers (a device backend chooses
     * where the logits are, so the rows never cross to the host).
     */
    StepOutput forward(Step step);

    /**
     * Host memory this backend took for copies of the weights beyond the model's files, which it
     * reads in place otherwise (the CPU backend: K-quant matrices repacked for its kernels); 0 by
     * default. What a memory limit counts on top of the files.
     */
    default long weightCopyBytes() {
        return 0;
    }

    /** Frees the weights, the KV cache and any threads; nothing may be called afterwards. */
    @Override
    default void close() {
    }
}
