package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nereid.engine.api.Constraint;
import io.nereid.engine.api.ToolCallFormat;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A chat request's {@code tools}, {@code tool_choice} and {@code parallel_tool_calls}, checked as
 * OpenAI checks them; or OpenAI's deprecated {@code functions} and {@code function_call}, which are
 * the same with one call at most, answered as {@code message.function_call} ({@code legacy}).
 *
 * @param definitions the tools as the chat template gets them (OpenAI's shape, plain Java values)
 * @param functions   each function's name and parameter schema (JSON text)
 * @param choice      {@code none}, {@code auto}, {@code required}, or null when {@code named} is given
 * @param named       the function tool_choice forces, or null
 * @param parallel    whether several calls may come in one turn
 * @param format      how the model writes calls; null until the route knows the model
 * @param legacy      sent as {@code functions} / {@code function_call}: the call is answered in their shape
 * @param answer      {@code response_format} (or another structured-output field) sent with the tools: what the
 *                    model writes when it does not call a tool; null for free text
 */
record ToolsRequest(List<Map<String, Object>> definitions, List<Constraint.Tool> functions, String choice, String named,
        boolean parallel, ToolCallFormat format, boolean legacy, StructuredOutputs.Parsed answer) {

    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,64}");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String EMPTY_PARAMETERS = "{\"type\":\"object\",\"properties\":{}}";

    /** Whether the model may call tools in this request (tool_choice is not "none"). */
    boolean active() {
        return !"none".equals(choice);
    }

    ToolsRequest withFormat(ToolCallFormat f) {
        return new ToolsRequest(definitions, functions, choice, named, parallel, f, legacy, answer);
    }

    /** These tools with {@code response_format} (or a guided field) for the answer that is not a call. */
    ToolsRequest withAnswer(StructuredOutputs.Parsed a) {
        return new ToolsRequest(definitions, functions, choice, named, parallel, format, legacy, a);
    }

    /** Whether the output must be calls: tool_choice {@code required} or a named function. */
    boolean forced() {
        return named != null || "required".equals(choice);
    }

    /**
     * The constraint the output follows: forced calls for required or a named function (a
     * response_format then waits for a later turn's answer), else a lazy one whose text, when there is
     * a response_format, is that format's.
     */
    Constraint constraint() {
        return new Constraint.ToolCalls(format, functions, named, forced(), parallel,
                forced() || answer == null ? null : answer.constraint());
    }

    /** The field the request sent its tools in: {@code tools}, or the deprecated {@code functions}. */
    String toolsField() {
        return toolsField(legacy);
    }

    private static String toolsField(boolean legacy) {
        return legacy ? "functions" : "tools";
    }

    /** The request's tools (or legacy functions), or null when it has none. @throws ApiException 400 naming the field */
    static ToolsRequest parse(JsonNode body) {
        boolean hasTools = present(body.get("tools")) || present(body.get("tool_choice"));
        boolean hasFunctions = present(body.get("functions")) || present(body.get("function_call"));
        if (hasTools && hasFunctions) {
            throw ApiException.invalid(present(body.get("functions")) ? "functions" : "function_call", "send 'tools' and"
                    + " 'tool_choice' or the deprecated 'functions' and 'function_call', not both");
        }
        return hasFunctions ? parse(body.get("functions"), legacyChoice(body.get("function_call")), null, true)
                : parse(body.get("tools"), body.get("tool_choice"), body.get("parallel_tool_calls"), false);
    }

    private static boolean present(JsonNode v) {
        return v != null && !v.isNull() && !(v.isArray() && v.isEmpty());
    }

    /** {@code function_call} ({@code "none"}, {@code "auto"} or {@code {"name": ...}}) as the tool_choice it means. */
    private static JsonNode legacyChoice(JsonNode c) {
        if (c == null || c.isNull()) {
            return null;
        }
        if (c.isTextual() && Set.of("none", "auto").contains(c.asText())) {
            return c;
        }
        if (c.isObject() && c.path("name").isTextual() && c.size() == 1) {
            ObjectNode choice = JSON.createObjectNode().put("type", "function");
            choice.putObject("function").put("name", c.get("name").asText());
            return choice;
        }
        throw ApiException.invalid("function_call", "'function_call' must be 'none', 'auto' or {\"name\": ...}");
    }

    @SuppressWarnings("unchecked")
    private static ToolsRequest parse(JsonNode tools, JsonNode choice, JsonNode parallel, boolean legacy) {
        String toolsField = toolsField(legacy);
        String choiceField = legacy ? "function_call" : "tool_choice";
        if (parallel != null && !parallel.isNull() && !parallel.isBoolean()) {
            throw ApiException.invalid("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
        }
        if (!present(tools)) {
            if (choice != null && !choice.isNull() && !(choice.isTextual() && choice.asText().equals("none"))) {
                throw ApiException.invalid(choiceField, "'" + choiceField + "' is only allowed when '" + toolsField
                        + "' are specified");
            }
            return null;
        }
        if (!tools.isArray()) {
            throw ApiException.invalid(toolsField, legacy ? "'functions' must be an array of {\"name\", \"description\","
                    + " \"parameters\"}" : "'tools' must be an array of {\"type\": \"function\", \"function\": {...}}");
        }
        List<Map<String, Object>> definitions = new ArrayList<>();
        List<Constraint.Tool> functions = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < tools.size(); i++) {
            JsonNode t = tools.get(i);
            String at;
            JsonNode f;
            if (legacy) {
                at = "functions[" + i + "]";
                f = t;
                if (!f.isObject()) {
                    throw ApiException.invalid(at, "'" + at + "' must be an object {\"name\", \"description\", \"parameters\"}");
                }
                t = JSON.createObjectNode().put("type", "function").set("function", f);
            } else {
                at = "tools[" + i + "]";
                if (!t.isObject() || !t.path("type").isTextual()) {
                    throw ApiException.invalid(at, "'" + at + "' must be an object with 'type': 'function'");
                }
                if (!t.get("type").asText().equals("function")) {
                    throw ApiException.unsupported(at + ".type", "tools of type '" + t.get("type").asText() + "' (only function)");
                }
                f = t.get("function");
                if (f == null || !f.isObject()) {
                    throw ApiException.invalid(at + ".function", "'" + at + ".function' must be an object");
                }
                at = at + ".function";
            }
            JsonNode name = f.get("name");
            if (name == null || !name.isTextual() || !NAME.matcher(name.asText()).matches()) {
                throw ApiException.invalid(at + ".name", "'" + at + ".name' must be a string of 1 to 64"
                        + " letters, digits, '_' or '-'");
            }
            if (!names.add(name.asText())) {
                throw ApiException.invalid(at + ".name", "two tools are named '" + name.asText() + "'");
            }
            JsonNode description = f.get("description");
            if (description != null && !description.isNull() && !description.isTextual()) {
                throw ApiException.invalid(at + ".description", "'" + at + ".description' must be a string");
            }
            JsonNode parameters = f.get("parameters");
            if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
                throw ApiException.invalid(at + ".parameters", "'" + at + ".parameters' must be a JSON Schema object");
            }
            JsonNode strict = f.get("strict");
            if (strict != null && !strict.isNull() && !strict.isBoolean()) {
                throw ApiException.invalid(at + ".strict", "'" + at + ".strict' must be a boolean");
            }
            String schema = parameters == null || parameters.isNull() ? EMPTY_PARAMETERS : parameters.toString();
            if (strict != null && strict.asBoolean() && parameters != null && parameters.isObject()) {
                StrictSchema.check(parameters, name.asText(), at + ".parameters");
            }
            functions.add(new Constraint.Tool(name.asText(), schema));
            definitions.add(JSON.convertValue(t, Map.class));
        }
        String mode = "auto";
        String named = null;
        if (choice != null && !choice.isNull()) {
            if (choice.isTextual()) {
                mode = choice.asText();
                if (!Set.of("none", "auto", "required").contains(mode)) {
                    throw ApiException.invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or"
                            + " {\"type\": \"function\", \"function\": {\"name\": ...}}, got '" + mode + "'");
                }
            } else if (choice.isObject() && "function".equals(choice.path("type").asText())
                    && choice.path("function").path("name").isTextual()) {
                named = choice.get("function").get("name").asText();
                mode = null;
                if (!names.contains(named)) {
                    throw ApiException.invalid(choiceField, "'" + choiceField + "' names function '" + named
                            + "', which is not in '" + toolsField + "' " + names);
                }
            } else {
                throw ApiException.invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or"
                        + " {\"type\": \"function\", \"function\": {\"name\": ...}}");
            }
        }
        // the deprecated functions make one call at most (message.function_call has room for one)
        return new ToolsRequest(List.copyOf(definitions), List.copyOf(functions), mode, named,
                !legacy && (parallel == null || parallel.isNull() || parallel.asBoolean()), null, legacy, null);
    }
}
