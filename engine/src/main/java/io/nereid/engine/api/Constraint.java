package io.nereid.engine.api;

import java.util.List;

/**
 * What a request's output must match, enforced token by token by a grammar (structured output):
 * OpenAI's {@code response_format}, vLLM's {@code guided_*} / {@code structured_outputs}. The
 * engine compiles it against the model's vocabulary ({@link Engine#prepare}) and masks every
 * token that could not continue into a match; EOS is allowed only where the output may end.
 * Immutable.
 */
public sealed interface Constraint {

    /** A text naming the constraint exactly: the compile cache's key. */
    String key();

    /**
     * JSON that validates against {@code schema} (JSON Schema text); {@code {"type":"object"}} for
     * {@code json_object}.
     *
     * @param freeWhitespace whether whitespace may appear between JSON tokens (else compact JSON)
     */
    record JsonSchema(String schema, boolean freeWhitespace) implements Constraint {
        /** OpenAI's {@code json_object}: any JSON object. */
        public static final JsonSchema ANY_OBJECT = new JsonSchema("{\"type\":\"object\"}", false);

        @Override
        public String key() {
            return "json" + (freeWhitespace ? "+ws:" : ":") + schema;
        }
    }

    /** Output that matches {@code pattern} in full (ECMA-262 syntax). */
    record Regex(String pattern) implements Constraint {
        @Override
        public String key() {
            return "regex:" + pattern;
        }
    }

    /** Output that is exactly one of {@code options}. */
    record Choice(List<String> options) implements Constraint {
        public Choice {
            options = List.copyOf(options);
        }

        @Override
        public String key() {
            StringBuilder b = new StringBuilder("choice:");
            for (String o : options) {
                b.append(o.length()).append(':').append(o);
            }
            return b.toString();
        }
    }

    /**
     * Tool calls in the model's syntax: with {@code required} the output is one call (or several
     * with {@code parallel}) and nothing else; without, the model may write text and, once it
     * opens a call, the call is constrained (a lazy grammar). {@code forced} names the one
     * function allowed (tool_choice naming a function), or is null for any of {@code tools}.
     * {@code answer}, when not null and the calls are not required, is what the output must be when it
     * is not calls ({@code response_format} sent with tools): the output is then either the calls or
     * the answer, nothing before the calls.
     */
    record ToolCalls(ToolCallFormat format, List<Tool> tools, String forced, boolean required, boolean parallel,
            Constraint answer) implements Constraint {
        public ToolCalls {
            tools = List.copyOf(tools);
        }

        /** Calls and free text (no constraint on an answer that is not a call). */
        public ToolCalls(ToolCallFormat format, List<Tool> tools, String forced, boolean required, boolean parallel) {
            this(format, tools, forced, required, parallel, null);
        }

        @Override
        public String key() {
            StringBuilder b = new StringBuilder("tools:").append(format).append(':').append(forced).append(':')
                    .append(required).append(':').append(parallel);
            if (answer != null) {
                String a = answer.key();
                b.append(":answer:").append(a.length()).append(':').append(a);
            }
            for (Tool t : tools) {
                b.append(':').append(t.name().length()).append(':').append(t.name()).append(t.parameters().length())
                        .append(':').append(t.parameters());
            }
            return b.toString();
        }
    }

    /**
     * A model that thinks first ({@code <think>...</think>}, DeepSeek-R1, Qwen 3): the thought is
     * free, {@code answer} constrains what follows it. {@code startsInThought}: the prompt already
     * opened the thought (DeepSeek-R1's template ends with {@code <think>}), so the output must
     * close it; else a thought is optional at the start.
     */
    record AfterThinking(Constraint answer, boolean startsInThought) implements Constraint {
        public static final String START = "<think>";
        public static final String END = "</think>";

        @Override
        public String key() {
            return "think:" + startsInThought + ":" + answer.key();
        }
    }

    /** A function the model may call: its name and its parameters' JSON Schema (text). */
    record Tool(String name, String parameters) {
    }

    /** Output in the language of a GBNF / EBNF grammar (llama.cpp's syntax; the start rule is {@code root}). */
    record Grammar(String ebnf) implements Constraint {
        @Override
        public String key() {
            return "grammar:" + ebnf;
        }
    }
}
