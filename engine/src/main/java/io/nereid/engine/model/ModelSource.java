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
    private final Optional<io.nereid.engine.api.EmbeddingSpec> embedding;

    ModelSource(Path path, ModelConfig config, Tokenizer tokenizer, TensorSource tensors,
            Supplier<Optional<ChatTemplate>> chatTemplate, Runnable unmap) {
        this(path, config, tokenizer, tensors, chatTemplate, unmap, Optional.empty());
    }

    ModelSource(Path path, ModelConfig config, Tokenizer tokenizer, TensorSource tensors,
            Supplier<Optional<ChatTemplate>> chatTemplate, Runnable unmap,
            Optional<io.nereid.engine.api.EmbeddingSpec> embedding) {
        this.embedding = embedding;
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
                    () -> ChatTemplates.fromGguf(file.metadata(), null), file::close, ggufEmbedding(file.metadata()));
        } catch (TokenizerException e) {
            file.close();
            throw new ModelLoadException(e.getMessage(), e);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** llama.cpp's {@code {arch}.pooling_type}: 1 mean, 2 cls, 3 last (0 none and 4 rank are no embedding model here). */
    private static Optional<io.nereid.engine.api.EmbeddingSpec> ggufEmbedding(io.nereid.engine.gguf.GgufMetadata m) {
        java.util.OptionalLong type = m.architecture().map(a -> m.findLong(a + ".pooling_type"))
                .orElse(java.util.OptionalLong.empty());
        if (type.isEmpty()) {
            return Optional.empty();
        }
        io.nereid.engine.api.Pooling p = switch ((int) type.getAsLong()) {
            case 1 -> io.nereid.engine.api.Pooling.MEAN;
            case 2 -> io.nereid.engine.api.Pooling.CLS;
            case 3 -> io.nereid.engine.api.Pooling.LAST;
            default -> null;
        };
        return p == null ? Optional.empty() : Optional.of(new io.nereid.engine.api.EmbeddingSpec(p, true));
    }

    /**
     * How the model makes embeddings, when its files say it is an embedding model (GGUF
     * {@code pooling_type}, sentence-transformers {@code modules.json}).
     */
    public Optional<io.nereid.engine.api.EmbeddingSpec> embedding() {
        return embedding;
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
