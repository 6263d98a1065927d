package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.engine.api.Constraint;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The structured-output fields of a completion request as one engine {@link Constraint}: OpenAI's
 * {@code response_format} ({@code text}, {@code json_object}, {@code json_schema} with its strict
 * mode's rules), vLLM's legacy {@code guided_json} / {@code guided_regex} / {@code guided_choice} /
 * {@code guided_grammar}, and its newer {@code structured_outputs} object. At most one may be
 * given; every error is a 400 naming the field. Pure and stateless.
 */
final class StructuredOutputs {

    /** The fields this class reads (the validator accepts them). */
    static final Set<String> FIELDS = Set.of("response_format", "guided_json", "guided_regex", "guided_choice",
            "guided_grammar", "structured_outputs");
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,64}");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A constraint and the request field it came from (errors compiling it are reported under that name). */
    record Parsed(Constraint constraint, String param) {
    }

    private StructuredOutputs() {
    }

    /** The request's constraint, or null when it asks for none. @throws ApiException 400 naming the field */
    static Parsed parse(JsonNode body) {
        List<Parsed> found = new ArrayList<>();
        for (String f : List.of("response_format", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
                "structured_outputs")) {
            JsonNode v = body.get(f);
            if (v == null || v.isNull()) {
                continue;
            }
            Parsed p = switch (f) {
                case "response_format" -> responseFormat(v);
                case "guided_json" -> new Parsed(new Constraint.JsonSchema(schemaText(v, f), false), f);
                case "guided_regex" -> new Parsed(new Constraint.Regex(text(v, f)), f);
                case "guided_choice" -> new Parsed(new Constraint.Choice(choices(v, f)), f);
                case "guided_grammar" -> new Parsed(new Constraint.Grammar(text(v, f)), f);
                default -> structuredOutputs(v);
            };
            if (p != null) {
                found.add(p);
            }
        }
        if (found.size() > 1) {
            throw ApiException.invalid(found.get(1).param(), "only one structured-output constraint may be given, got '"
                    + found.get(0).param() + "' and '" + found.get(1).param() + "'");
        }
        return found.isEmpty() ? null : found.get(0);
    }

    private static Parsed responseFormat(JsonNode v) {
        String f = "response_format";
        if (!v.isObject()) {
            throw ApiException.invalid(f, "'response_format' must be an object");
        }
        JsonNode type = v.get("type");
        if (type == null || !type.isTextual()) {
            throw ApiException.invalid(f + ".type", "'response_format.type' is required: 'text', 'json_object' or 'json_schema'");
        }
        return switch (type.asText()) {
            case "text" -> null;
            case "json_object" -> new Parsed(Constraint.JsonSchema.ANY_OBJECT, f);
            case "json_schema" -> {
                JsonNode js = v.get("json_schema");
                if (js == null || !js.isObject()) {
                    throw ApiException.invalid(f + ".json_schema", "'response_format.json_schema' must be an object");
                }
                JsonNode name = js.get("name");
                if (name == null || !name.isTextual() || !NAME.matcher(name.asText()).matches()) {
                    throw ApiException.invalid(f + ".json_schema.name", "'response_format.json_schema.name' must be a"
                            + " string of 1 to 64 letters, digits, '_' or '-'");
                }
                JsonNode schema = js.get("schema");
                if (schema == null || schema.isNull()) {
                    schema = JSON.createObjectNode();   // OpenAI: no schema means any JSON object
                    ((com.fasterxml.jackson.databind.node.ObjectNode) schema).put("type", "object");
                }
                if (!schema.isObject()) {
                    throw ApiException.invalid(f + ".json_schema.schema", "'response_format.json_schema.schema' must be an object");
                }
                JsonNode strict = js.get("strict");
                if (strict != null && !strict.isNull() && !strict.isBoolean()) {
                    throw ApiException.invalid(f + ".json_schema.strict", "'response_format.json_schema.strict' must be a boolean");
                }
                if (strict != null && strict.asBoolean()) {
                    StrictSchema.check(schema, name.asText());
                }
                yield new Parsed(new Constraint.JsonSchema(schema.toString(), false), f);
            }
            default -> throw ApiException.invalid(f + ".type", "'response_format.type' must be 'text', 'json_object' or"
                    + " 'json_schema', got '" + type.asText() + "'");
        };
    }

    private static Parsed structuredOutputs(JsonNode v) {
        String f = "structured_outputs";
        if (!v.isObject()) {
            throw ApiException.invalid(f, "'structured_outputs' must be an object");
        }
        boolean free = false;
        List<Parsed> kinds = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String k = e.getKey();
            JsonNode x = e.getValue();
            String at = f + "." + k;
            if (x.isNull()) {
                continue;
            }
            switch (k) {
                case "json" -> kinds.add(new Parsed(new Constraint.JsonSchema(schemaText(x, at), false), at));
                case "regex" -> kinds.add(new Parsed(new Constraint.Regex(text(x, at)), at));
                case "choice" -> kinds.add(new Parsed(new Constraint.Choice(choices(x, at)), at));
                case "grammar" -> kinds.add(new Parsed(new Constraint.Grammar(text(x, at)), at));
                case "json_object" -> {
                    if (!x.isBoolean()) {
                        throw ApiException.invalid(at, "'" + at + "' must be a boolean");
                    }
                    if (x.asBoolean()) {
                        kinds.add(new Parsed(Constraint.JsonSchema.ANY_OBJECT, at));
                    }
                }
                case "disable_any_whitespace" -> {
                    if (!x.isBoolean()) {
                        throw ApiException.invalid(at, "'" + at + "' must be a boolean");
                    }
                    free = !x.asBoolean();
                }
                case "disable_fallback", "disable_additional_properties" -> {
                    if (!x.isBoolean()) {
                        throw ApiException.invalid(at, "'" + at + "' must be a boolean");
                    }
                    if (k.equals("disable_additional_properties") && x.asBoolean()) {
                        throw ApiException.unsupported(at, "send false or leave it out");
                    }
                    // disable_fallback: there is one grammar engine and no fallback, so both values hold
                }
                default -> throw ApiException.unsupported(at, "Nereid supports json, regex, choice, grammar and json_object");
            }
        }
        if (kinds.size() != 1) {
            throw ApiException.invalid(f, "'structured_outputs' must give exactly one of json, regex, choice, grammar and"
                    + " json_object, got " + kinds.size());
        }
        Parsed p = kinds.get(0);
        if (free && p.constraint() instanceof Constraint.JsonSchema j) {
            p = new Parsed(new Constraint.JsonSchema(j.schema(), true), p.param());
        }
        return p;
    }

    /** A schema given as a JSON object or as its text. */
    private static String schemaText(JsonNode v, String at) {
        if (v.isObject() || v.isBoolean()) {
            return v.toString();
        }
        if (v.isTextual()) {
            try {
                JsonNode parsed = JSON.readTree(v.asText());
                if (parsed != null && (parsed.isObject() || parsed.isBoolean())) {
                    return parsed.toString();
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw ApiException.invalid(at, "'" + at + "' is not valid JSON: " + e.getOriginalMessage());
            }
        }
        throw ApiException.invalid(at, "'" + at + "' must be a JSON Schema (an object, or its text)");
    }

    private static String text(JsonNode v, String at) {
        if (!v.isTextual() || v.asText().isEmpty()) {
            throw ApiException.invalid(at, "'" + at + "' must be a non-empty string");
        }
        return v.asText();
    }

    private static List<String> choices(JsonNode v, String at) {
        if (!v.isArray() || v.isEmpty()) {
            throw ApiException.invalid(at, "'" + at + "' must be a non-empty array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode c : v) {
            if (!c.isTextual() || c.asText().isEmpty()) {
                throw ApiException.invalid(at, "'" + at + "' must hold non-empty strings only");
            }
            out.add(c.asText());
        }
        return out;
    }
}
