package io.nereid.engine.cpu;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.cpu.kernel.KernelSupport;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.ModelLoadException;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A model bound for the CPU: its {@link ModelSource} and its weights as {@link ModelWeights} over
 * the mapped files, from which forward passes and backends are made. Closing it closes the source;
 * nothing may use the model afterwards. Immutable and safe to share until then.
 */
public final class CpuModel implements AutoCloseable {

    private final ModelSource source;
    private final ModelWeights weights;

    private CpuModel(ModelSource source, ModelWeights weights) {
        this.source = source;
        this.weights = weights;
    }

    /**
     * Opens a GGUF file or a Hugging Face directory and binds its weights.
     *
     * @throws ModelLoadException naming the file and the reason (bad file, unknown architecture,
     *                            missing or mis-shaped tensor, unsupported dtype, unusable tokenizer)
     */
    public static CpuModel open(Path path) {
        return of(ModelSource.open(path));
    }

    /** Binds the weights of {@code source}, which the model then owns (closing the source on failure too). */
    public static CpuModel of(ModelSource source) {
        try {
            return new CpuModel(source, ModelWeights.bind(source.tensors(), source.config()));
        } catch (RuntimeException e) {
            source.close();
            throw e;
        }
    }

    public ModelSource source() {
        return source;
    }

    public ModelConfig config() {
        return source.config();
    }

    public Tokenizer tokenizer() {
        return source.tokenizer();
    }

    /** The model's own chat template, if it has one; compiled on each call. */
    public Optional<ChatTemplate> chatTemplate() {
        return source.chatTemplate();
    }

    public ModelWeights weights() {
        return weights;
    }

    /**
     * A forward pass for contexts of up to {@code maxPositions} tokens.
     *
     * @param batchInvariant see {@link CpuForward#CpuForward}
     */
    public CpuForward forward(KernelSupport kernels, RangeRunner runner, int maxPositions, boolean batchInvariant) {
        return new CpuForward(config(), weights, kernels, runner, maxPositions, batchInvariant);
    }

    /** A batch-invariant forward pass ({@link #forward(KernelSupport, RangeRunner, int, boolean)}). */
    public CpuForward forward(KernelSupport kernels, RangeRunner runner, int maxPositions) {
        return forward(kernels, runner, maxPositions, true);
    }

    /**
     * A batch-invariant backend over this model (not yet allocated), computing with {@code kernels}
     * on {@code runner}: what the tests that compare batch shapes bit for bit open.
     */
    public CpuBackend backend(KernelSupport kernels, RangeRunner runner, KvPrecision kvPrecision) {
        return new CpuBackend(config(), weights, kernels, runner, kvPrecision, true, () -> { });
    }

    /** {@link #backend} with its KV cache allocated: {@code numBlocks} of {@code blockSize} for {@code maxPositions}. */
    public CpuBackend backend(KernelSupport kernels, RangeRunner runner, KvPrecision kvPrecision, int numBlocks,
            int blockSize, int maxPositions) {
        CpuBackend b = backend(kernels, runner, kvPrecision);
        b.allocate(numBlocks, blockSize, maxPositions);
        return b;
    }

    @Override
    public void close() {
        source.close();
    }
}
