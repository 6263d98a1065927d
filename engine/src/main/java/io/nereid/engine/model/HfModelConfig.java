package io.nereid.engine.model;

import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a Hugging Face model directory's {@code config.json} (and {@code generation_config.json},
 * when present) says, as Nereid uses it; transformers' defaults where a key is optional.
 *
 * <p>{@code bos_token_id} is not used: the tokenizer's {@code bos_token} decides BOS, as in
 * transformers. Every {@code eos_token_id} of both files (an int or a list) ends generation.
 * Features the CPU backend does not implement ({@code attention_bias} or {@code mlp_bias} on a
 * llama, {@code use_sliding_window}, another {@code hidden_act}, other {@code rope_scaling}
 * types) are errors, never ignored.
 *
 * @param model          the hyper-parameters; NeoX RoPE for every architecture (see
 *                       {@link ModelConfig#neoxRope})
 * @param tiedEmbeddings {@code tie_word_embeddings}
 * @param stopIds        the {@code eos_token_id}s of both files, in order, without duplicates
 */
record HfModelConfig(ModelConfig model, boolean tiedEmbeddings, int[] stopIds) {

    static final String FILE = "config.json";

    /** @throws ModelLoadException naming the file and the key on any problem */
    static HfModelConfig read(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.isRegularFile(file)) {
            throw new ModelLoadException(dir + ": not a model directory: " + FILE + " is missing");
        }
        Keys c = new Keys(file, readJson(file));
        Architecture arch = Architecture.fromHfModelType(c.string("model_type", null), file.toString());
        String act = c.string("hidden_act", "silu");
        if (!act.equals("silu")) {
            throw new ModelLoadException(file + ": hidden_act '" + act + "' is not supported (only silu)");
        }
        c.requireNot("attention_bias", arch != Architecture.QWEN2, "attention biases on a " + arch.ggufName() + " model");
        c.requireNot("mlp_bias", true, "MLP biases");
        c.requireNot("use_sliding_window", true, "sliding-window attention");
        int dim = c.integer("hidden_size", null);
        int heads = c.integer("num_attention_heads", null);
        if (heads <= 0 || dim <= 0) {
            throw new ModelLoadException(file + ": hidden_size (" + dim + ") and num_attention_heads (" + heads
                    + ") must be positive");
        }
        int headDim = c.integer("head_dim", dim / heads);
        Keys rope = ropeParameters(c);
        try {
            ModelConfig model = new ModelConfig(arch, dim, c.integer("num_hidden_layers", null), heads,
                    c.integer("num_key_value_heads", heads), headDim, c.integer("intermediate_size", null),
                    c.integer("vocab_size", null), c.integer("max_position_embeddings", 2048),
                    (float) c.number("rms_norm_eps", 1e-6), (float) ropeTheta(c, rope), headDim, ropeScaling(c, rope), true);
            Set<Integer> stops = new LinkedHashSet<>(c.ids("eos_token_id"));
            Path generation = dir.resolve("generation_config.json");
            if (Files.isRegularFile(generation)) {
                stops.addAll(new Keys(generation, readJson(generation)).ids("eos_token_id"));
            }
            return new HfModelConfig(model, c.bool("tie_word_embeddings", false),
                    stops.stream().mapToInt(Integer::intValue).toArray());
        } catch (IllegalArgumentException e) {
            throw new ModelLoadException(file + ": bad hyper-parameters: " + e.getMessage(), e);
        }
    }

    /**
     * transformers 5 writes RoPE as one {@code rope_parameters} object ({@code rope_theta}, {@code rope_type}
     * and the scaling's keys) instead of the top-level {@code rope_theta} and {@code rope_scaling} of 4.x;
     * it wins where both are present. Null when the config has none.
     */
    private static Keys ropeParameters(Keys c) {
        Object p = c.json().get("rope_parameters");
        if (p == null) {
            return null;
        }
        if (!(p instanceof Map<?, ?> m)) {
            throw c.wrong("rope_parameters", "an object");
        }
        if (m.values().stream().anyMatch(v -> v instanceof Map<?, ?>)) {
            throw new ModelLoadException(c.file() + ": rope_parameters per layer type " + m.keySet()
                    + " are not supported (one RoPE for every layer only)");
        }
        @SuppressWarnings("unchecked")
        Keys r = new Keys(c.file(), (Map<String, Object>) m);
        if (r.number("partial_rotary_factor", 1.0) != 1.0) {
            throw new ModelLoadException(c.file() + ": rope_parameters.partial_rotary_factor "
                    + r.number("partial_rotary_factor", 1.0) + " is not supported (RoPE over the whole head only)");
        }
        return r;
    }

    /** r: the config's rope_parameters, or null. */
    private static double ropeTheta(Keys c, Keys r) {
        double theta = c.number("rope_theta", 10000);
        if (r == null) {
            return theta;
        }
        double p = r.number("rope_theta", theta);
        if (c.json().get("rope_theta") != null && p != theta) {
            throw new ModelLoadException(c.file() + ": rope_theta " + theta + " and rope_parameters.rope_theta " + p
                    + " disagree");
        }
        return p;
    }

    /** parameters: the config's rope_parameters, or null (then its rope_scaling, if any). */
    private static RopeScaling ropeScaling(Keys c, Keys parameters) {
        Keys r = parameters;
        String key = r == null ? "rope_scaling" : "rope_parameters";
        if (r == null) {
            if (!(c.json().get("rope_scaling") instanceof Map<?, ?> m)) {
                return new RopeScaling.None();
            }
            @SuppressWarnings("unchecked")
            Keys scaling = new Keys(c.file(), (Map<String, Object>) m);
            r = scaling;
        }
        String type = r.string("rope_type", r.string("type", "default"));
        if (parameters != null && c.json().get("rope_scaling") instanceof Map<?, ?> legacy) {
            @SuppressWarnings("unchecked")
            Keys l = new Keys(c.file(), (Map<String, Object>) legacy);
            String legacyType = l.string("rope_type", l.string("type", "default"));
            if (!legacyType.equals(type) || l.number("factor", 1.0) != r.number("factor", 1.0)) {
                throw new ModelLoadException(c.file() + ": rope_scaling (" + legacy + ") and rope_parameters ("
                        + r.json() + ") disagree");
            }
        }
        return switch (type) {
            case "default" -> new RopeScaling.None();
            case "linear" -> new RopeScaling.Linear(r.number("factor", null));
            case "llama3" -> new RopeScaling.Llama3(r.number("factor", null), r.number("low_freq_factor", null),
                    r.number("high_freq_factor", null), r.integer("original_max_position_embeddings", null));
            default -> throw new ModelLoadException(c.file() + ": " + key + " type '" + type
                    + "' is not supported (supported: linear, llama3)");
        };
    }

    private static Map<String, Object> readJson(Path file) {
        try {
            return Json.parseObject(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException | JsonException e) {
            throw new ModelLoadException(file + ": cannot be read: " + e.getMessage(), e);
        }
    }

    /** Typed access to one JSON object, naming the file and key in every error. */
    private record Keys(Path file, Map<String, Object> json) {

        int integer(String key, Integer fallback) {
            Object v = present(key, fallback);
            if (v instanceof Long l && l >= 0 && l <= Integer.MAX_VALUE) {
                return l.intValue();
            }
            throw wrong(key, "a non-negative integer");
        }

        double number(String key, Double fallback) {
            Object v = present(key, fallback);
            if (v instanceof Number n) {
                return n.doubleValue();
            }
            throw wrong(key, "a number");
        }

        double number(String key, double fallback) {
            return number(key, Double.valueOf(fallback));
        }

        String string(String key, String fallback) {
            Object v = present(key, fallback);
            if (v instanceof String s) {
                return s;
            }
            throw wrong(key, "a string");
        }

        boolean bool(String key, boolean fallback) {
            Object v = present(key, fallback);
            if (v instanceof Boolean b) {
                return b;
            }
            throw wrong(key, "true or false");
        }

        /** An int, a list of ints, or absent / null (none). */
        List<Integer> ids(String key) {
            Object v = json.get(key);
            List<?> list = v == null ? List.of() : v instanceof List<?> l ? l : List.of(v);
            return list.stream().map(o -> {
                if (o instanceof Long l && l >= 0 && l <= Integer.MAX_VALUE) {
                    return l.intValue();
                }
                throw wrong(key, "a token id or a list of token ids");
            }).toList();
        }

        /** Fails if {@code key} is true and {@code unsupported} says the backend cannot do it. */
        void requireNot(String key, boolean unsupported, String what) {
            if (unsupported && bool(key, false)) {
                throw new ModelLoadException(file + ": " + key + " is true, which the CPU backend does not support ("
                        + what + ")");
            }
        }

        /** The value, or the fallback when the key is absent or null; a null fallback means required. */
        private Object present(String key, Object fallback) {
            Object v = json.get(key);
            if (v != null) {
                return v;
            }
            if (fallback == null) {
                throw new ModelLoadException(file + ": " + key + " is missing");
            }
            return fallback;
        }

        private ModelLoadException wrong(String key, String expected) {
            return new ModelLoadException(file + ": " + key + " is " + json.get(key) + ", expected " + expected);
        }
    }
}
