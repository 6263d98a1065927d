package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * OpenAI checks them.
 *
 * @param definitions the tools as the chat template gets them (OpenAI's shape, plain Java values)
 * @param functions   each function's name and parameter schema (JSON text)
 * @param choice      {@code none}, {@code auto}, {@code required}, or null when {@code named} is given
 * @param named       the function tool_choice forces, or null
 * @param parallel    whether several calls may come in one turn
 * @param format      how the model writes calls; null until the route knows the model
 */
record ToolsRequest(List<Map<String, Object>> definitions, List<Constraint.Tool> functions, String choice, String named,
        boolean parallel, ToolCallFormat format) {

    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,64}");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String EMPTY_PARAMETERS = "{\"type\":\"object\",\"properties\":{}}";

    /** Whether the model may call tools in this request (tool_choice is not "none"). */
    boolean active() {
        return !"none".equals(choice);
    }

    ToolsRequest withFormat(ToolCallFormat f) {
        return new ToolsRequest(definitions, functions, choice, named, parallel, f);
    }

    /** The constraint the output follows: forced calls for required or a named function, else a lazy one. */
    Constraint constraint() {
        return new Constraint.ToolCalls(format, functions, named, named != null || "required".equals(choice), parallel);
    }

    /** The request's tools, or null when it has none. @throws ApiException 400 naming the field */
    @SuppressWarnings("unchecked")
    static ToolsRequest parse(JsonNode body) {
        JsonNode tools = body.get("tools");
        JsonNode choice = body.get("tool_choice");
        JsonNode parallel = body.get("parallel_tool_calls");
        if (parallel != null && !parallel.isNull() && !parallel.isBoolean()) {
            throw ApiException.invalid("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
        }
        if (tools == null || tools.isNull() || (tools.isArray() && tools.isEmpty())) {
            if (choice != null && !choice.isNull() && !(choice.isTextual() && choice.asText().equals("none"))) {
                throw ApiException.invalid("tool_choice", "'tool_choice' is only allowed when 'tools' are specified");
            }
            return null;
        }
        if (!tools.isArray()) {
            throw ApiException.invalid("tools", "'tools' must be an array of {\"type\": \"function\", \"function\": {...}}");
        }
        List<Map<String, Object>> definitions = new ArrayList<>();
        List<Constraint.Tool> functions = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < tools.size(); i++) {
            String at = "tools[" + i + "]";
            JsonNode t = tools.get(i);
            if (!t.isObject() || !t.path("type").isTextual()) {
                throw ApiException.invalid(at, "'" + at + "' must be an object with 'type': 'function'");
            }
            if (!t.get("type").asText().equals("function")) {
                throw ApiException.unsupported(at + ".type", "tools of type '" + t.get("type").asText() + "' (only function)");
            }
            JsonNode f = t.get("function");
            if (f == null || !f.isObject()) {
                throw ApiException.invalid(at + ".function", "'" + at + ".function' must be an object");
            }
            JsonNode name = f.get("name");
            if (name == null || !name.isTextual() || !NAME.matcher(name.asText()).matches()) {
                throw ApiException.invalid(at + ".function.name", "'" + at + ".function.name' must be a string of 1 to 64"
                        + " letters, digits, '_' or '-'");
            }
            if (!names.add(name.asText())) {
                throw ApiException.invalid(at + ".function.name", "two tools are named '" + name.asText() + "'");
            }
            JsonNode description = f.get("description");
            if (description != null && !description.isNull() && !description.isTextual()) {
                throw ApiException.invalid(at + ".function.description", "'" + at + ".function.description' must be a string");
            }
            JsonNode parameters = f.get("parameters");
            if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
                throw ApiException.invalid(at + ".function.parameters", "'" + at + ".function.parameters' must be a JSON Schema object");
            }
            JsonNode strict = f.get("strict");
            if (strict != null && !strict.isNull() && !strict.isBoolean()) {
                throw ApiException.invalid(at + ".function.strict", "'" + at + ".function.strict' must be a boolean");
            }
            String schema = parameters == null || parameters.isNull() ? EMPTY_PARAMETERS : parameters.toString();
            if (strict != null && strict.asBoolean() && parameters != null && parameters.isObject()) {
                StrictSchema.check(parameters, name.asText(), at + ".function.parameters");
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
                    throw ApiException.invalid("tool_choice", "'tool_choice' names function '" + named
                            + "', which is not in 'tools' " + names);
                }
            } else {
                throw ApiException.invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or"
                        + " {\"type\": \"function\", \"function\": {\"name\": ...}}");
            }
        }
        return new ToolsRequest(List.copyOf(definitions), List.copyOf(functions), mode, named,
                parallel == null || parallel.isNull() || parallel.asBoolean(), null);
    }
}
