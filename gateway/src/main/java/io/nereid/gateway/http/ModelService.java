package io.nereid.gateway.http;

import io.nereid.engine.api.Engine;
import java.util.List;
import java.util.Map;

/**
 * What the HTTP layer needs of the served model. {@link #renderChat}, {@link #tokenize} and
 * {@link #detokenize}, {@link #textOffsets} may block and are called on the worker pool only; the rest is cheap and
 * thread-safe.
 */
public interface ModelService extends AutoCloseable {

    /** The {@code model} clients send. */
    String name();

    /** e.g. "demo, random weights", or null. */
    String description();

    /** Unix seconds the model was loaded. */
    long created();

    /** Prompt + generated tokens of one sequence. */
    int maxModelLen();

    Engine engine();

    boolean hasChatTemplate();

    /** The conversation through the chat template, ending with the assistant header. */
    default String renderChat(List<Map<String, Object>> messages) {
        return renderChat(messages, true);
    }

    /** The conversation through the chat template; the assistant header only with {@code addGenerationPrompt}. */
    default String renderChat(List<Map<String, Object>> messages, boolean addGenerationPrompt) {
        return renderChat(messages, addGenerationPrompt, null, Map.of());
    }

    /**
     * As {@link #renderChat(List, boolean)}, the template given {@code tools} (OpenAI's shape; null:
     * none) and the extra variables {@code kwargs} (vLLM's chat_template_kwargs).
     */
    String renderChat(List<Map<String, Object>> messages, boolean addGenerationPrompt, List<Map<String, Object>> tools,
            Map<String, Object> kwargs);

    /** How the model writes tool calls ({@code --tool-call-parser}, or what its chat template shows), or null: it cannot. */
    default io.nereid.engine.api.ToolCallFormat toolCallFormat() {
        return null;
    }

    /** {@code --reasoning-parser}: deepseek_r1, qwen3, or null for none. */
    default String reasoningParser() {
        return null;
    }

    int[] tokenize(String text, boolean addSpecial);

    /** The text of {@code ids} (special tokens included as their text). */
    String detokenize(int[] ids);

    /**
     * Each token's character offset in {@code decode(ids, skipSpecial)}, at most {@code limit} (the
     * length of the text the offsets index, which may differ from the decoded text).
     */
    int[] textOffsets(int[] ids, boolean skipSpecial, int limit);

    /** The bytes token {@code id} adds to decoded text (may be part of a UTF-8 character). */
    byte[] tokenBytes(int id);

    /** Token ids are in {@code [0, vocabSize)}. */
    int vocabSize();

    /** Tokens per KV-cache block. */
    int blockSize();

    /** KV-cache blocks the engine may use. */
    int numKvBlocks();

    /**
     * How this model makes embeddings ({@code /v1/embeddings}): its own declaration, or the decoder
     * default under {@code --task embed}; null when it serves none.
     */
    default io.nereid.engine.api.EmbeddingSpec embedding() {
        return null;
    }

    /** Entries of an embedding before any truncation (the model's hidden size). */
    default int hiddenSize() {
        return 0;
    }

    /**
     * Stops the engine (in-flight requests end as cancelled) and frees the model. The server calls it
     * only for models it loaded from a {@link ModelRepository} (unload, shutdown); nothing by default.
     */
    @Override
    default void close() {
    }
}
