package io.nereid.gateway.http;

import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The inputs of an LLM request over the KServe v2 / Triton protocols, by the names Triton's
 * TensorRT-LLM ensemble takes (and the vLLM backend's names for the same things), whether they
 * came as tensors ({@code /infer}, gRPC ModelInfer), as keys of a {@code /generate} body, or as
 * request parameters. Every name is either honoured or refused with a 400 naming it.
 *
 * @param prompts        {@code text_input}: one engine request per element
 * @param maxTokens      {@code max_tokens}, 16 when not given (as Triton's vLLM backend)
 * @param minTokens      {@code min_length} / {@code min_tokens}
 * @param stop           {@code stop_words} / {@code stop} (empty strings dropped, as the ensemble's "")
 * @param badWords       {@code bad_words}: words whose token is never sampled (one token each)
 * @param endId          {@code end_id}: a further stop token, or -1
 * @param ignoreEos      {@code ignore_eos}
 * @param excludeInput   {@code exclude_input_in_output}: text_output without the prompt in front
 * @param stream         {@code stream}: null when not given
 * @param returnLogProbs {@code return_log_probs}: cum_log_probs and output_log_probs outputs
 * @param timeoutMicros  the {@code timeout} parameter (µs from arrival; the request ends with an error
 *                       when it passes), or 0 for none
 */
record KServeInputs(List<String> prompts, int maxTokens, SamplingParams sampling, int minTokens, List<String> stop,
        List<String> badWords, int endId, boolean ignoreEos, boolean excludeInput, Boolean stream, boolean returnLogProbs,
        long timeoutMicros) {

    static final int DEFAULT_MAX_TOKENS = 16;

    /** These inputs with {@code timeout} set to {@code micros}. */
    KServeInputs withTimeoutMicros(long micros) {
        return new KServeInputs(prompts, maxTokens, sampling, minTokens, stop, badWords, endId, ignoreEos, excludeInput,
                stream, returnLogProbs, micros);
    }

    /** What a request may carry, with the kind of value each takes. */
    enum Kind { TEXT, INT, FLOAT, BOOL }

    static final Map<String, Kind> INPUTS = inputs();

    private static Map<String, Kind> inputs() {
        Map<String, Kind> m = new LinkedHashMap<>();
        m.put("text_input", Kind.TEXT);
        m.put("max_tokens", Kind.INT);
        m.put("temperature", Kind.FLOAT);
        m.put("top_k", Kind.INT);
        m.put("top_p", Kind.FLOAT);
        m.put("min_p", Kind.FLOAT);
        m.put("repetition_penalty", Kind.FLOAT);
        m.put("presence_penalty", Kind.FLOAT);
        m.put("frequency_penalty", Kind.FLOAT);
        m.put("random_seed", Kind.INT);
        m.put("seed", Kind.INT);
        m.put("min_length", Kind.INT);
        m.put("min_tokens", Kind.INT);
        m.put("stop_words", Kind.TEXT);
        m.put("stop", Kind.TEXT);
        m.put("bad_words", Kind.TEXT);
        m.put("end_id", Kind.INT);
        m.put("pad_id", Kind.INT);
        m.put("beam_width", Kind.INT);
        m.put("length_penalty", Kind.FLOAT);
        m.put("ignore_eos", Kind.BOOL);
        m.put("stream", Kind.BOOL);
        m.put("exclude_input_in_output", Kind.BOOL);
        m.put("return_log_probs", Kind.BOOL);
        m.put("return_context_logits", Kind.BOOL);
        m.put("return_generation_logits", Kind.BOOL);
        m.put("timeout", Kind.INT);
        // Triton's reserved request parameters, which its clients and perf_analyzer send
        m.put("triton_enable_empty_final_response", Kind.BOOL);
        m.put("priority", Kind.INT);
        m.put("sequence_id", Kind.INT);
        m.put("sequence_start", Kind.BOOL);
        m.put("sequence_end", Kind.BOOL);
        return java.util.Collections.unmodifiableMap(m);
    }

    /** Names that mean the same thing; a request may give one of each pair. */
    private static final Map<String, String> SAME = Map.of("seed", "random_seed", "min_tokens", "min_length",
            "stop", "stop_words");

    /**
     * Reads {@code values} (name to a value or a flat list of values: String, Number, Boolean).
     *
     * @throws ApiException 400 naming the input that is unknown, of the wrong kind or out of range
     */
    static KServeInputs parse(Map<String, List<Object>> values) {
        for (String name : values.keySet()) {
            if (!INPUTS.containsKey(name)) {
                throw bad("unexpected input '" + name + "'; this model takes " + String.join(", ", INPUTS.keySet()));
            }
        }
        SAME.forEach((a, b) -> {
            if (values.containsKey(a) && values.containsKey(b)) {
                throw bad("inputs '" + a + "' and '" + b + "' mean the same; give one");
            }
        });
        List<Object> text = values.get("text_input");
        if (text == null || text.isEmpty()) {
            throw bad("the input 'text_input' is required");
        }
        List<String> prompts = texts("text_input", text);
        int maxTokens = integer(values, "max_tokens", DEFAULT_MAX_TOKENS);
        if (maxTokens < 1) {
            throw bad("max_tokens must be >= 1, got " + maxTokens);
        }
        if (integer(values, "beam_width", 1) != 1) {
            throw bad("beam_width " + integer(values, "beam_width", 1) + ": beam search is not supported (use 1)");
        }
        for (String logits : List.of("return_context_logits", "return_generation_logits")) {
            if (bool(values, logits, false)) {
                throw bad(logits + ": returning logits is not supported");
            }
        }
        integer(values, "pad_id", 0);   // checked for kind only: padding does not exist without batch tensors
        // a final response always ends a decoupled request (empty when the last step added no text), so
        // triton_enable_empty_final_response true or false is what happens anyway
        bool(values, "triton_enable_empty_final_response", false);
        if (integer(values, "priority", 0) != 0) {
            throw bad("priority " + integer(values, "priority", 0) + ": request priorities are not supported (use 0)");
        }
        if (integer(values, "sequence_id", 0) != 0 || bool(values, "sequence_start", false)
                || bool(values, "sequence_end", false)) {
            throw bad("sequence_id / sequence_start / sequence_end: sequence batching (stateful models) is not"
                    + " supported; send each request on its own");
        }
        int endId = integer(values, "end_id", -1);
        if (endId < -1) {
            throw bad("end_id must be a token id >= 0, got " + endId);
        }
        number(values, "length_penalty", 1);   // applies to beam search only, as in TensorRT-LLM
        int topK = integer(values, "top_k", 0);
        float topP = number(values, "top_p", 1);
        Long seed = values.containsKey("random_seed") || values.containsKey("seed")
                ? whole(values, values.containsKey("seed") ? "seed" : "random_seed") : null;
        SamplingParams sampling;
        try {
            sampling = new SamplingParams(number(values, "temperature", 1), topK == 0 ? -1 : topK,
                    topP == 0 ? 1 : topP,   // 0 disables top-p in TensorRT-LLM
                    number(values, "min_p", 0), number(values, "repetition_penalty", 1),
                    number(values, "presence_penalty", 0), number(values, "frequency_penalty", 0), Map.of(), seed,
                    bool(values, "return_log_probs", false) ? 1 : 0);
        } catch (RequestValidationException e) {
            throw bad(e.getMessage());
        }
        int minTokens = integer(values, values.containsKey("min_tokens") ? "min_tokens" : "min_length", 0);
        if (minTokens < 0) {
            throw bad("min_length must be >= 0, got " + minTokens);
        }
        List<String> stop = nonEmpty(values, values.containsKey("stop") ? "stop" : "stop_words");
        return new KServeInputs(prompts, maxTokens, sampling, minTokens, stop, nonEmpty(values, "bad_words"),
                endId, bool(values, "ignore_eos", false),
                bool(values, "exclude_input_in_output", false),
                values.containsKey("stream") ? bool(values, "stream", false) : null,
                bool(values, "return_log_probs", false), timeout(values));
    }

    private static long timeout(Map<String, List<Object>> values) {
        Object o = scalar(values, "timeout");
        if (o == null) {
            return 0;
        }
        if (o instanceof Number n && !(o instanceof Double) && n.longValue() > 0) {
            return n.longValue();
        }
        throw bad("parameter 'timeout' takes a whole number of microseconds > 0, got " + describe(o));
    }

    static ApiException bad(String message) {
        return ApiException.invalid(null, message);
    }

    private static List<String> texts(String name, List<Object> v) {
        List<String> out = new ArrayList<>();
        for (Object o : v) {
            if (!(o instanceof String s)) {
                throw bad("input '" + name + "' takes strings (BYTES), got " + describe(o));
            }
            out.add(s);
        }
        return out;
    }

    private static List<String> nonEmpty(Map<String, List<Object>> values, String name) {
        List<Object> v = values.get(name);
        if (v == null) {
            return List.of();
        }
        return texts(name, v).stream().filter(s -> !s.isEmpty()).toList();
    }

    private static Object scalar(Map<String, List<Object>> values, String name) {
        List<Object> v = values.get(name);
        if (v == null) {
            return null;
        }
        if (v.size() != 1) {
            throw bad("input '" + name + "' takes one value, got " + v.size());
        }
        return v.getFirst();
    }

    private static int integer(Map<String, List<Object>> values, String name, int absent) {
        Object o = scalar(values, name);
        if (o == null) {
            return absent;
        }
        if (o instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
            if (n.doubleValue() > Integer.MAX_VALUE || n.doubleValue() < Integer.MIN_VALUE) {
                throw bad("input '" + name + "' is out of range: " + o);
            }
            return n.intValue();
        }
        throw bad("input '" + name + "' takes an integer, got " + describe(o));
    }

    /** A 64-bit whole number (a seed: UINT64 as Triton sends it, read as its bits). */
    private static long whole(Map<String, List<Object>> values, String name) {
        Object o = scalar(values, name);
        if (o instanceof Number n && !(o instanceof Double) && !(o instanceof Float)) {
            return n.longValue();
        }
        if (o instanceof Double d && d == Math.rint(d) && Math.abs(d) < 0x1p63) {
            return d.longValue();
        }
        throw bad("input '" + name + "' takes an integer, got " + describe(o));
    }

    private static float number(Map<String, List<Object>> values, String name, float absent) {
        Object o = scalar(values, name);
        if (o == null) {
            return absent;
        }
        if (o instanceof Number n && !(o instanceof Boolean)) {
            return n.floatValue();
        }
        throw bad("input '" + name + "' takes a number, got " + describe(o));
    }

    private static boolean bool(Map<String, List<Object>> values, String name, boolean absent) {
        Object o = scalar(values, name);
        if (o == null) {
            return absent;
        }
        if (o instanceof Boolean b) {
            return b;
        }
        throw bad("input '" + name + "' takes a boolean, got " + describe(o));
    }

    private static String describe(Object o) {
        return switch (o) {
            case null -> "null";
            case String s -> "a string";
            case Boolean b -> "a boolean";
            case Number n -> "the number " + n;
            default -> o.getClass().getSimpleName();
        };
    }
}
