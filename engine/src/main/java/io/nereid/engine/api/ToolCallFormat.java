package io.nereid.engine.api;

/**
 * How a model writes a tool call, as its chat template teaches it (vLLM's tool-call parsers):
 * the grammar that forces or constrains a call and the parser that reads it back share this.
 */
public enum ToolCallFormat {

    /** Hermes / Qwen 2.5 / Qwen 3: {@code <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>}, calls one per line. */
    HERMES("hermes", "<tool_call>\n", "\n</tool_call>", "\n", "arguments"),

    /** Llama 3.1 / 3.2 JSON tool calling: {@code {"name": "f", "parameters": {...}}}, calls separated by {@code "; "}. */
    LLAMA3_JSON("llama3_json", "", "", "; ", "parameters");

    private final String parserName;
    private final String open;
    private final String close;
    private final String separator;
    private final String argumentsKey;

    ToolCallFormat(String parserName, String open, String close, String separator, String argumentsKey) {
        this.parserName = parserName;
        this.open = open;
        this.close = close;
        this.separator = separator;
        this.argumentsKey = argumentsKey;
    }

    /** vLLM's {@code --tool-call-parser} name. */
    public String parserName() {
        return parserName;
    }

    /** What starts a call ("" when the call is bare JSON). */
    public String open() {
        return open;
    }

    /** What ends a call. */
    public String close() {
        return close;
    }

    /** What goes between two calls. */
    public String separator() {
        return separator;
    }

    /** The key of the arguments object in a call's JSON. */
    public String argumentsKey() {
        return argumentsKey;
    }

    /** The call's JSON up to its arguments: {@code {"name": "f", "arguments": }. */
    public String head(String function) {
        return "{\"name\": \"" + function + "\", \"" + argumentsKey + "\": ";
    }

    /** The format named {@code name} ({@code hermes}, {@code llama3_json}), or null. */
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
        if (templateSource.contains("\"parameters\": ") && templateSource.contains("tools")
                && (templateSource.contains("<|python_tag|>") || templateSource.contains("ipython"))) {
            return LLAMA3_JSON;
        }
        return null;
    }
}
