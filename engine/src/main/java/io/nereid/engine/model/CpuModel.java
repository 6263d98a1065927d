package io.nereid.engine.model;

import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.kernel.KernelSupport;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerException;
import java.nio.file.Path;

/**
 * A GGUF model opened for the CPU backend: its config, tokenizer, weights (memory-mapped) and a
 * forward pass. Closing it unmaps the file; nothing may use the model afterwards.
 */
public final class CpuModel implements AutoCloseable {

    private final GgufFile file;
    private final ModelConfig config;
    private final Tokenizer tokenizer;
    private final ModelWeights weights;

    private CpuModel(GgufFile file, ModelConfig config, Tokenizer tokenizer, ModelWeights weights) {
        this.file = file;
        this.config = config;
        this.tokenizer = tokenizer;
        this.weights = weights;
    }

    /**
     * Opens and checks a model file.
     *
     * @throws ModelLoadException naming the file and the reason (bad file, unknown architecture,
     *                            missing or mis-shaped tensor, unusable tokenizer)
     */
    public static CpuModel open(Path path) {
        GgufFile file;
        try {
            file = GgufFile.open(path);
        } catch (GgufException e) {
            throw new ModelLoadException(e.getMessage(), e);
        }
        try {
            Tokenizer tokenizer = GgufTokenizerLoader.fromMetadata(file.metadata());
            ModelConfig config = ModelConfig.fromGguf(file.metadata(), tokenizer.vocabSize());
            return new CpuModel(file, config, tokenizer, ModelWeights.bind(file, config));
        } catch (TokenizerException e) {
            file.close();
            throw new ModelLoadException(e.getMessage(), e);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    public ModelConfig config() {
        return config;
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    /** The model's own chat template ({@code tokenizer.chat_template}), if it has one. */
    public java.util.Optional<io.nereid.engine.template.ChatTemplate> chatTemplate() {
        return io.nereid.engine.template.ChatTemplates.fromGguf(file.metadata(), null);
    }

    public ModelWeights weights() {
        return weights;
    }

    /** A forward pass for contexts of up to {@code maxPositions} tokens. */
    public CpuForward forward(KernelSupport kernels, RangeRunner runner, int maxPositions) {
        return new CpuForward(config, weights, kernels, runner, maxPositions);
    }

    @Override
    public void close() {
        file.close();
    }
}
