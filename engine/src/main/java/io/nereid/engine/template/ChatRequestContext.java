package io.nereid.engine.template;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a chat template is rendered with, mirroring the variables HF transformers'
 * {@code apply_chat_template} passes. Values are plain Java data as a JSON reader produces them:
 * {@code Map<String, Object>}, {@code List<Object>}, {@code String}, {@code Long}, {@code Double},
 * {@code Boolean}, {@code null}; they are handed to the template unchanged and never mutated.
 * The record is immutable; it is as thread-safe as the collections it is given.
 *
 * @param messages            the conversation, e.g. {@code {"role": "user", "content": "Hi"}};
 *                            {@code content} may be a string, null, or a list of parts
 *                            ({@code {"type": "text", "text": ...}})
 * @param tools               tool definitions (OpenAI format), or null: then {@code tools} is
 *                            undefined in the template, as when HF is given no tools
 * @param addGenerationPrompt whether to end with the header of an assistant turn
 * @param bosToken            the model's BOS text, or null (undefined in the template)
 * @param eosToken            the model's EOS text, or null (undefined in the template)
 * @param extraContext        further template variables (e.g. {@code enable_thinking});
 *                            the named fields above take precedence over keys of the same name
 * @param clock               the clock {@code strftime_now} reads (local date of its zone)
 */
public record ChatRequestContext(List<Map<String, Object>> messages, List<Map<String, Object>> tools,
                                 boolean addGenerationPrompt, String bosToken, String eosToken,
                                 Map<String, Object> extraContext, Clock clock) {

    /** Validates; a null {@code extraContext} becomes empty, a null {@code clock} the system clock. */
    public ChatRequestContext {
        Objects.requireNonNull(messages, "messages");
        extraContext = extraContext == null ? Map.of() : extraContext;
        clock = clock == null ? Clock.systemDefaultZone() : clock;
    }

    /** Messages only: no tools, no special tokens, no extra variables, the system clock. */
    public static ChatRequestContext of(List<Map<String, Object>> messages, boolean addGenerationPrompt) {
        return new ChatRequestContext(messages, null, addGenerationPrompt, null, null, Map.of(), null);
    }
}
