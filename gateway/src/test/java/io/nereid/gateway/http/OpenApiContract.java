package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.nereid.openapi.OpenApiDocument;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The served {@code openapi.json} for tests: validates JSON against one of its component schemas
 * (JSON Schema 2020-12, networknt json-schema-validator, {@code $ref}s resolved inside the document)
 * and lists a schema's properties through {@code allOf} and {@code $ref}. Thread-safe.
 */
public final class OpenApiContract {

    private static final JsonNode DOCUMENT = read();
    private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
    private static final Map<String, Schema> SCHEMAS = new ConcurrentHashMap<>();

    private OpenApiContract() {
    }

    public static JsonNode document() {
        return DOCUMENT;
    }

    /** The validation errors of {@code instance} against {@code #/components/schemas/NAME}; empty when valid. */
    public static List<String> errors(String name, JsonNode instance) {
        return SCHEMAS.computeIfAbsent(name, OpenApiContract::compile).validate(instance).stream()
                .map(Object::toString).toList();
    }

    /** Fails naming every violation when {@code instance} does not match {@code #/components/schemas/NAME}. */
    public static void assertValid(String name, JsonNode instance) {
        List<String> errors = errors(name, instance);
        assertTrue(errors.isEmpty(), name + ": " + errors + " in " + instance);
    }

    /** As {@link #assertValid(String, JsonNode)} for a JSON text. */
    public static void assertValid(String name, String json) {
        try {
            assertValid(name, new ObjectMapper().readTree(json));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The property names of {@code #/components/schemas/NAME}, its {@code allOf} parts and their {@code $ref}s included. */
    public static Set<String> properties(String name) {
        Set<String> out = new TreeSet<>();
        collect(schema(name), out);
        assertTrue(!out.isEmpty(), name + " has no properties");
        return out;
    }

    /** {@code #/components/schemas/NAME} as written in the document. */
    public static JsonNode schema(String name) {
        JsonNode s = DOCUMENT.get("components").get("schemas").get(name);
        assertTrue(s != null, "no schema " + name);
        return s;
    }

    /** The node a {@code #/...} reference points to. */
    public static JsonNode resolve(JsonNode node) {
        while (node.has("$ref")) {
            String ref = node.get("$ref").asText();
            assertTrue(ref.startsWith("#/"), ref);
            node = DOCUMENT.at(ref.substring(1));
            assertTrue(!node.isMissingNode(), "dangling " + ref);
        }
        return node;
    }

    private static void collect(JsonNode s, Set<String> out) {
        s = resolve(s);
        s.path("properties").fieldNames().forEachRemaining(out::add);
        for (JsonNode part : s.path("allOf")) {
            collect(part, out);
        }
    }

    private static Schema compile(String name) {
        schema(name);
        ObjectNode root = DOCUMENT.deepCopy();
        root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
        root.put("$ref", "#/components/schemas/" + name);
        return REGISTRY.getSchema(root);
    }

    private static JsonNode read() {
        try {
            JsonNode doc = new ObjectMapper().readTree(OpenApiDocument.bytes());
            assertEquals("3.1.0", doc.get("openapi").asText());
            return doc;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
