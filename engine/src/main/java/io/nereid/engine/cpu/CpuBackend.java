package io.nereid.engine.cpu;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.KvCacheSpec;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.cpu.kernel.KernelSupport;
import io.nereid.engine.model.ModelConfig;
import io.nereid.kvcache.BlockCopy;
import java.util.List;

/**
 * The pure-Java backend: {@link CpuForward} over a {@link KvStorage}, on the kernel threads of a
 * {@link RangeRunner}. Engine thread only (the forward pass fans out to the runner inside).
 */
public final class CpuBackend implements Backend {

    private final ModelConfig config;
    private final ModelWeights weights;
    private final KernelSupport kernels;
    private final RangeRunner runner;
    private final KvPrecision precision;
    private final boolean batchInvariant;
    private final Runnable onClose;
    private CpuForward forward;   // set by allocate
    private KvStorage storage;

    /** {@code onClose} runs at {@link #close()} (e.g. stopping the kernel pool the runner is). */
    CpuBackend(ModelConfig config, ModelWeights weights, KernelSupport kernels, RangeRunner runner, KvPrecision precision,
            boolean batchInvariant, Runnable onClose) {
        this.config = config;
        this.weights = weights;
        this.kernels = kernels;
        this.runner = runner;
        this.precision = precision;
        this.batchInvariant = batchInvariant;
        this.onClose = onClose;
    }

    @Override
    public int vocabSize() {
        return config.vocabSize();
    }

    @Override
    public long weightCopyBytes() {
        return weights.copyBytes();
    }

    @Override
    public KvCacheSpec kvCacheSpec(int blockSize) {
        long elementsPerBlock = (long) config.kvHeads() * blockSize * config.headDim();
        // One array per layer (K and V each): Java arrays stop at 2^31 - 8 elements.
        int maxBlocks = (int) Math.min(Integer.MAX_VALUE, (Integer.MAX_VALUE - 8) / elementsPerBlock);
        return new KvCacheSpec(blockSize, precision, KvStorage.bytesPerBlock(config, blockSize, precision), maxBlocks);
    }

    @Override
    public void allocate(int numBlocks, int blockSize, int maxPositions) {
        if (storage != null) {
            throw new IllegalStateException("the KV cache is already allocated");
        }
        this.storage = new KvStorage(config, numBlocks, blockSize, precision);
        this.forward = new CpuForward(config, weights, kernels, runner, maxPositions, batchInvariant);
    }

    @Override
    public void copy(List<BlockCopy> copies) {
        copies.forEach(storage()::copy);
    }

    @Override
    public StepOutput forward(Step step) {
        if (forward == null) {
            unallocated();
        }
        return forward.step(step.slices(), storage);
    }

    /** The K/V storage (after {@link #allocate}). */
    KvStorage storage() {
        if (storage == null) {
            unallocated();
        }
        return storage;
    }

    private static float[][] unallocated() {
        throw new IllegalStateException("allocate the KV cache before the first forward pass");
    }

    @Override
    public void close() {
        onClose.run();
    }
}
