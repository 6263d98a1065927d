package io.nereid.engine.model;

import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import io.nereid.engine.tokenizer.HfTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Opens a Hugging Face model directory as a {@link ModelSource}:
 * <pre>
 * config.json                        architecture and hyper-parameters   ({@link HfModelConfig})
 * generation_config.json (optional)  eos_token_id: more stop ids
 * model.safetensors, or model-0000i-of-0000n.safetensors + model.safetensors.index.json
 *                                    F32 / F16 / BF16 weights, mapped    ({@link HfTensors})
 * tokenizer.json + tokenizer_config.json   tokenizer, BOS/EOS, add_bos_token, chat_template
 * chat_template.jinja (optional)     the chat template, when it is kept apart (newer transformers)
 * </pre>
 * Stateless.
 */
final class HfModelLoader {

    private HfModelLoader() {
    }

    /**
     * @param tokenizer the tokenizer to use instead of the directory's {@code tokenizer.json}, or
     *                  null: for tests of models whose vocabulary has no {@code tokenizer.json}
     * @throws ModelLoadException naming the file and the reason
     */
    static ModelSource open(Path dir, Tokenizer tokenizer) {
        HfModelConfig hf = HfModelConfig.read(dir);
        ModelConfig config = hf.model();
        if (tokenizer == null) {
            tokenizer = tokenizer(dir, config.vocabSize(), hf.stopIds());
        } else if (tokenizer.vocabSize() > config.vocabSize()) {
            throw new ModelLoadException(dir + ": the tokenizer has " + tokenizer.vocabSize() + " tokens, config.json"
                    + " vocab_size is " + config.vocabSize());
        }
        HfTensors tensors = HfTensors.open(dir, hf.tiedEmbeddings());
        return new ModelSource(dir, config, tokenizer, tensors, chatTemplate(dir), tensors::close, embedding(dir));
    }

    private static Tokenizer tokenizer(Path dir, int vocabSize, int[] stopIds) {
        Path file = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(file)) {
            throw new ModelLoadException(dir + ": tokenizer.json is missing");
        }
        Tokenizer t;
        try {
            t = HfTokenizerLoader.load(file, vocabSize, Arrays.stream(stopIds).boxed().toList());
        } catch (TokenizerException e) {
            throw new ModelLoadException(e.getMessage(), e);
        }
        if (t.vocabSize() > vocabSize) {
            throw new ModelLoadException(file + ": " + t.vocabSize() + " tokens, more than config.json vocab_size "
                    + vocabSize);
        }
        return t;
    }

    /** {@code chat_template.jinja} if present, else the one in {@code tokenizer_config.json}; compiled when asked for. */
    private static Supplier<Optional<ChatTemplate>> chatTemplate(Path dir) {
        Path jinja = dir.resolve("chat_template.jinja");
        Path config = dir.resolve("tokenizer_config.json");
        return () -> {
            if (Files.isRegularFile(jinja)) {
                try {
                    return Optional.of(ChatTemplate.compile(Files.readString(jinja, StandardCharsets.UTF_8), jinja.toString()));
                } catch (IOException e) {
                    throw new IllegalArgumentException(jinja + ": cannot be read: " + e.getMessage(), e);
                }
            }
            return Files.isRegularFile(config) ? ChatTemplates.fromTokenizerConfig(config, null) : Optional.empty();
        };
    }

    /**
     * A sentence-transformers directory's embedding: {@code modules.json} names a Pooling module
     * (its {@code config.json}: {@code pooling_mode_cls_token}, {@code _mean_tokens} or
     * {@code _lasttoken}) and, when the output is normalised, a Normalize module.
     */
    static java.util.Optional<io.nereid.engine.api.EmbeddingSpec> embedding(Path dir) {
        Path modules = dir.resolve("modules.json");
        if (!java.nio.file.Files.isRegularFile(modules)) {
            return java.util.Optional.empty();
        }
        try {
            io.nereid.engine.api.Pooling pooling = null;
            boolean normalize = false;
            Object parsed = io.nereid.engine.json.Json.parse(java.nio.file.Files.readString(modules));
            for (Object o : parsed instanceof java.util.List<?> l ? l : java.util.List.of()) {
                java.util.Map<?, ?> m = o instanceof java.util.Map<?, ?> mm ? mm : java.util.Map.of();
                String type = String.valueOf(m.get("type"));
                if (type.endsWith("models.Normalize")) {
                    normalize = true;
                } else if (type.endsWith("models.Pooling")) {
                    java.util.Map<String, Object> c = io.nereid.engine.json.Json.parseObject(java.nio.file.Files.readString(
                            dir.resolve(String.valueOf(m.get("path"))).resolve("config.json")));
                    pooling = Boolean.TRUE.equals(c.get("pooling_mode_cls_token")) ? io.nereid.engine.api.Pooling.CLS
                            : Boolean.TRUE.equals(c.get("pooling_mode_lasttoken")) ? io.nereid.engine.api.Pooling.LAST
                            : Boolean.TRUE.equals(c.get("pooling_mode_mean_tokens")) ? io.nereid.engine.api.Pooling.MEAN
                            : null;
                }
            }
            if (pooling == null) {
                return java.util.Optional.empty();
            }
            // Matryoshka sizes, as vLLM reads them from config.json: matryoshka_dimensions, or is_matryoshka for any
            java.util.List<Integer> matryoshka = null;
            Path config = dir.resolve("config.json");
            if (java.nio.file.Files.isRegularFile(config)) {
                java.util.Map<String, Object> c = io.nereid.engine.json.Json.parseObject(java.nio.file.Files.readString(config));
                if (c.get("matryoshka_dimensions") instanceof java.util.List<?> dims) {
                    matryoshka = dims.stream().map(d -> ((Number) d).intValue()).toList();
                } else if (Boolean.TRUE.equals(c.get("is_matryoshka"))) {
                    matryoshka = java.util.List.of();
                }
            }
            return java.util.Optional.of(new io.nereid.engine.api.EmbeddingSpec(pooling, normalize, matryoshka));
        } catch (java.io.IOException | io.nereid.engine.json.JsonException e) {
            throw new ModelLoadException(modules + ": cannot read the sentence-transformers modules: " + e.getMessage(), e);
        }
    }
}
