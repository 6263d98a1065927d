package io.nereid.engine.api;

import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import java.util.Map;
import java.util.Set;

/**
 * Speculative decoding as vLLM configures it ({@code --speculative-config JSON}), e.g.
 * {@code {"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4,"prompt_lookup_min":2}}.
 * Keys: {@code method} ({@code "ngram"} or {@code "draft_model"}), {@code num_speculative_tokens} (1..{@value #MAX_TOKENS}, required),
 * {@code prompt_lookup_max} / {@code prompt_lookup_min} (n-gram lengths; as in vLLM, both 5 when
 * neither is given, and one given stands for both), {@code model} (the draft model's path),
 * {@code disable_by_batch_size} (no drafts while more sequences than this run). Any other key, a
 * wrong type or a value out of range is an {@link IllegalArgumentException} naming the key.
 *
 * @param method              "ngram" or "draft_model"
 * @param numSpeculativeTokens drafts per decode step, at most
 * @param promptLookupMin     shortest n-gram (ngram)
 * @param promptLookupMax     longest n-gram (ngram)
 * @param model               the draft model (draft_model), else null
 * @param disableByBatchSize  the batch size above which nothing is drafted; {@link Integer#MAX_VALUE} for never
 * @param adaptive            Nereid's, not in vLLM's JSON ({@code --speculative-adaptive}): each step drafts as many
 *                            of at most {@code numSpeculativeTokens} as are expected to pay, from the step times and
 *                            acceptance measured ({@link io.nereid.engine.core.AdaptiveDraftLength}); false: always
 *                            {@code numSpeculativeTokens}, as vLLM
 */
public record SpeculativeConfig(String method, int numSpeculativeTokens, int promptLookupMin, int promptLookupMax,
        String model, int disableByBatchSize, boolean adaptive) {

    /** The most drafts one step may verify. */
    public static final int MAX_TOKENS = 32;

    private static final Set<String> KEYS = Set.of("method", "num_speculative_tokens", "prompt_lookup_max",
            "prompt_lookup_min", "model", "disable_by_batch_size");

    public SpeculativeConfig {
        if (!"ngram".equals(method) && !"draft_model".equals(method)) {
            throw new IllegalArgumentException("speculative config: method must be \"ngram\" or \"draft_model\", got "
                    + (method == null ? "none" : "\"" + method + "\""));
        }
        if (numSpeculativeTokens < 1 || numSpeculativeTokens > MAX_TOKENS) {
            throw new IllegalArgumentException("speculative config: num_speculative_tokens must be in [1, " + MAX_TOKENS
                    + "], got " + numSpeculativeTokens);
        }
        if (promptLookupMin < 1 || promptLookupMax < promptLookupMin) {
            throw new IllegalArgumentException("speculative config: prompt_lookup_min must be >= 1 and <= prompt_lookup_max,"
                    + " got " + promptLookupMin + " and " + promptLookupMax);
        }
        if (disableByBatchSize < 1) {
            throw new IllegalArgumentException("speculative config: disable_by_batch_size must be >= 1, got "
                    + disableByBatchSize);
        }
        if ("draft_model".equals(method) && (model == null || model.isBlank())) {
            throw new IllegalArgumentException("speculative config: method \"draft_model\" needs \"model\"");
        }
    }

    /**
     * Parses vLLM's JSON form (fixed draft length: {@link #withAdaptive} sets Nereid's choice per step).
     *
     * @throws IllegalArgumentException naming the key for an unknown key, a wrong type or a bad value,
     *     or describing the syntax error
     */
    public static SpeculativeConfig parse(String json) {
        Map<String, Object> m;
        try {
            m = Json.parseObject(json);
        } catch (JsonException e) {
            throw new IllegalArgumentException("speculative config is not a JSON object: " + e.getMessage(), e);
        }
        for (String key : m.keySet()) {
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("speculative config: unknown key \"" + key + "\" (known: method,"
                        + " num_speculative_tokens, prompt_lookup_max, prompt_lookup_min, model, disable_by_batch_size)");
            }
        }
        String method = string(m, "method");
        Integer k = integer(m, "num_speculative_tokens");
        if (k == null) {
            throw new IllegalArgumentException("speculative config: num_speculative_tokens is required");
        }
        Integer max = integer(m, "prompt_lookup_max");
        Integer min = integer(m, "prompt_lookup_min");
        if (max == null && min == null) {
            max = min = 5;
        } else if (max == null) {
            max = min;
        } else if (min == null) {
            min = max;
        }
        Integer disable = integer(m, "disable_by_batch_size");
        return new SpeculativeConfig(method, k, min, max, string(m, "model"), disable == null ? Integer.MAX_VALUE : disable,
                false);
    }

    /** This configuration with the draft length chosen per step ({@code true}) or always the most. */
    public SpeculativeConfig withAdaptive(boolean on) {
        return new SpeculativeConfig(method, numSpeculativeTokens, promptLookupMin, promptLookupMax, model,
                disableByBatchSize, on);
    }

    private static String string(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v == null || v instanceof String) {
            return (String) v;
        }
        throw new IllegalArgumentException("speculative config: " + key + " must be a string, got " + v);
    }

    private static Integer integer(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v == null) {
            return null;
        }
        if (v instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) {
            return l.intValue();
        }
        throw new IllegalArgumentException("speculative config: " + key + " must be an integer, got " + v);
    }
}
