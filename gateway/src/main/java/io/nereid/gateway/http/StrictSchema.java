package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * OpenAI's strict-mode rules for {@code response_format.json_schema} with {@code strict: true}:
 * the root is an object, every object sets {@code additionalProperties: false} and requires every
 * property, and the keywords strict mode does not support are absent. A break is a 400 worded as
 * OpenAI words it ({@code Invalid schema for response_format 'NAME': In context=(...), ...}). Pure.
 */
final class StrictSchema {

    private static final Set<String> NOT_PERMITTED = Set.of("allOf", "not", "if", "then", "else", "dependentRequired",
            "dependentSchemas", "patternProperties", "unevaluatedProperties", "propertyNames", "minProperties",
            "maxProperties", "uniqueItems", "contains", "oneOf");

    private StrictSchema() {
    }

    /** @throws ApiException 400 ({@code response_format}) at the first break of a strict-mode rule */
    static void check(JsonNode schema, String name) {
        check(schema, name, "response_format");
    }

    /** As {@link #check(JsonNode, String)}, the 400 naming {@code param} (a tool's parameters: OpenAI's wording for functions). */
    static void check(JsonNode schema, String name, String param) {
        JsonNode type = schema.get("type");
        if (type == null || !type.isTextual() || !type.asText().equals("object")) {
            throw fail(param, name, List.of(), "schema must be a JSON Schema of 'type: \"object\"', got 'type: \""
                    + (type == null ? "None" : type.isTextual() ? type.asText() : type.toString()) + "\"'.");
        }
        walk(schema, param, name, new ArrayList<>());
    }

    private static void walk(JsonNode s, String param, String name, List<String> context) {
        if (!s.isObject()) {
            return;
        }
        for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (NOT_PERMITTED.contains(k)) {
                throw fail(param, name, context, "'" + k + "' is not permitted.");
            }
        }
        JsonNode type = s.get("type");
        boolean object = type != null && (type.isTextual() ? type.asText().equals("object")
                : type.isArray() && contains(type, "object")) || s.has("properties");
        if (object) {
            JsonNode ap = s.get("additionalProperties");
            if (ap == null || !ap.isBoolean() || ap.asBoolean()) {
                throw fail(param, name, context, "'additionalProperties' is required to be supplied and to be false.");
            }
            JsonNode props = s.get("properties");
            JsonNode required = s.get("required");
            if (props != null && props.isObject()) {
                for (Iterator<String> it = props.fieldNames(); it.hasNext(); ) {
                    String p = it.next();
                    if (required == null || !required.isArray() || !contains(required, p)) {
                        throw fail(param, name, context, "'required' is required to be supplied and to be an array including every"
                                + " key in properties. Missing '" + p + "'.");
                    }
                }
                for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    walk(e.getValue(), param, name, with(context, "properties", e.getKey()));
                }
            }
        }
        JsonNode items = s.get("items");
        if (items != null) {
            walk(items, param, name, with(context, "items"));
        }
        JsonNode anyOf = s.get("anyOf");
        if (anyOf != null && anyOf.isArray()) {
            for (int i = 0; i < anyOf.size(); i++) {
                walk(anyOf.get(i), param, name, with(context, "anyOf", String.valueOf(i)));
            }
        }
        for (String defs : List.of("$defs", "definitions")) {
            JsonNode d = s.get(defs);
            if (d != null && d.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> it = d.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    walk(e.getValue(), param, name, with(context, defs, e.getKey()));
                }
            }
        }
    }

    private static boolean contains(JsonNode array, String v) {
        for (JsonNode x : array) {
            if (x.isTextual() && x.asText().equals(v)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> with(List<String> context, String... more) {
        List<String> out = new ArrayList<>(context);
        out.addAll(List.of(more));
        return out;
    }

    private static ApiException fail(String param, String name, List<String> context, String what) {
        StringBuilder c = new StringBuilder("(");
        for (int i = 0; i < context.size(); i++) {
            c.append(i > 0 ? ", " : "").append('\'').append(context.get(i)).append('\'');
        }
        if (context.size() == 1) {
            c.append(',');
        }
        c.append(')');
        String subject = param.equals("response_format") ? "response_format '" + name + "'" : "function '" + name + "'";
        return ApiException.invalid(param, "Invalid schema for " + subject + ": In context=" + c + ", " + what);
    }
}
