package io.nereid.engine.api;

import java.util.List;

/**
 * How a model writes a tool call, as its chat template teaches it (vLLM's tool-call parsers):
 * the grammar that forces or constrains a call and the parser that reads it back share this.
 *
 * <p>The calls are {@link #blockOpen}, then each call as {@link #callOpen}, {@code {"name": "f",
 * "ARGS": {...}}}, {@link #callClose}, calls separated by {@link #separator}, then
 * {@link #blockClose}. A {@link #markers marker} is written as the vocabulary's special token of
 * that text where it has one (Mistral's {@code [TOOL_CALLS]} is a control token); the text read
 * back holds it as its text either way.
 */
public enum ToolCallFormat {

    /** Hermes / Qwen 2.5 / Qwen 3: {@code <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>}, calls one per line. */
    HERMES("hermes", "", "<tool_call>\n", "\n</tool_call>", "\n", "", "arguments", List.of("<tool_call>", "</tool_call>")),

    /** Llama 3.1 / 3.2 JSON tool calling: {@code {"name": "f", "parameters": {...}}}, calls separated by {@code "; "}. */
    LLAMA3_JSON("llama3_json", "", "", "", "; ", "", "parameters", List.of()),

    /** Mistral (v0.3 and later vocabularies): {@code [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]}. */
    MISTRAL("mistral", "[TOOL_CALLS][", "", "", ", ", "]", "arguments", List.of("[TOOL_CALLS]"));

    private final String parserName;
    private final String blockOpen;
    private final String callOpen;
    private final String callClose;
    private final String separator;
    private final String blockClose;
    private final String argumentsKey;
    private final List<String> markers;

    ToolCallFormat(String parserName, String blockOpen, String callOpen, String callClose, String separator,
            String blockClose, String argumentsKey, List<String> markers) {
        this.parserName = parserName;
        this.blockOpen = blockOpen;
        this.callOpen = callOpen;
        this.callClose = callClose;
        this.separator = separator;
        this.blockClose = blockClose;
        this.argumentsKey = argumentsKey;
        this.markers = markers;
    }

    /** vLLM's {@code --tool-call-parser} name. */
    public String parserName() {
        return parserName;
    }

    /** What starts the calls, once ("" for most formats). */
    public String blockOpen() {
        return blockOpen;
    }

    /** What starts each call ("" when the call is bare JSON). */
    public String callOpen() {
        return callOpen;
    }

    /** What ends each call. */
    public String callClose() {
        return callClose;
    }

    /** What goes between two calls. */
    public String separator() {
        return separator;
    }

    /** What ends the calls, once. */
    public String blockClose() {
        return blockClose;
    }

    /** What opens the first call: {@link #blockOpen} and {@link #callOpen} ("" for bare JSON calls). */
    public String opening() {
        return blockOpen + callOpen;
    }

    /** What comes between one call's JSON and the next one's: {@link #callClose}, {@link #separator}, {@link #callOpen}. */
    public String between() {
        return callClose + separator + callOpen;
    }

    /** The texts written as special tokens where the vocabulary has them. */
    public List<String> markers() {
        return markers;
    }

    /** The key of the arguments object in a call's JSON. */
    public String argumentsKey() {
        return argumentsKey;
    }

    /** The call's JSON up to its arguments: {@code {"name": "f", "arguments": }. */
    public String head(String function) {
        return "{\"name\": \"" + function + "\", \"" + argumentsKey + "\": ";
    }

    /** The format named {@code name} ({@code hermes}, {@code llama3_json}, {@code mistral}), or null. */
    public static ToolCallFormat named(String name) {
        for (ToolCallFormat f : values()) {
            if (f.parserName.equals(name)) {
                return f;
            }
        }
        return null;
    }

    /** The format a chat template's source teaches, or null when it shows none. */
    public static ToolCallFormat detect(String templateSource) {
        if (templateSource == null) {
            return null;
        }
        if (templateSource.contains("<tool_call>")) {
            return HERMES;
        }
        if (templateSource.contains("[TOOL_CALLS]")) {
            return MISTRAL;
        }
        if (templateSource.contains("\"parameters\": ") && templateSource.contains("tools")
                && (templateSource.contains("<|python_tag|>") || templateSource.contains("ipython"))) {
            return LLAMA3_JSON;
        }
        return null;
    }
}
