package io.nereid.engine.template;

import io.nereid.engine.gguf.GgufMetadata;
import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where a model's chat template comes from: GGUF {@code tokenizer.chat_template} (or
 * {@code tokenizer.chat_template.NAME}), HF {@code tokenizer_config.json}'s {@code chat_template}
 * (a string, or a list of {@code {name, template}}), a {@code .jinja} file, or a built-in name.
 * Stateless.
 */
public final class ChatTemplates {

    private ChatTemplates() {
    }

    /**
     * Renders {@code messages} with the generation prompt on, passing the model's BOS and EOS text
     * from its tokenizer, as {@code apply_chat_template} does.
     */
    public static String renderForGeneration(ChatTemplate template, List<Map<String, Object>> messages,
            io.nereid.engine.tokenizer.Tokenizer tokenizer) {
        io.nereid.engine.tokenizer.SpecialTokens sp = tokenizer.specialTokens();
        return template.render(new ChatRequestContext(messages, null, true, sp.bos() >= 0 ? tokenizer.piece(sp.bos()) : null,
                sp.eos() >= 0 ? tokenizer.piece(sp.eos()) : null, Map.of(), null));
    }

    /** The template in GGUF metadata: {@code name} null for the default one. */
    public static Optional<ChatTemplate> fromGguf(GgufMetadata meta, String name) {
        String key = name == null ? "tokenizer.chat_template" : "tokenizer.chat_template." + name;
        return meta.findString(key).map(source -> ChatTemplate.compile(source, meta.source() + " " + key));
    }

    /**
     * The template in a {@code tokenizer_config.json}: {@code name} null for the default one
     * (a plain string, or the entry named {@code default}).
     *
     * @throws IllegalArgumentException if the file is unreadable or malformed, naming it
     */
    public static Optional<ChatTemplate> fromTokenizerConfig(Path file, String name) {
        Map<String, Object> config;
        try {
            config = Json.parseObject(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException | JsonException e) {
            throw new IllegalArgumentException(file + ": cannot read chat_template: " + e.getMessage(), e);
        }
        Object value = config.get("chat_template");
        String wanted = name == null ? "default" : name;
        if (value instanceof String s) {
            return name == null ? Optional.of(ChatTemplate.compile(s, file + " chat_template")) : Optional.empty();
        }
        if (value instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof Map<?, ?> m && wanted.equals(m.get("name")) && m.get("template") instanceof String s) {
                    return Optional.of(ChatTemplate.compile(s, file + " chat_template " + wanted));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * A template chosen by the operator: a built-in name ({@link ChatTemplate#builtinNames()}) or
     * the path of a Jinja file.
     *
     * @throws IllegalArgumentException if it is neither, naming what was given
     */
    public static ChatTemplate named(String nameOrFile) {
        if (ChatTemplate.builtinNames().contains(nameOrFile)) {
            return ChatTemplate.builtin(nameOrFile);
        }
        Path file = Path.of(nameOrFile);
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("chat template '" + nameOrFile + "' is neither a built-in ("
                    + String.join(", ", ChatTemplate.builtinNames()) + ") nor a readable file");
        }
        try {
            return ChatTemplate.compile(Files.readString(file, StandardCharsets.UTF_8), file.toString());
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }
}
