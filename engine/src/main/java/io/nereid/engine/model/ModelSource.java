package io.nereid.engine.model;

import io.nereid.engine.gguf.GgufException;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * An opened model, before any backend binds it: its config, tokenizer, chat template and tensors
 * (memory-mapped, from a GGUF file or a Hugging Face directory). A backend reads the tensors it
 * needs from {@link #tensors()} (the CPU backend maps them in place; a GPU backend uploads them).
 * Closing it unmaps the files; nothing may use the model or a backend bound to it afterwards.
 * Immutable and safe to share until then.
 */
public final class ModelSource implements AutoCloseable {

    private final Path path;
    private final ModelConfig config;
    private final Tokenizer tokenizer;
    private final TensorSource tensors;
    private final Supplier<Optional<ChatTemplate>> chatTemplate;
    private final Runnable unmap;

    ModelSource(Path path, ModelConfig config, Tokenizer tokenizer, TensorSource tensors,
            Supplier<Optional<ChatTemplate>> chatTemplate, Runnable unmap) {
        this.path = path;
        this.config = config;
        this.tokenizer = tokenizer;
        this.tensors = tensors;
        this.chatTemplate = chatTemplate;
        this.unmap = unmap;
    }

    /**
     * Opens and checks a model: a GGUF file, or a Hugging Face model directory ({@code config.json},
     * safetensors weights, {@code tokenizer.json}; see {@link HfModelLoader}).
     *
     * @throws ModelLoadException naming the file and the reason (bad file, unknown architecture,
     *                            unusable tokenizer)
     */
    public static ModelSource open(Path path) {
        return Files.isDirectory(path) ? HfModelLoader.open(path, null) : openGguf(path);
    }

    /**
     * A Hugging Face directory with {@code tokenizer} instead of its {@code tokenizer.json} (for
     * models whose vocabulary has none, in tests).
     */
    public static ModelSource openHf(Path dir, Tokenizer tokenizer) {
        return HfModelLoader.open(dir, tokenizer);
    }

    private static ModelSource openGguf(Path path) {
        GgufFile file;
        try {
            file = GgufFile.open(path);
        } catch (GgufException e) {
            throw new ModelLoadException(e.getMessage(), e);
        }
        try {
            Tokenizer tokenizer = GgufTokenizerLoader.fromMetadata(file.metadata());
            ModelConfig config = ModelConfig.fromGguf(file.metadata(), tokenizer.vocabSize());
            return new ModelSource(path, config, tokenizer, TensorSource.of(file),
                    () -> ChatTemplates.fromGguf(file.metadata(), null), file::close);
        } catch (TokenizerException e) {
            file.close();
            throw new ModelLoadException(e.getMessage(), e);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** The file or directory the model came from. */
    public Path path() {
        return path;
    }

    public ModelConfig config() {
        return config;
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    /** The model's tensors under their GGUF names. */
    public TensorSource tensors() {
        return tensors;
    }

    /**
     * The model's own chat template ({@code tokenizer.chat_template} of a GGUF, the
     * {@code chat_template} of a Hugging Face directory), if it has one; compiled on each call.
     */
    public Optional<ChatTemplate> chatTemplate() {
        return chatTemplate.get();
    }

    @Override
    public void close() {
        unmap.run();
    }
}
