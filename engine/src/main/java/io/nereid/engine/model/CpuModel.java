package io.nereid.engine.model;

import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.kernel.KernelSupport;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerException;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A model opened for the CPU backend: its config, tokenizer, weights (memory-mapped, from a GGUF
 * file or a Hugging Face directory) and a forward pass. Closing it unmaps the files; nothing may
 * use the model afterwards. Immutable and safe to share until then.
 */
public final class CpuModel implements AutoCloseable {

    private final ModelConfig config;
    private final Tokenizer tokenizer;
    private final ModelWeights weights;
    private final Supplier<Optional<ChatTemplate>> chatTemplate;
    private final Runnable unmap;

    CpuModel(ModelConfig config, Tokenizer tokenizer, ModelWeights weights, Supplier<Optional<ChatTemplate>> chatTemplate,
            Runnable unmap) {
        this.config = config;
        this.tokenizer = tokenizer;
        this.weights = weights;
        this.chatTemplate = chatTemplate;
        this.unmap = unmap;
    }

    /**
     * Opens and checks a model: a GGUF file, or a Hugging Face model directory ({@code config.json},
     * safetensors weights, {@code tokenizer.json}; see {@link HfModelLoader}).
     *
     * @throws ModelLoadException naming the file and the reason (bad file, unknown architecture,
     *                            missing or mis-shaped tensor, unsupported dtype, unusable tokenizer)
     */
    public static CpuModel open(Path path) {
        return Files.isDirectory(path) ? HfModelLoader.open(path, null) : openGguf(path);
    }

    private static CpuModel openGguf(Path path) {
        GgufFile file;
        try {
            file = GgufFile.open(path);
        } catch (GgufException e) {
            throw new ModelLoadException(e.getMessage(), e);
        }
        try {
            Tokenizer tokenizer = GgufTokenizerLoader.fromMetadata(file.metadata());
            ModelConfig config = ModelConfig.fromGguf(file.metadata(), tokenizer.vocabSize());
            return new CpuModel(config, tokenizer, ModelWeights.bind(TensorSource.of(file), config),
                    () -> ChatTemplates.fromGguf(file.metadata(), null), file::close);
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

    /**
     * The model's own chat template ({@code tokenizer.chat_template} of a GGUF, the
     * {@code chat_template} of a Hugging Face directory), if it has one; compiled on each call.
     */
    public Optional<ChatTemplate> chatTemplate() {
        return chatTemplate.get();
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
        unmap.run();
    }
}
