package io.nereid.engine.structured;

import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * JSON Schema (draft 4 to 2020-12, the parts that describe a language of JSON texts) into a byte
 * grammar of the JSON texts that validate. Objects of up to 8 declared properties take them in any
 * order, larger ones in the schema's order or required-first (optional ones may be left out;
 * additional properties, where allowed, come after the declared ones); compact serialization unless
 * whitespace is free.
 *
 * <p>Supported: {@code type} (one or a list), {@code properties}, {@code required},
 * {@code additionalProperties} (boolean or schema), {@code items} (schema or tuple),
 * {@code prefixItems}, {@code additionalItems}, {@code minItems}/{@code maxItems}, {@code enum},
 * {@code const}, {@code anyOf}, {@code oneOf} (when its options are provably disjoint), {@code allOf}
 * (merged), {@code $ref} to the same document ({@code #}, {@code #/definitions/...},
 * {@code #/$defs/...}, any JSON pointer; recursion included), {@code minLength}/{@code maxLength},
 * {@code pattern}, the regular formats (date-time, date, time, uuid, email, ipv4, ipv6, hostname, uri,
 * json-pointer; the other formats validators assert are refused, unknown ones are annotations), a pattern or format together with min/maxLength (the regex's
 * automaton times a character counter, {@link CharAutomaton}), integer and number bounds (exact, decimal),
 * {@code multipleOf} (exact: a remainder automaton times the range, numbers written without an exponent),
 * {@code dependencies} / {@code dependentRequired} (property lists, on objects of up to 8 declared properties),
 * anyOf / oneOf of object options told apart by their required properties, {@code not} of types, of a
 * pattern, of string enum / const, of constants within an enum and of one required name,
 * {@code if} / {@code then} / {@code else} when the {@code if} tests one property against constants,
 * {@code propertyNames} as a pattern or a list of names,
 * {@code nullable} (OpenAPI), {@code patternProperties} (with additionalProperties; patterns that overlap only
 * where their schemas are equal),
 * min/maxProperties (objects of up to 8 properties). Validation keywords that a context-free grammar cannot express or
 * that are not built yet (other {@code not} and {@code if}, {@code dependentSchemas},
 * {@code uniqueItems}, ...) are refused with a {@link GrammarException} naming
 * the keyword: a constraint is never silently loosened. Unknown keywords are annotations, as the
 * specification says.
 *
 * <p>One instance per compile; not thread-safe.
 */
final class JsonSchemaCompiler {

    private static final Set<String> UNSUPPORTED = Set.of("dependentSchemas", "contains", "minContains",
            "maxContains", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef");
    private static final Set<String> TYPES = Set.of("null", "boolean", "integer", "number", "string", "object", "array");
    private static final Set<String> STRING_KEYS = Set.of("minLength", "maxLength", "pattern", "format");
    private static final Set<String> NUMBER_KEYS = Set.of("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
            "multipleOf");
    private static final Set<String> OBJECT_KEYS = Set.of("properties", "required", "additionalProperties", "patternProperties",
            "minProperties", "maxProperties", "dependencies", "dependentRequired", "propertyNames");
    private static final Set<String> ARRAY_KEYS = Set.of("items", "prefixItems", "additionalItems", "minItems",
            "maxItems", "uniqueItems");
    private static final Map<String, String> FORMATS = Map.ofEntries(
            Map.entry("date", "^" + Formats.DATE + "$"),
            Map.entry("time", "^" + Formats.TIME + "$"),
            Map.entry("date-time", "^" + Formats.DATE + "[Tt]" + Formats.TIME + "$"),
            Map.entry("uuid", "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
            Map.entry("email", "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@" + Formats.HOST + "$"),
            Map.entry("ipv4", "^" + Formats.IPV4 + "$"),
            Map.entry("ipv6", "^" + Formats.IPV6 + "$"),
            Map.entry("hostname", "^" + Formats.HOST + "$"),
            Map.entry("uri", "^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]*$"),
            Map.entry("uri-reference", "^" + Formats.URI_REFERENCE + "$"),
            Map.entry("json-pointer", "^(/([^~/]|~[01])*)*$"));
    /** Formats validators assert but this compiler has no grammar for: refused rather than left unchecked. */
    private static final Set<String> ASSERTED_FORMATS = Set.of("iri", "iri-reference",
            "uri-template", "idn-email", "idn-hostname", "regex", "relative-json-pointer", "duration", "color");

    /** Objects with at most this many declared properties accept them in any order. */
    static final int ANY_ORDER_MAX = 8;

    /** Free whitespace: the most characters between two JSON tokens. */
    static final int MAX_WHITESPACE = 24;

    private final Grammar.Builder b;
    private final Object root;
    private final boolean freeWhitespace;
    private final Map<Object, Integer> rules = new IdentityHashMap<>();
    private final Map<String, Integer> shared = new HashMap<>();
    private int depth;

    /** A rule without alternatives: matches nothing (a schema reached through $ref that accepts no value). */
    private static final Expr NOTHING = new Expr.Alt(List.of());

    private JsonSchemaCompiler(Grammar.Builder b, Object root, boolean freeWhitespace) {
        this.b = b;
        this.root = root;
        this.freeWhitespace = freeWhitespace;
    }

    /**
     * The grammar of the JSON texts that validate against {@code schemaJson}.
     *
     * @param freeWhitespace whether whitespace may appear between tokens (else compact JSON)
     * @throws GrammarException for a schema that is not JSON, is unsatisfiable here, or uses a keyword this compiler refuses
     */
    static Grammar compile(String schemaJson, boolean freeWhitespace) {
        return compile(parse(schemaJson, "the schema"), freeWhitespace);
    }

    static Grammar compile(Object schema, boolean freeWhitespace) {
        return Grammar.of(b -> into(b, schema, freeWhitespace, "root"));
    }

    /** {@code json} parsed; a {@link GrammarException} naming {@code what} when it is not JSON. */
    static Object parse(String json, String what) {
        try {
            return Json.parse(json);
        } catch (JsonException e) {
            throw new GrammarException(what + " is not valid JSON: " + e.getMessage());
        }
    }

    /**
     * The values {@code schema} accepts as an expression of {@code b} (for a grammar that embeds
     * JSON, such as a tool call's arguments), whitespace around it as {@code freeWhitespace} says.
     *
     * @throws GrammarException as {@link #compile(String, boolean)}
     */
    static Expr into(Grammar.Builder b, Object schema, boolean freeWhitespace, String where) {
        if (!(schema instanceof Map<?, ?>) && !(schema instanceof Boolean)) {
            throw new GrammarException("a JSON Schema must be an object or a boolean" + ("root".equals(where) ? ""
                    : " (at " + where + ")"));
        }
        JsonSchemaCompiler c = new JsonSchemaCompiler(b, schema, freeWhitespace);
        Expr body = c.schema(schema, where);
        if (body == null) {
            throw new GrammarException("the schema accepts no value (at " + where + ")");
        }
        return Expr.seq(c.ws(), body, c.ws());
    }

    /** An expression for the values {@code s} accepts, or null for none (the schema {@code false}). */
    private Expr schema(Object s, String where) {
        if (Boolean.TRUE.equals(s)) {
            return value();
        }
        if (Boolean.FALSE.equals(s)) {
            return null;
        }
        if (!(s instanceof Map<?, ?> m)) {
            throw new GrammarException("the schema at " + where + " is neither an object nor a boolean");
        }
        Integer r = rules.get(m);
        if (r != null) {
            return new Expr.Ref(r);
        }
        r = b.rule(where);
        rules.put(m, r);   // before the body: a $ref cycle back to m refers to this rule
        Expr body = compileMap(map(m), where);
        b.define(r, body == null ? NOTHING : body);
        return body == null ? null : new Expr.Ref(r);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Map<?, ?> m) {
        return (Map<String, Object>) m;
    }

    private Expr compileMap(Map<String, Object> m, String where) {
        if (++depth > 200) {
            throw new GrammarException("the schema nests (or refers to itself through allOf) deeper than 200 levels");
        }
        try {
            return compileMapBody(m, where);
        } finally {
            depth--;
        }
    }

    private Expr compileMapBody(Map<String, Object> m, String where) {
        if (m.containsKey("if") || m.containsKey("then") || m.containsKey("else")) {
            Map<String, Object> choice = conditional(m, where);
            return choice == null ? null : compileMap(choice, where);
        }
        for (String k : m.keySet()) {
            if (UNSUPPORTED.contains(k)) {
                throw new GrammarException("JSON Schema keyword '" + k + "' (at " + where + ") is not supported");
            }
        }
        if (m.containsKey("not")) {
            return not(m, where);
        }
        if (!hasValidation(m)) {
            return value();   // {} or annotations only: any value
        }
        if (m.containsKey("$ref")) {
            Object target = resolve(m.get("$ref"), where);
            Map<String, Object> rest = new LinkedHashMap<>(m);
            rest.remove("$ref");
            if (!hasValidation(rest)) {
                return refTo(target, m.get("$ref").toString());
            }
            Object t = deref(target, where);
            if (Boolean.FALSE.equals(t)) {
                return null;
            }
            return compileMap(t instanceof Map<?, ?> tm ? merge(map(tm), rest, where) : rest, where);
        }
        if (m.containsKey("allOf")) {
            Map<String, Object> merged = new LinkedHashMap<>(m);
            merged.remove("allOf");
            for (Object part : list(m.get("allOf"), "allOf", where)) {
                merged = merge(merged, deref(part, where), where);
            }
            return compileMap(merged, where);
        }
        for (String key : List.of("anyOf", "oneOf")) {
            if (m.containsKey(key)) {
                Map<String, Object> rest = new LinkedHashMap<>(m);
                rest.remove(key);
                if (rest.containsKey("anyOf") || rest.containsKey("oneOf")) {
                    throw new GrammarException("anyOf together with oneOf (at " + where + ") is not supported");
                }
                boolean siblings = hasValidation(rest);
                Map<String, Object> byPresence = objectChoice(list(m.get(key), key, where), rest, key.equals("oneOf"), where);
                if (byPresence != null) {
                    return compileMap(byPresence, where);
                }
                if (key.equals("oneOf")) {
                    requireDisjoint(list(m.get(key), key, where), siblings ? rest : null, where);
                }
                List<Expr> options = new ArrayList<>();
                int k = 0;
                for (Object option : list(m.get(key), key, where)) {
                    Expr e;
                    if (siblings) {
                        e = compileMap(merge(rest, deref(option, where), where), where + "/" + key + "/" + k);
                    } else {
                        e = schema(option, where + "/" + key + "/" + k);
                    }
                    if (e != null) {
                        options.add(e);
                    }
                    k++;
                }
                return options.isEmpty() ? null : Expr.alt(options);
            }
        }
        if (m.containsKey("const")) {
            return literal(m.get("const"));
        }
        if (m.containsKey("enum")) {
            List<Expr> options = new ArrayList<>();
            for (Object v : list(m.get("enum"), "enum", where)) {
                if (typeAllows(m, v)) {
                    options.add(literal(v));
                }
            }
            return options.isEmpty() ? null : Expr.alt(options);
        }
        Set<String> types = types(m, where);
        List<Expr> options = new ArrayList<>();
        for (String t : types) {
            Expr e = switch (t) {
                case "null" -> Expr.literal("null");
                case "boolean" -> Expr.alt(Expr.literal("true"), Expr.literal("false"));
                case "integer" -> integer(m, where);
                case "number" -> number(m, where);
                case "string" -> string(m, where);
                case "object" -> objectValue(m, where);
                case "array" -> array(m, where);
                default -> throw new IllegalStateException(t);
            };
            if (e != null) {
                options.add(e);
            }
        }
        return options.isEmpty() ? null : Expr.alt(options);
    }

    /**
     * {@code if} / {@code then} / {@code else} as the choice they mean, {@code (if and then) or
     * (not if and else)}, for an {@code if} that tests one property against constants (what schemas
     * write: {@code {"properties": {"type": {"const": "action"}}}}, maybe with that property
     * required): the value passes {@code if} when it is not an object, lacks the property (unless
     * required) or has one of the constants; it fails when the property is there with another
     * value (or, if required, absent). The two branches exclude each other, so the anyOf is exact.
     * {@code then} / {@code else} without {@code if} have no effect (JSON Schema 2020-12, 10.2.2).
     * Other {@code if} shapes are refused by name. Null when no value can pass.
     */
    private Map<String, Object> conditional(Map<String, Object> m, String where) {
        Map<String, Object> rest = new LinkedHashMap<>(m);
        Object ifSchema = deref(rest.remove("if"), where);
        Object then = rest.containsKey("then") ? rest.remove("then") : Boolean.TRUE;
        Object otherwise = rest.containsKey("else") ? rest.remove("else") : Boolean.TRUE;
        if (ifSchema == null) {
            return rest;
        }
        if (Boolean.TRUE.equals(ifSchema) || Boolean.FALSE.equals(ifSchema)) {
            Object branch = Boolean.TRUE.equals(ifSchema) ? then : otherwise;
            return Boolean.FALSE.equals(branch) ? null : Map.of("allOf", List.of(rest, branch));
        }
        if (!(ifSchema instanceof Map<?, ?> im)) {
            throw new GrammarException("'if' (at " + where + ") must be a schema");
        }
        Map<String, Object> test = new LinkedHashMap<>(map(im));
        test.keySet().removeAll(ANNOTATIONS);
        String name = null;
        Map<String, Object> values = null;
        if (test.get("properties") instanceof Map<?, ?> props && props.size() == 1
                && test.keySet().stream().allMatch(k -> k.equals("properties") || k.equals("required"))) {
            Map.Entry<?, ?> only = props.entrySet().iterator().next();
            name = String.valueOf(only.getKey());
            if (deref(only.getValue(), where) instanceof Map<?, ?> vm) {
                values = new LinkedHashMap<>(map(vm));
                values.keySet().removeAll(ANNOTATIONS);
            }
        }
        boolean required = test.containsKey("required");
        if (name == null || values == null || values.size() != 1 || !(values.containsKey("const") || values.containsKey("enum"))
                || required && !List.of(name).equals(test.get("required"))) {
            throw new GrammarException("'if' (at " + where + ") is supported when it tests one property against"
                    + " 'const' or 'enum'");
        }
        List<Object> yes = new ArrayList<>(List.of(rest, Map.of("properties", Map.of(name, values))));
        if (required) {
            yes.add(Map.of("required", List.of(name)));
        }
        List<Object> options = new ArrayList<>();
        if (!Boolean.FALSE.equals(then)) {
            yes.add(then);
            options.add(Map.of("allOf", yes));
        }
        if (!Boolean.FALSE.equals(otherwise)) {
            List<Object> no = List.of(Map.of("required", List.of(name), "properties", Map.of(name, Map.of("not", values))));
            options.add(Map.of("allOf", List.of(rest, required ? Map.of("anyOf", List.of(no.get(0),
                    Map.of("type", "object", "properties", Map.of(name, false)))) : no.get(0), otherwise)));
        }
        return options.isEmpty() ? null : Map.of("anyOf", options);   // null: no value passes
    }

    /**
     * oneOf means exactly one option matches; a grammar can only say "at least one". It is
     * honoured when no value can match two options (types, constants or a discriminating
     * property tell them apart), and refused otherwise, never loosened to anyOf.
     */
    private void requireDisjoint(List<Object> options, Map<String, Object> siblings, String where) {
        List<Object> resolved = new ArrayList<>();
        for (Object o : options) {
            Object d = deref(o, where);
            if (d instanceof Map<?, ?> dm && siblings != null) {
                d = merge(siblings, dm, where);
            }
            resolved.add(d instanceof Map<?, ?> dm ? deepDeref(map(dm), where) : d);
        }
        for (int i = 0; i < resolved.size(); i++) {
            for (int j = i + 1; j < resolved.size(); j++) {
                if (!disjoint(resolved.get(i), resolved.get(j), where)) {
                    throw new GrammarException("oneOf (at " + where + ") with options " + i + " and " + j
                            + " that a value may match both is not supported (exclusivity cannot be enforced)");
                }
            }
        }
    }

    /** The schema with a top-level $ref / allOf resolved, for the disjointness test. */
    private Map<String, Object> deepDeref(Map<String, Object> m, String where) {
        Map<String, Object> out = m;
        for (int hops = 0; hops < 16 && (out.containsKey("$ref") || out.containsKey("allOf")); hops++) {
            Map<String, Object> rest = new LinkedHashMap<>(out);
            Object ref = rest.remove("$ref");
            Object all = rest.remove("allOf");
            Map<String, Object> next = rest;
            if (ref != null && deref(resolve(ref, where), where) instanceof Map<?, ?> t) {
                next = merge(map(t), rest, where);
            }
            if (all != null) {
                for (Object part : list(all, "allOf", where)) {
                    next = merge(next, deref(part, where), where);
                }
            }
            out = next;
        }
        return out;
    }

    private boolean disjoint(Object a, Object b, String where) {
        if (Boolean.FALSE.equals(a) || Boolean.FALSE.equals(b)) {
            return true;
        }
        if (!(a instanceof Map<?, ?> am) || !(b instanceof Map<?, ?> bm)) {
            return false;
        }
        Map<String, Object> x = map(am), y = map(bm);
        Set<String> tx = possibleTypes(x), ty = possibleTypes(y);
        Set<String> common = new LinkedHashSet<>(tx);
        common.retainAll(ty);
        if (common.isEmpty()) {
            return true;
        }
        List<Object> vx = values(x), vy = values(y);
        if (vx != null && vy != null) {
            return vx.stream().noneMatch(v -> vy.stream().anyMatch(w -> sameValue(v, w)));
        }
        if (common.equals(Set.of("object"))) {
            // a property both require, with constants that differ; or one requires what the other forbids
            Map<String, Object> px = properties(x, where), py = properties(y, where);
            for (String k : required(x)) {
                if (required(y).contains(k) && px.get(k) instanceof Map<?, ?> kx && py.get(k) instanceof Map<?, ?> ky) {
                    List<Object> cx = values(deepDeref(map(kx), where)), cy = values(deepDeref(map(ky), where));
                    if (cx != null && cy != null && cx.stream().noneMatch(v -> cy.stream().anyMatch(w -> sameValue(v, w)))) {
                        return true;
                    }
                }
                if (forbids(y, py, k)) {
                    return true;
                }
            }
            for (String k : required(y)) {
                if (forbids(x, px, k)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean forbids(Map<String, Object> s, Map<String, Object> props, String key) {
        if (props.containsKey(key)) {
            return Boolean.FALSE.equals(props.get(key));
        }
        return Boolean.FALSE.equals(s.get("additionalProperties"));
    }

    private Map<String, Object> properties(Map<String, Object> s, String where) {
        return s.get("properties") instanceof Map<?, ?> p ? map(p) : Map.of();
    }

    private static List<String> required(Map<String, Object> s) {
        List<String> out = new ArrayList<>();
        if (s.get("required") instanceof List<?> l) {
            for (Object o : l) {
                out.add(String.valueOf(o));
            }
        }
        return out;
    }

    /** The values an enum / const schema allows, or null when it is not one. */
    private static List<Object> values(Map<String, Object> s) {
        if (s.containsKey("const")) {
            return java.util.Collections.singletonList(s.get("const"));
        }
        return s.get("enum") instanceof List<?> l ? new ArrayList<>(l) : null;
    }

    private static boolean sameValue(Object v, Object w) {
        if (v instanceof Number a && w instanceof Number b) {
            return new BigDecimal(a.toString()).compareTo(new BigDecimal(b.toString())) == 0;
        }
        return java.util.Objects.equals(v, w);
    }

    /** The JSON types a schema can accept ("integer" folded into "number"). */
    private static Set<String> possibleTypes(Map<String, Object> s) {
        Set<String> out = new LinkedHashSet<>();
        List<Object> vals = values(s);
        if (vals != null) {
            for (Object v : vals) {
                out.add(v == null ? "null" : v instanceof Boolean ? "boolean" : v instanceof Number ? "number"
                        : v instanceof String ? "string" : v instanceof List<?> ? "array" : "object");
            }
            return out;
        }
        if (s.get("type") instanceof String t) {
            out.add(t.equals("integer") ? "number" : t);
        } else if (s.get("type") instanceof List<?> l) {
            for (Object t : l) {
                out.add("integer".equals(t) ? "number" : String.valueOf(t));
            }
        } else {
            out.addAll(List.of("null", "boolean", "number", "string", "object", "array"));
        }
        if (Boolean.TRUE.equals(s.get("nullable"))) {
            out.add("null");
        }
        return out;
    }

    private Expr refTo(Object target, String ref) {
        Expr e = schema(target, ref);
        if (e == null) {
            throw new GrammarException("$ref " + ref + " accepts no value");
        }
        return e;
    }

    private Object deref(Object s, String where) {
        Object t = s;
        for (int hops = 0; t instanceof Map<?, ?> m && m.containsKey("$ref") && m.size() == 1; hops++) {
            if (hops > 64) {
                throw new GrammarException("$ref chain longer than 64 (at " + where + ")");
            }
            t = resolve(m.get("$ref"), where);
        }
        return t;
    }

    private Object resolve(Object ref, String where) {
        if (!(ref instanceof String r) || !r.startsWith("#")) {
            throw new GrammarException("$ref " + ref + " (at " + where + "): only references into the same document (#...) are supported");
        }
        Object at = root;
        String pointer = java.net.URLDecoder.decode(r.substring(1), java.nio.charset.StandardCharsets.UTF_8);
        if (pointer.isEmpty()) {
            return root;
        }
        if (!pointer.startsWith("/")) {
            throw new GrammarException("$ref " + r + ": anchors are not supported, only JSON pointers");
        }
        for (String part : pointer.substring(1).split("/", -1)) {
            String key = part.replace("~1", "/").replace("~0", "~");
            if (at instanceof Map<?, ?> m && m.containsKey(key)) {
                at = m.get(key);
            } else if (at instanceof List<?> l && key.matches("\\d+") && Integer.parseInt(key) < l.size()) {
                at = l.get(Integer.parseInt(key));
            } else {
                throw new GrammarException("$ref " + r + " (at " + where + ") points to nothing");
            }
        }
        return at;
    }

    private static boolean hasValidation(Map<String, Object> m) {
        for (String k : m.keySet()) {
            if (k.equals("type") || k.equals("enum") || k.equals("const") || k.equals("anyOf") || k.equals("oneOf")
                    || k.equals("allOf") || k.equals("$ref") || STRING_KEYS.contains(k) || NUMBER_KEYS.contains(k)
                    || OBJECT_KEYS.contains(k) || ARRAY_KEYS.contains(k) || k.equals("nullable")) {
                return true;
            }
        }
        return false;
    }

    /** The conjunction of two schemas where it is another schema; refused where the keywords conflict. */
    private Map<String, Object> merge(Map<String, Object> a, Object other, String where) {
        if (Boolean.TRUE.equals(other)) {
            return a;
        }
        if (!(other instanceof Map<?, ?> om)) {
            throw new GrammarException("allOf with a false or non-object schema (at " + where + ") accepts nothing");
        }
        Map<String, Object> o = map(om);
        if (o.containsKey("$ref")) {
            Map<String, Object> rest = new LinkedHashMap<>(o);
            rest.remove("$ref");
            Object t = deref(resolve(o.get("$ref"), where), where);
            return merge(merge(a, t, where), rest, where);
        }
        if (o.containsKey("allOf")) {
            Map<String, Object> rest = new LinkedHashMap<>(o);
            rest.remove("allOf");
            Map<String, Object> out = merge(a, rest, where);
            for (Object part : list(o.get("allOf"), "allOf", where)) {
                out = merge(out, deref(part, where), where);
            }
            return out;
        }
        Map<String, Object> out = new LinkedHashMap<>(a);
        for (Map.Entry<String, Object> e : o.entrySet()) {
            String k = e.getKey();
            Object v = e.getValue();
            if (!out.containsKey(k) || out.get(k).equals(v)) {
                out.put(k, v);
                continue;
            }
            Object mine = out.get(k);
            switch (k) {
                case "properties" -> {
                    Map<String, Object> props = new LinkedHashMap<>(map((Map<?, ?>) mine));
                    for (Map.Entry<String, Object> p : map((Map<?, ?>) v).entrySet()) {
                        Object prev = props.get(p.getKey());
                        boolean never = Boolean.FALSE.equals(prev) || Boolean.FALSE.equals(p.getValue());
                        props.put(p.getKey(), prev == null ? p.getValue()
                                : never ? Boolean.FALSE   // the property may not appear, whatever else says
                                : Map.of("allOf", List.of(prev, p.getValue())));
                    }
                    out.put(k, props);
                }
                case "required" -> {
                    Set<Object> req = new LinkedHashSet<>(list(mine, k, where));
                    req.addAll(list(v, k, where));
                    out.put(k, new ArrayList<>(req));
                }
                case "type" -> {
                    Set<String> t = new LinkedHashSet<>(typeList(mine, where));
                    t.retainAll(typeList(v, where));
                    if (typeList(mine, where).contains("number") && typeList(v, where).contains("integer")
                            || typeList(v, where).contains("number") && typeList(mine, where).contains("integer")) {
                        t.add("integer");
                    }
                    if (t.isEmpty()) {
                        throw new GrammarException("allOf with types that exclude each other (at " + where + ")");
                    }
                    out.put(k, new ArrayList<>(t));
                }
                case "title", "description", "default", "examples", "$comment", "$schema", "$id", "id" -> {
                    // annotations: either is fine
                }
                case "enum" -> {   // the values both allow (an empty list: nothing validates)
                    List<Object> both = new ArrayList<>(list(mine, k, where));
                    both.retainAll(list(v, k, where));
                    out.put(k, both);
                }
                case "minLength", "minItems", "minimum", "minProperties" -> out.put(k, max(mine, v));
                case "maxLength", "maxItems", "maximum", "maxProperties" -> out.put(k, min(mine, v));
                default -> throw new GrammarException("allOf with two different '" + k + "' (at " + where + ") is not supported");
            }
        }
        return out;
    }

    private static Object max(Object a, Object b) {
        return new BigDecimal(a.toString()).compareTo(new BigDecimal(b.toString())) >= 0 ? a : b;
    }

    private static Object min(Object a, Object b) {
        return new BigDecimal(a.toString()).compareTo(new BigDecimal(b.toString())) <= 0 ? a : b;
    }

    private static final Set<String> ANNOTATIONS = Set.of("description", "title", "$comment", "examples", "default");

    /** A sibling key (never in a user's schema) that carries a {@code not: {pattern}} to {@link #string}. */
    private static final String NOT_PATTERN = "\u0000notPattern";

    /**
     * {@code not} where it is a set the grammar can take away: {@code {}} / true (nothing validates), false
     * (no restriction), {@code {type: ...}} (the other types), {@code {pattern: P}} (strings P finds no
     * match in: the complement automaton, with the siblings' string keywords), and {@code {enum}} /
     * {@code {const}} of strings on a plain string. Anything else is refused by name.
     */
    private Expr not(Map<String, Object> m, String where) {
        Map<String, Object> rest = new LinkedHashMap<>(m);
        rest.remove("not");
        Object n = deref(m.get("not"), where);
        if (Boolean.FALSE.equals(n)) {
            return compileMap(rest, where);
        }
        if (Boolean.TRUE.equals(n)) {
            return null;
        }
        if (!(n instanceof Map<?, ?> raw)) {
            throw new GrammarException("'not' (at " + where + ") must be a schema");
        }
        Map<String, Object> nm = new LinkedHashMap<>(map(raw));
        nm.keySet().removeAll(ANNOTATIONS);
        if (nm.isEmpty()) {
            return null;   // not {}: nothing validates
        }
        if (nm.keySet().equals(Set.of("type"))) {
            Set<String> out = types(rest, where);
            List<String> excluded = typeList(nm.get("type"), where);
            if (excluded.contains("integer") && !excluded.contains("number") && out.contains("number")) {
                throw new GrammarException("'not' integer of a number (at " + where + ") is not supported");
            }
            out.removeAll(excluded);
            if (excluded.contains("number")) {
                out.remove("integer");
            }
            if (out.isEmpty()) {
                return null;
            }
            rest.put("type", new ArrayList<>(out));
            rest.remove("nullable");
            return compileMap(rest, where);
        }
        Set<String> types = types(rest, where);
        if (nm.keySet().equals(Set.of("pattern")) && nm.get("pattern") instanceof String p) {
            if (!types.contains("string")) {
                return null;   // not {pattern} holds for strings only
            }
            rest.put("type", "string");
            rest.remove("nullable");
            rest.put(NOT_PATTERN, p);
            return compileMap(rest, where);
        }
        boolean plainString = types.equals(Set.of("string")) && rest.keySet().stream().allMatch(k -> k.equals("type")
                || ANNOTATIONS.contains(k));
        if (plainString && (nm.keySet().equals(Set.of("enum")) || nm.keySet().equals(Set.of("const")))) {
            List<String> names = new ArrayList<>();
            for (Object v : nm.containsKey("enum") ? list(nm.get("enum"), "not/enum", where) : List.of(nm.get("const"))) {
                if (v instanceof String str) {
                    names.add(str);
                }
            }
            return keyNotIn(names);
        }
        boolean constants = nm.keySet().equals(Set.of("enum")) || nm.keySet().equals(Set.of("const"));
        if (constants && (rest.containsKey("enum") || rest.containsKey("const"))) {   // the listed values minus these
            List<Object> excluded = nm.containsKey("enum") ? list(nm.get("enum"), "not/enum", where) : List.of(nm.get("const"));
            if (excluded.stream().allMatch(v -> v == null || v instanceof String || v instanceof Boolean)) {
                List<Object> kept = new ArrayList<>();
                for (Object v : rest.containsKey("const") ? List.of(rest.get("const")) : list(rest.get("enum"), "enum", where)) {
                    if (!excluded.contains(v)) {
                        kept.add(v);
                    }
                }
                rest.remove("const");
                rest.put("enum", kept);
                return compileMap(rest, where);
            }
        }
        if (nm.keySet().equals(Set.of("required")) && nm.get("required") instanceof List<?> req && req.size() == 1) {
            // not required [x]: x absent (values other than objects pass either way)
            return compileMap(merge(rest, Map.of("properties", Map.of(String.valueOf(req.get(0)), false)), where), where);
        }
        throw new GrammarException("'not' with " + nm.keySet() + " (at " + where + ") is not supported");
    }

    private Set<String> types(Map<String, Object> m, String where) {
        Set<String> types = new LinkedHashSet<>();
        if (m.containsKey("type")) {
            types.addAll(typeList(m.get("type"), where));
        } else {
            // no type: every type, each with the keywords that apply to it
            types.addAll(List.of("object", "array", "string", "number", "null", "boolean"));
        }
        if (Boolean.TRUE.equals(m.get("nullable"))) {
            types.add("null");
        }
        if (types.contains("number")) {
            types.remove("integer");   // integers are numbers
        }
        return types;
    }

    private static List<String> typeList(Object t, String where) {
        List<String> out = new ArrayList<>();
        for (Object x : t instanceof List<?> l ? l : List.of(t)) {
            if (!(x instanceof String s) || !TYPES.contains(s)) {
                throw new GrammarException("unknown type " + x + " (at " + where + ")");
            }
            out.add(s);
        }
        return out;
    }

    private static boolean typeAllows(Map<String, Object> m, Object v) {
        if (!m.containsKey("type")) {
            return true;
        }
        Object t = m.get("type");
        List<?> types = t instanceof List<?> l ? l : List.of(t);
        String actual = v == null ? "null" : v instanceof Boolean ? "boolean" : v instanceof Long ? "integer"
                : v instanceof Double d ? (d == Math.rint(d) ? "integer" : "number") : v instanceof String ? "string"
                : v instanceof List<?> ? "array" : "object";
        return types.contains(actual) || (actual.equals("integer") && types.contains("number"));
    }

    private static List<Object> list(Object v, String key, String where) {
        if (!(v instanceof List<?> l)) {
            throw new GrammarException("'" + key + "' (at " + where + ") must be an array");
        }
        return new ArrayList<>(l);
    }

    // ---- strings

    private Expr string(Map<String, Object> m, String where) {
        Integer minLength = count(m, "minLength", where);
        Integer maxLength = count(m, "maxLength", where);
        Object pattern = m.get("pattern");
        Object format = m.get("format");
        boolean lengths = minLength != null && minLength > 0 || maxLength != null;
        if (format instanceof String f && ASSERTED_FORMATS.contains(f)) {
            throw new GrammarException("format '" + f + "' (at " + where + ") is not supported");
        }
        if (m.get(NOT_PATTERN) instanceof String notPattern) {   // every string condition as one automaton
            List<String> regexes = new ArrayList<>(List.of(notPattern));
            if (pattern instanceof String p) {
                regexes.add(p);
            }
            if (format instanceof String f && FORMATS.containsKey(f)) {
                regexes.add(FORMATS.get(f));
            }
            List<CharAutomaton> all = CharAutomaton.searchAll(regexes);
            CharAutomaton a = all.get(0).not();
            for (CharAutomaton other : all.subList(1, all.size())) {
                a = a.and(other);
            }
            return Expr.seq(Expr.literal("\""), a.withLength(b, minLength == null ? 0 : minLength,
                    maxLength == null ? -1 : maxLength, CharSet::jsonChar, where), Expr.literal("\""));
        }
        if (pattern != null) {
            if (!(pattern instanceof String p)) {
                throw new GrammarException("pattern (at " + where + ") must be a string");
            }
            if (format instanceof String f && FORMATS.containsKey(f)) {   // both hold: the two automata together
                List<CharAutomaton> both = CharAutomaton.searchAll(List.of(p, FORMATS.get(f)));
                CharAutomaton a = both.get(0).and(both.get(1));
                return Expr.seq(Expr.literal("\""), a.withLength(b, minLength == null ? 0 : minLength,
                        maxLength == null ? -1 : maxLength, CharSet::jsonChar, where), Expr.literal("\""));
            }
            if (lengths) {   // JSON Schema counts characters: the pattern's automaton times a length counter
                return Expr.seq(Expr.literal("\""), lengthLimited(p, minLength, maxLength, where), Expr.literal("\""));
            }
            Expr body;
            try {
                body = RegexCompiler.search(p, CharSet::jsonChar);
            } catch (RegexCompiler.InnerAnchor anchorsInside) {   // the character automaton takes them
                body = CharAutomaton.search(p).withLength(b, 0, -1, CharSet::jsonChar, where);
            }
            return Expr.seq(Expr.literal("\""), body, Expr.literal("\""));
        }
        if (format instanceof String f && FORMATS.containsKey(f)) {
            if (lengths) {
                return Expr.seq(Expr.literal("\""), lengthLimited(FORMATS.get(f), minLength, maxLength, where),
                        Expr.literal("\""));
            }
            return sharedRule("format-" + f, () -> Expr.seq(Expr.literal("\""),
                    RegexCompiler.search(FORMATS.get(f), CharSet::jsonChar), Expr.literal("\"")));
        }
        if (minLength == null && maxLength == null) {
            return anyString();
        }
        int lo = minLength == null ? 0 : minLength;
        int hi = maxLength == null ? -1 : maxLength;
        if (hi >= 0 && hi < lo) {
            throw new GrammarException("maxLength below minLength (at " + where + ")");
        }
        return Expr.seq(Expr.literal("\""), new Expr.Repeat(stringChar(), lo, hi), Expr.literal("\""));
    }

    /** The JSON-string bodies that {@code regex} finds a match in and that are {@code min..max} characters long. */
    private Expr lengthLimited(String regex, Integer min, Integer max, String where) {
        int lo = min == null ? 0 : min;
        int hi = max == null ? -1 : max;
        if (hi >= 0 && hi < lo) {
            throw new GrammarException("maxLength below minLength (at " + where + ")");
        }
        return CharAutomaton.search(regex).withLength(b, lo, hi, CharSet::jsonChar, where);
    }

    private static Integer count(Map<String, Object> m, String key, String where) {
        Object v = m.get(key);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Number n) || n.doubleValue() < 0 || n.doubleValue() != Math.rint(n.doubleValue())) {
            throw new GrammarException("'" + key + "' (at " + where + ") must be a non-negative integer");
        }
        return (int) Math.min(n.longValue(), Integer.MAX_VALUE);
    }

    // ---- numbers

    private Expr integer(Map<String, Object> m, String where) {
        BigDecimal step = multipleOf(m, where);
        if (step != null) {
            Map<String, Object> plain = new LinkedHashMap<>(m);
            plain.remove("multipleOf");
            return multiples(integerRange(plain, where), step, where);
        }
        return bounds(m, where) == null ? sharedRule("integer", JsonSchemaCompiler::anyInteger) : integerRange(m, where);
    }

    /** The values of {@code range} (a closed number grammar) that are multiples of {@code step}, as rules. */
    private Expr multiples(Expr range, BigDecimal step, String where) {
        CharAutomaton a = CharAutomaton.multiplesOf(range, step);
        if (a.isEmpty()) {
            throw new GrammarException("no multiple of " + step.toPlainString() + " lies within the bounds (at " + where + ")");
        }
        return a.withLength(b, 0, -1, CharSet::utf8, where);
    }

    /** multipleOf as a decimal, null when absent or 1 (which only makes a number an integer). */
    private static BigDecimal multipleOf(Map<String, Object> m, String where) {
        Object v = m.get("multipleOf");
        if (v == null) {
            return null;
        }
        if (!(v instanceof Number n) || n.doubleValue() <= 0) {
            throw new GrammarException("multipleOf (at " + where + ") must be a number greater than 0, got " + v);
        }
        BigDecimal d = decimal(n);
        return d.compareTo(BigDecimal.ONE) == 0 ? null : d;
    }

    private Expr integerRange(Map<String, Object> m, String where) {
        BigDecimal[] bounds = bounds(m, where);
        if (bounds == null) {
            return anyInteger();
        }
        BigInteger lo = bounds[0] == null ? null : bounds[0].setScale(0, java.math.RoundingMode.CEILING).toBigInteger();
        BigInteger hi = bounds[2] == null ? null : bounds[2].setScale(0, java.math.RoundingMode.FLOOR).toBigInteger();
        if (lo != null && bounds[1] != null && new BigDecimal(lo).compareTo(bounds[0]) == 0) {
            lo = lo.add(BigInteger.ONE);
        }
        if (hi != null && bounds[3] != null && new BigDecimal(hi).compareTo(bounds[2]) == 0) {
            hi = hi.subtract(BigInteger.ONE);
        }
        if (lo != null && hi != null && lo.compareTo(hi) > 0) {
            throw new GrammarException("no integer lies within the bounds (at " + where + ")");
        }
        return Numbers.integerRange(lo, hi);
    }

    private Expr number(Map<String, Object> m, String where) {
        if (m.get("multipleOf") instanceof Number one && decimal(one).compareTo(BigDecimal.ONE) == 0) {
            return integer(m, where);   // multipleOf 1: the integers
        }
        BigDecimal step = multipleOf(m, where);
        BigDecimal[] bounds = bounds(m, where);
        if (bounds == null) {
            return step == null ? sharedRule("number", JsonSchemaCompiler::anyNumber) : multiples(anyNumber(), step, where);
        }
        Expr e = Numbers.numberRange(bounds[0], bounds[1] != null, bounds[2], bounds[3] != null);
        if (e == null) {
            throw new GrammarException("no number lies within the bounds (at " + where + ")");
        }
        return step == null ? e : multiples(e, step, where);
    }

    /** {lower, lowerExclusive marker, upper, upperExclusive marker}, null when unbounded. */
    private static BigDecimal[] bounds(Map<String, Object> m, String where) {
        BigDecimal lo = null, hi = null;
        boolean loEx = false, hiEx = false;
        if (m.get("minimum") instanceof Number n) {
            lo = decimal(n);
            loEx = Boolean.TRUE.equals(m.get("exclusiveMinimum"));
        }
        if (m.get("maximum") instanceof Number n) {
            hi = decimal(n);
            hiEx = Boolean.TRUE.equals(m.get("exclusiveMaximum"));
        }
        if (m.get("exclusiveMinimum") instanceof Number n && (lo == null || decimal(n).compareTo(lo) >= 0)) {
            lo = decimal(n);
            loEx = true;
        }
        if (m.get("exclusiveMaximum") instanceof Number n && (hi == null || decimal(n).compareTo(hi) <= 0)) {
            hi = decimal(n);
            hiEx = true;
        }
        if (lo == null && hi == null) {
            return null;
        }
        return new BigDecimal[] {lo, loEx ? BigDecimal.ONE : null, hi, hiEx ? BigDecimal.ONE : null};
    }

    private static BigDecimal decimal(Number n) {
        return n instanceof Long l ? BigDecimal.valueOf(l) : new BigDecimal(n.toString());
    }

    // ---- objects

    private Expr objectValue(Map<String, Object> m, String where) {
        if (m.containsKey("propertyNames")) {
            m = propertyNames(m, where);
        }
        Map<String, Object> props = m.get("properties") instanceof Map<?, ?> p ? new LinkedHashMap<>(map(p)) : new LinkedHashMap<>();
        Set<String> required = new LinkedHashSet<>();
        if (m.containsKey("required")) {
            for (Object r : list(m.get("required"), "required", where)) {
                required.add(String.valueOf(r));
            }
        }
        Object additional = m.getOrDefault("additionalProperties", Boolean.TRUE);
        for (String r : required) {
            if (!props.containsKey(r)) {
                props.put(r, additional);   // required but not described: whatever additionalProperties allows
            }
        }
        if (!m.containsKey("patternProperties")) {
            // names a dependency mentions are tracked like declared ones, with additionalProperties' schema
            for (String name : dependencyNames(m)) {
                if (!props.containsKey(name) && props.size() < ANY_ORDER_MAX) {
                    props.put(name, additional);
                }
            }
        }
        List<String> names = new ArrayList<>();
        List<Expr> members = new ArrayList<>();
        List<Boolean> isRequired = new ArrayList<>();
        List<String> memberNames = new ArrayList<>();
        for (Map.Entry<String, Object> p : props.entrySet()) {
            names.add(p.getKey());   // declared, so never an additional property, even when it may not appear
            Expr v = schema(p.getValue(), where + "/properties/" + p.getKey());
            if (v == null) {
                if (required.contains(p.getKey())) {
                    throw new GrammarException("required property '" + p.getKey() + "' (at " + where + ") accepts no value");
                }
                continue;
            }
            members.add(Expr.seq(stringLiteral(p.getKey()), ws(), Expr.literal(":"), ws(), v));
            isRequired.add(required.contains(p.getKey()));
            memberNames.add(p.getKey());
        }
        Expr extra = null;
        if (m.get("patternProperties") instanceof Map<?, ?> pp && !pp.isEmpty()) {
            extra = patternMember(map(pp), additional, names, where);
        } else {
            Expr additionalValue = schema(additional, where + "/additionalProperties");
            if (additionalValue != null) {
                extra = Expr.seq(keyNotIn(names), ws(), Expr.literal(":"), ws(), additionalValue);
            }
        }
        Integer minProps = count(m, "minProperties", where);
        Integer maxProps = count(m, "maxProperties", where);
        int min = minProps == null ? 0 : minProps;
        int max = maxProps == null ? -1 : maxProps;
        if (max >= 0 && max < min) {
            throw new GrammarException("maxProperties below minProperties (at " + where + ")");
        }
        Expr sep = Expr.seq(ws(), Expr.literal(","), ws());
        List<int[]> dependencies = dependencies(m, memberNames, names, extra != null, where);
        RequiredChoice choice = m.get(REQUIRED_CHOICE) instanceof RequiredChoice rc ? rc : null;
        if (members.size() <= ANY_ORDER_MAX) {
            List<int[]> masks = choice == null ? null : choiceMasks(choice, memberNames, extra != null, where);
            java.util.function.IntPredicate complete = set -> satisfies(set, dependencies)
                    && chooses(set, masks, choice != null && choice.exactlyOne());
            return Expr.seq(Expr.literal("{"), ws(), anyOrder(members, isRequired, extra, sep, min, max, complete,
                    where), ws(), Expr.literal("}"));
        }
        if (!dependencies.isEmpty() || choice != null) {
            throw new GrammarException((choice != null ? "anyOf / oneOf of required lists" : "dependencies")
                    + " on an object with more than " + ANY_ORDER_MAX + " declared properties (at " + where
                    + ") is not supported");
        }
        if (min > required.size() || (max >= 0 && (extra != null || max < members.size()))) {
            throw new GrammarException("minProperties / maxProperties on an object with more than " + ANY_ORDER_MAX
                    + " declared properties (at " + where + ") is not supported");
        }
        // more than ANY_ORDER_MAX: the schema's order, or the required ones first (in 'required' order) and
        // then the others in the schema's order, as llama.cpp writes them
        Expr declared = inOrder(members, isRequired, extra, sep, where + "/members");
        List<Integer> requiredFirst = new ArrayList<>();
        for (String r : required) {
            int k = memberNames.indexOf(r);
            if (k >= 0) {
                requiredFirst.add(k);
            }
        }
        for (int k = 0; k < members.size(); k++) {
            if (!requiredFirst.contains(k)) {
                requiredFirst.add(k);
            }
        }
        boolean same = true;
        for (int k = 0; k < requiredFirst.size(); k++) {
            same &= requiredFirst.get(k) == k;
        }
        Expr body = declared;
        if (!same) {
            List<Expr> m2 = new ArrayList<>();
            List<Boolean> r2 = new ArrayList<>();
            for (int k : requiredFirst) {
                m2.add(members.get(k));
                r2.add(isRequired.get(k));
            }
            body = Expr.alt(declared, inOrder(m2, r2, extra, sep, where + "/required-first"));
        }
        return Expr.seq(Expr.literal("{"), ws(), body, ws(), Expr.literal("}"));
    }

    /** The members in this order, optional ones left out as they may be, then the additional ones. */
    private Expr inOrder(List<Expr> members, List<Boolean> isRequired, Expr extra, Expr sep, String where) {
        // R(i, c): members i.. given whether one was written before (c); each rule once
        Expr[][] r = new Expr[members.size() + 1][2];
        for (int c = 0; c < 2; c++) {
            Expr lead = c == 1 ? sep : Expr.EMPTY;
            r[members.size()][c] = extra == null ? Expr.EMPTY
                    : Expr.opt(Expr.seq(lead, extra, Expr.star(Expr.seq(sep, extra))));
        }
        for (int i = members.size() - 1; i >= 0; i--) {
            for (int c = 0; c < 2; c++) {
                Expr lead = c == 1 ? sep : Expr.EMPTY;
                Expr with = Expr.seq(lead, members.get(i), r[i + 1][1]);
                Expr e = isRequired.get(i) ? with : Expr.alt(with, r[i + 1][c]);
                r[i][c] = new Expr.Ref(b.ruleFor(where + i + c, e));
            }
        }
        return r[0][0];
    }

    /**
     * The declared members in any order, each at most once, the required ones all present, then
     * the additional ones: one rule per set of members written so far (2^n rules, so only for up
     * to {@value #ANY_ORDER_MAX} members; larger objects keep the schema's order).
     */
    /**
     * {@code dependencies} (draft 4-7: a list of names, or a schema that only lists {@code required}) and
     * {@code dependentRequired} (2019-09) as {trigger bit, needed bits} over the members: when the trigger
     * is written, so must the needed ones be (needed -1: it cannot be, so neither can the trigger). Names
     * that are not members are refused unless no other key may appear (then they are never present).
     */
    private static List<int[]> dependencies(Map<String, Object> m, List<String> members, List<String> declared,
            boolean otherKeys, String where) {
        List<int[]> out = new ArrayList<>();
        for (String key : List.of("dependencies", "dependentRequired")) {
            if (!(m.get(key) instanceof Map<?, ?> deps)) {
                if (m.containsKey(key)) {
                    throw new GrammarException("'" + key + "' (at " + where + ") must be an object");
                }
                continue;
            }
            for (Map.Entry<?, ?> d : deps.entrySet()) {
                String trigger = String.valueOf(d.getKey());
                Object value = d.getValue();
                if (value instanceof Map<?, ?> schema) {
                    if (!schema.keySet().stream().allMatch(k -> k.equals("required") || k.equals("description")
                            || k.equals("title"))) {
                        throw new GrammarException("'" + key + "' with a schema (at " + where + "/" + trigger
                                + ") is supported when it only lists required properties");
                    }
                    value = schema.containsKey("required") ? schema.get("required") : List.of();
                }
                List<Object> needs = list(value, key + "/" + trigger, where);
                int t = members.indexOf(trigger);
                if (t < 0) {
                    if (otherKeys && !declared.contains(trigger)) {
                        throw new GrammarException("'" + key + "' on '" + trigger + "' (at " + where + "), which is not"
                                + " a declared property, is not supported");
                    }
                    continue;   // the trigger never appears (not a key that may be written)
                }
                int mask = 0;
                for (Object need : needs) {
                    int k = members.indexOf(String.valueOf(need));
                    if (k < 0) {
                        if (otherKeys) {
                            throw new GrammarException("'" + key + "' (at " + where + ") needs '" + need + "', which is"
                                    + " not a declared property: not supported");
                        }
                        mask = -1;   // it can never be there, so neither can the trigger
                        break;
                    }
                    mask |= 1 << k;
                }
                out.add(new int[] {1 << t, mask});
            }
        }
        return out;
    }

    /** A sibling key (never in a user's schema) that carries a {@link RequiredChoice} to {@link #objectValue}. */
    private static final String REQUIRED_CHOICE = "\u0000requiredChoice";

    /**
     * anyOf / oneOf options decided by the properties present: option i holds when all of {@code
     * options[i]} are there and not all of {@code forbidden[i]} (its {@code not: {required}}; empty: none).
     */
    private record RequiredChoice(List<List<String>> options, List<List<String>> forbidden, boolean exactlyOne) {
    }

    private static final Set<String> CHOICE_OPTION_KEYS = Set.of("type", "properties", "required", "additionalProperties",
            "not", "description", "title", "$comment");

    /**
     * anyOf / oneOf over object options told apart by which properties are present: each option an object
     * schema of only {@code properties}, {@code required} (and {@code type: object}, annotations,
     * {@code additionalProperties: true}), whose properties agree with each other's and the siblings'
     * where they share a name. Then one object grammar holds them all: the union of the properties, and
     * complete only where exactly one (oneOf) or at least one (anyOf) option's required list is present.
     * Exact for the option that holds (its properties keep their schemas, the others' keys are additional
     * to it); a property of an option that does not hold keeps that option's schema, which only narrows.
     * Null when the options are not of that shape, and the general path decides.
     */
    private Map<String, Object> objectChoice(List<Object> options, Map<String, Object> rest, boolean exactlyOne,
            String where) {
        boolean object = "object".equals(rest.get("type"));
        Map<String, Object> props = rest.get("properties") instanceof Map<?, ?> p ? new LinkedHashMap<>(map(p))
                : new LinkedHashMap<>();
        List<List<String>> required = new ArrayList<>();
        List<List<String>> forbidden = new ArrayList<>();
        boolean added = false;
        boolean negated = false;
        for (Object option : options) {
            Object o = deref(option, where);
            if (!(o instanceof Map<?, ?> raw)) {
                return null;
            }
            Map<String, Object> om = map(raw);
            List<?> req = om.get("required") instanceof List<?> l ? l : List.of();
            if (!CHOICE_OPTION_KEYS.containsAll(om.keySet()) || om.containsKey("required") && !(om.get("required") instanceof List)
                    || !om.containsKey("required") && !om.containsKey("not")
                    || om.containsKey("additionalProperties") && !Boolean.TRUE.equals(om.get("additionalProperties"))) {
                return null;
            }
            if (om.containsKey("type")) {
                if (!"object".equals(om.get("type"))) {
                    return null;
                }
                object = true;
            }
            if (om.get("properties") instanceof Map<?, ?> op) {
                for (Map.Entry<String, Object> e : map(op).entrySet()) {
                    Object known = props.get(e.getKey());
                    if (known != null && !known.equals(e.getValue())) {
                        return null;
                    }
                    added |= known == null;
                    props.put(e.getKey(), e.getValue());
                }
            } else if (om.containsKey("properties")) {
                return null;
            }
            required.add(req.stream().map(String::valueOf).toList());
            List<String> not = List.of();
            if (om.containsKey("not")) {
                if (!(om.get("not") instanceof Map<?, ?> nm) || !(nm.get("required") instanceof List<?> nr)
                        || !nm.keySet().stream().allMatch(k -> k.equals("required") || ANNOTATIONS.contains(k))) {
                    return null;
                }
                not = nr.stream().map(String::valueOf).toList();
                negated = true;
            }
            forbidden.add(not);
        }
        // options of object keywords only hold for every non-object, so a oneOf of two or more admits objects only
        // (not with 'not', which fails on non-objects)
        object |= exactlyOne && options.size() >= 2 && !negated;
        Object additional = rest.getOrDefault("additionalProperties", Boolean.TRUE);
        if (!object || required.isEmpty() || added && !Boolean.TRUE.equals(additional)
                || rest.containsKey("patternProperties")) {
            return null;   // keys of the options would be additional to the siblings, which restrict those
        }
        List<List<String>> mentioned = new ArrayList<>(required);
        mentioned.addAll(forbidden);
        for (List<String> names : mentioned) {
            for (String name : names) {
                if (!props.containsKey(name)) {
                    if (!Boolean.TRUE.equals(additional)) {
                        return null;
                    }
                    props.put(name, Boolean.TRUE);   // required, not described: any value, as an additional one
                }
            }
        }
        if (props.isEmpty() || props.size() > ANY_ORDER_MAX) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>(rest);
        out.put("type", "object");
        out.put("properties", props);
        out.put(REQUIRED_CHOICE, new RequiredChoice(required, forbidden, exactlyOne));
        return out;
    }

    /**
     * A {@link RequiredChoice} as {required bits, forbidden bits} per option over the members: required -1
     * when it names a property that can never be written (the option never holds), forbidden 0 when there
     * is none or it names one that can never be written (never all present). Refused when a name is not a
     * member but other keys could be it.
     */
    private static List<int[]> choiceMasks(RequiredChoice choice, List<String> members, boolean otherKeys, String where) {
        List<int[]> masks = new ArrayList<>();
        for (int i = 0; i < choice.options().size(); i++) {
            int req = bits(choice.options().get(i), members, otherKeys, choice, where);
            List<String> forb = choice.forbidden().get(i);
            int no = forb.isEmpty() ? 0 : bits(forb, members, otherKeys, choice, where);
            masks.add(new int[] {req, no == -1 ? 0 : no});
        }
        return masks;
    }

    private static int bits(List<String> names, List<String> members, boolean otherKeys, RequiredChoice choice,
            String where) {
        int mask = 0;
        for (String name : names) {
            int k = members.indexOf(name);
            if (k < 0) {
                if (otherKeys) {
                    throw new GrammarException((choice.exactlyOne() ? "oneOf" : "anyOf") + " (at " + where
                            + ") names '" + name + "', which is not a declared property: not supported");
                }
                return -1;
            }
            mask |= 1 << k;
        }
        return mask;
    }

    private static boolean chooses(int set, List<int[]> masks, boolean exactlyOne) {
        if (masks == null) {
            return true;
        }
        int holding = 0;
        for (int[] m : masks) {
            if (m[0] != -1 && (set & m[0]) == m[0] && (m[1] == 0 || (set & m[1]) != m[1])) {
                holding++;
            }
        }
        return exactlyOne ? holding == 1 : holding >= 1;
    }

    /** Every property name {@code dependencies} / {@code dependentRequired} mention, triggers and needs. */
    private static Set<String> dependencyNames(Map<String, Object> m) {
        Set<String> names = new LinkedHashSet<>();
        for (String key : List.of("dependencies", "dependentRequired")) {
            if (m.get(key) instanceof Map<?, ?> deps) {
                for (Map.Entry<?, ?> d : deps.entrySet()) {
                    names.add(String.valueOf(d.getKey()));
                    Object v = d.getValue() instanceof Map<?, ?> sm ? sm.get("required") : d.getValue();
                    if (v instanceof List<?> l) {
                        l.forEach(x -> names.add(String.valueOf(x)));
                    }
                }
            }
        }
        return names;
    }

    private static boolean satisfies(int set, List<int[]> dependencies) {
        for (int[] d : dependencies) {
            if ((set & d[0]) != 0 && (d[1] == -1 || (set & d[1]) != d[1])) {
                return false;
            }
        }
        return true;
    }

    private Expr anyOrder(List<Expr> members, List<Boolean> isRequired, Expr extra, Expr sep, int minProps, int maxProps,
            java.util.function.IntPredicate complete, String where) {
        int n = members.size();
        int required = 0;
        for (int k = 0; k < n; k++) {
            if (isRequired.get(k)) {
                required |= 1 << k;
            }
        }
        Expr[] after = new Expr[1 << n];
        for (int set = (1 << n) - 1; set >= 0; set--) {
            int written = Integer.bitCount(set);
            Expr lead = set == 0 ? Expr.EMPTY : sep;
            List<Expr> options = new ArrayList<>();
            if (maxProps < 0 || written < maxProps) {
                for (int k = 0; k < n; k++) {
                    if ((set & 1 << k) == 0) {
                        options.add(Expr.seq(lead, members.get(k), after[set | 1 << k]));
                    }
                }
            }
            if ((set & required) == required && complete.test(set)) {
                // then the additional properties: enough to reach minProperties, no more than maxProperties allows
                int least = Math.max(0, minProps - written);
                int most = maxProps < 0 ? -1 : maxProps - written;
                if (least == 0) {
                    options.add(Expr.EMPTY);
                }
                if (extra != null && most != 0) {
                    options.add(Expr.seq(lead, extra, new Expr.Repeat(Expr.seq(sep, extra), Math.max(0, least - 1),
                            most < 0 ? -1 : most - 1)));
                }
            }
            after[set] = options.isEmpty() ? NOTHING
                    : new Expr.Ref(b.ruleFor(where + "/members-" + Integer.toBinaryString(set), Expr.alt(options)));
        }
        if (after[0] == NOTHING) {
            throw new GrammarException("no object satisfies the property counts (at " + where + ")");
        }
        return after[0];
    }

    /**
     * {@code propertyNames} as the keys it allows: a string schema with a {@code pattern}, or string
     * {@code enum} / {@code const} names, becomes a pattern under patternProperties with
     * additionalProperties' schema (the keys it does not match may not appear), and a declared
     * property whose name it does not match may not appear either. Other name schemas, and
     * propertyNames together with patternProperties, are refused by name.
     */
    private Map<String, Object> propertyNames(Map<String, Object> m, String where) {
        Map<String, Object> out = new LinkedHashMap<>(m);
        Object pn = deref(out.remove("propertyNames"), where);
        if (Boolean.TRUE.equals(pn)) {
            return out;
        }
        String regex = null;
        boolean none = Boolean.FALSE.equals(pn);   // no name at all: only {}
        if (pn instanceof Map<?, ?> raw) {
            Map<String, Object> names = new LinkedHashMap<>(map(raw));
            names.keySet().removeAll(ANNOTATIONS);
            if ("string".equals(names.get("type"))) {
                names.remove("type");
            }
            if (names.keySet().equals(Set.of("pattern")) && names.get("pattern") instanceof String p) {
                regex = p;
            } else if (names.keySet().equals(Set.of("enum")) || names.keySet().equals(Set.of("const"))) {
                List<String> allowed = new ArrayList<>();
                for (Object v : names.containsKey("enum") ? list(names.get("enum"), "enum", where) : List.of(names.get("const"))) {
                    if (v instanceof String str) {
                        allowed.add(str);
                    }
                }
                none = allowed.isEmpty();
                regex = none ? null : CharAutomaton.literals(allowed);
            } else if (names.isEmpty()) {
                return out;
            }
        }
        Map<String, Object> props = out.get("properties") instanceof Map<?, ?> p ? new LinkedHashMap<>(map(p)) : new LinkedHashMap<>();
        List<String> declared = new ArrayList<>(props.keySet());
        if (out.get("required") instanceof List<?> req) {
            req.forEach(r -> declared.add(String.valueOf(r)));
        }
        if (none) {
            declared.forEach(name -> props.put(name, false));
            if (!props.isEmpty()) {
                out.put("properties", props);
            }
            out.put("additionalProperties", false);
            out.remove("patternProperties");
            return out;
        }
        if (regex == null || out.containsKey("patternProperties")) {
            throw new GrammarException("propertyNames (at " + where + ") is supported as a string 'pattern', 'enum' or"
                    + " 'const', without patternProperties");
        }
        CharAutomaton keys = CharAutomaton.search(regex);
        for (String name : declared) {
            List<CharAutomaton> both = CharAutomaton.searchAll(List.of(regex, CharAutomaton.literals(List.of(name))));
            if (both.get(0).and(both.get(1)).isEmpty()) {
                props.put(name, false);   // a name propertyNames refuses
            }
        }
        if (!props.isEmpty()) {
            out.put("properties", props);
        }
        if (!keys.isEmpty()) {
            out.put("patternProperties", Map.of(regex, out.getOrDefault("additionalProperties", Boolean.TRUE)));
        }
        out.put("additionalProperties", false);
        return out;
    }

    /**
     * The members patternProperties and additionalProperties allow besides the declared ones, exactly: a
     * key that one pattern finds a match in takes that pattern's schema, a key no pattern matches takes
     * additionalProperties' (absent: any value; false: no such key), and declared keys are left out of
     * both. Keys are character automata ({@link CharAutomaton}): each pattern minus the declared names
     * and minus the other patterns, and the complement of them all. Refused by name: two patterns with
     * different schemas that can match the same key (the value would need both), and a declared property
     * a pattern with a non-trivial schema also matches.
     */
    private Expr patternMember(Map<String, Object> pp, Object additional, List<String> declared, String where) {
        List<String> patterns = new ArrayList<>(pp.keySet());
        List<String> regexes = new ArrayList<>(patterns);
        regexes.add(CharAutomaton.literals(declared));
        List<CharAutomaton> keys = CharAutomaton.searchAll(regexes);
        CharAutomaton names = declared.isEmpty() ? null : keys.get(patterns.size());
        List<Expr> options = new ArrayList<>();
        CharAutomaton any = null;
        for (int i = 0; i < patterns.size(); i++) {
            String pattern = patterns.get(i);
            Object schema = pp.get(pattern);
            boolean trivial = Boolean.TRUE.equals(schema) || schema instanceof Map<?, ?> sm && sm.isEmpty();
            CharAutomaton key = keys.get(i);
            if (names != null && !trivial && !key.and(names).isEmpty()) {
                throw new GrammarException("patternProperties (at " + where + "): a declared property matches the"
                        + " pattern " + Constraints.quoteShort(pattern) + " too, which is not supported");
            }
            for (int j = 0; j < i; j++) {
                CharAutomaton both = key.and(keys.get(j));
                if (names != null) {
                    both = both.and(names.not());
                }
                if (!both.isEmpty() && !java.util.Objects.equals(schema, pp.get(patterns.get(j)))) {
                    throw new GrammarException("patternProperties (at " + where + "): the patterns "
                            + Constraints.quoteShort(patterns.get(j)) + " and " + Constraints.quoteShort(pattern)
                            + " can both match a key but have different schemas, which is not supported");
                }
                key = key.and(keys.get(j).not());   // a key of both is the earlier pattern's (same schema)
            }
            any = any == null ? keys.get(i) : any.or(keys.get(i));
            if (names != null) {
                key = key.and(names.not());
            }
            Expr value = schema(schema, where + "/patternProperties/" + pattern);
            if (value != null && !key.isEmpty()) {
                options.add(Expr.seq(Expr.literal("\""), key.withLength(b, 0, -1, CharSet::jsonChar, where),
                        Expr.literal("\""), ws(), Expr.literal(":"), ws(), value));
            }
        }
        Expr additionalValue = schema(additional, where + "/additionalProperties");
        if (additionalValue != null) {
            CharAutomaton other = any.not();
            if (names != null) {
                other = other.and(names.not());
            }
            if (!other.isEmpty()) {
                options.add(Expr.seq(Expr.literal("\""), other.withLength(b, 0, -1, CharSet::jsonChar, where),
                        Expr.literal("\""), ws(), Expr.literal(":"), ws(), additionalValue));
            }
        }
        return options.isEmpty() ? null : Expr.alt(options);
    }

    /** A JSON string (quotes included) that is none of {@code names}: a trie of them, left at a character off it. */
    private Expr keyNotIn(List<String> names) {
        if (names.isEmpty()) {
            return anyString();
        }
        Expr rest = Expr.seq(Expr.star(contentByte()), Expr.literal("\""));
        return Expr.seq(Expr.literal("\""), notIn(names, 0, rest));
    }

    private Expr notIn(List<String> names, int at, Expr rest) {
        Map<Integer, List<String>> next = new LinkedHashMap<>();
        boolean ends = false;
        for (String n : names) {
            if (n.length() == at) {
                ends = true;
            } else {
                int cp = n.codePointAt(at);
                next.computeIfAbsent(cp, k -> new ArrayList<>()).add(n);
            }
        }
        List<Expr> options = new ArrayList<>();
        if (!ends) {
            options.add(Expr.literal("\""));
        }
        CharSet taken = CharSet.NONE;
        for (Map.Entry<Integer, List<String>> e : next.entrySet()) {
            int cp = e.getKey();
            taken = taken.union(CharSet.of(cp));
            options.add(Expr.seq(CharSet.of(cp).jsonChar(), notIn(e.getValue(), at + Character.charCount(cp), rest)));
        }
        Expr other = CharSet.ALL.minus(taken).jsonChar();
        if (other != null) {
            options.add(Expr.seq(other, rest));
        }
        return Expr.alt(options);
    }

    // ---- arrays

    private Expr array(Map<String, Object> m, String where) {
        if (Boolean.TRUE.equals(m.get("uniqueItems"))) {
            throw new GrammarException("uniqueItems (at " + where + ") is not supported");
        }
        List<Object> prefix = new ArrayList<>();
        Object rest = Boolean.TRUE;
        if (m.get("prefixItems") instanceof List<?> p) {
            prefix.addAll(p);
            rest = m.getOrDefault("items", Boolean.TRUE);
        } else if (m.get("items") instanceof List<?> p) {
            prefix.addAll(p);
            rest = m.getOrDefault("additionalItems", Boolean.TRUE);
        } else if (m.containsKey("items")) {
            rest = m.get("items");
        }
        int min = count(m, "minItems", where) == null ? 0 : count(m, "minItems", where);
        Integer maxBox = count(m, "maxItems", where);
        int max = maxBox == null ? -1 : maxBox;
        if (max >= 0 && max < min) {
            throw new GrammarException("maxItems below minItems (at " + where + ")");
        }
        if (max >= 0 && prefix.size() > max) {
            prefix = prefix.subList(0, max);
        }
        Expr restItem = schema(rest, where + "/items");
        Expr sep = Expr.seq(ws(), Expr.literal(","), ws());
        Expr body;
        if (prefix.isEmpty()) {
            if (restItem == null || max == 0) {
                if (min > 0) {
                    throw new GrammarException("minItems " + min + " but no item is allowed (at " + where + ")");
                }
                body = Expr.EMPTY;
            } else {
                Expr list = Expr.seq(restItem, new Expr.Repeat(Expr.seq(sep, restItem), Math.max(min - 1, 0),
                        max < 0 ? -1 : max - 1));
                body = min == 0 ? Expr.opt(list) : list;
            }
        } else {
            int k = prefix.size();
            Expr tail;
            if (restItem != null && (max < 0 || max > k)) {
                tail = new Expr.Repeat(Expr.seq(sep, restItem), Math.max(0, min - k), max < 0 ? -1 : max - k);
            } else if (min > k) {
                throw new GrammarException("minItems " + min + " but only " + k + " items are allowed (at " + where + ")");
            } else {
                tail = Expr.EMPTY;
            }
            Expr next = tail;
            for (int j = k - 1; j >= 0; j--) {
                Expr item = schema(prefix.get(j), where + "/prefixItems/" + j);
                if (item == null) {
                    if (j < min) {
                        throw new GrammarException("item " + j + " accepts no value but minItems is " + min + " (at " + where + ")");
                    }
                    next = Expr.EMPTY;
                    continue;
                }
                Expr x = Expr.seq(j > 0 ? sep : Expr.EMPTY, item, next);
                next = new Expr.Ref(b.ruleFor(where + "/items" + j, j >= min ? Expr.alt(Expr.EMPTY, x) : x));
            }
            body = next;
        }
        return Expr.seq(Expr.literal("["), ws(), body, ws(), Expr.literal("]"));
    }

    // ---- literals and the generic JSON pieces

    /** The JSON text of {@code v} (enum, const): strings in any escaping a serializer may choose. */
    private Expr literal(Object v) {
        if (v == null) {
            return Expr.literal("null");
        }
        if (v instanceof Boolean bool) {
            return Expr.literal(bool.toString());
        }
        if (v instanceof Long l) {
            return Expr.literal(l.toString());
        }
        if (v instanceof Double d) {
            if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                long l = d.longValue();
                return Expr.alt(Expr.literal(Long.toString(l)), Expr.literal(l + ".0"));
            }
            return Expr.literal(d.toString());
        }
        if (v instanceof String s) {
            return stringLiteral(s);
        }
        if (v instanceof List<?> l) {
            List<Expr> items = new ArrayList<>();
            items.add(Expr.literal("["));
            items.add(ws());
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    items.add(Expr.seq(ws(), Expr.literal(","), ws()));
                }
                items.add(literal(l.get(i)));
            }
            items.add(ws());
            items.add(Expr.literal("]"));
            return Expr.seq(items);
        }
        Map<String, Object> m = map((Map<?, ?>) v);
        List<Expr> items = new ArrayList<>();
        items.add(Expr.literal("{"));
        items.add(ws());
        int i = 0;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (i++ > 0) {
                items.add(Expr.seq(ws(), Expr.literal(","), ws()));
            }
            items.add(Expr.seq(stringLiteral(e.getKey()), ws(), Expr.literal(":"), ws(), literal(e.getValue())));
        }
        items.add(ws());
        items.add(Expr.literal("}"));
        return Expr.seq(items);
    }

    /** {@code "s"}: each character as itself where JSON allows, or escaped ({@code \}{@code uXXXX} for any). */
    static Expr stringLiteral(String s) {
        List<Expr> items = new ArrayList<>();
        items.add(Expr.literal("\""));
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            List<Expr> forms = new ArrayList<>();
            Expr plain = CharSet.of(cp).jsonChar();
            if (plain != null) {
                forms.add(plain);
            }
            if (cp >= 0x80) {
                char[] units = Character.toChars(cp);
                List<Expr> escaped = new ArrayList<>();
                for (char u : units) {
                    escaped.add(Expr.literal("\\u"));
                    for (int k = 12; k >= 0; k -= 4) {
                        escaped.add(CharSet.hexDigit(u >> k & 15));
                    }
                }
                forms.add(Expr.seq(escaped));
            }
            items.add(Expr.alt(forms));
        }
        items.add(Expr.literal("\""));
        return Expr.seq(items);
    }

    private Expr ws() {
        // at most MAX_WHITESPACE at a time: room for indentation, none for a model that loops on spaces
        return freeWhitespace ? sharedRule("ws", () -> new Expr.Repeat(Expr.anyOf(" \t\n\r"), 0, MAX_WHITESPACE)) : Expr.EMPTY;
    }

    private Expr sharedRule(String name, java.util.function.Supplier<Expr> body) {
        Integer r = shared.get(name);
        if (r == null) {
            r = b.rule(name);
            shared.put(name, r);
            b.define(r, body.get());
        }
        return new Expr.Ref(r);
    }

    /** One character of a JSON string: unescaped, a short escape, or any {@code \}{@code uXXXX}. */
    private Expr stringChar() {
        return sharedRule("char", () -> {
            Expr hex = Expr.union(Expr.union(Expr.range('0', '9'), Expr.range('a', 'f')), Expr.range('A', 'F'));
            return Expr.alt(CharSet.ALL.jsonChar(), Expr.seq(Expr.literal("\\u"), hex, hex, hex, hex));
        });
    }

    /**
     * One byte of an unconstrained JSON string (or an escape): any byte but {@code "}, {@code \} and
     * control characters. Bytes of 0x80 and above are taken one by one, not as whole UTF-8
     * characters: tokens are UTF-8 fragments anyway, and a sequence that is not UTF-8 decodes to
     * U+FFFD, itself a valid string character, so the JSON stays valid. What it buys: every plain
     * byte leads back to the same parser state, so a mask inside a string skips whole subtrees of
     * the vocabulary's trie. Strings with a length, a pattern or a format count real characters.
     */
    private Expr contentByte() {
        return sharedRule("content", () -> {
            Expr hex = Expr.union(Expr.union(Expr.range('0', '9'), Expr.range('a', 'f')), Expr.range('A', 'F'));
            return Expr.alt(Expr.minus(Expr.range(0x20, 0xFF), Expr.anyOf("\"\\")),
                    Expr.seq(Expr.literal("\\"), Expr.anyOf("\"\\/bfnrt")),
                    Expr.seq(Expr.literal("\\u"), hex, hex, hex, hex));
        });
    }

    private Expr anyString() {
        return sharedRule("string", () -> Expr.seq(Expr.literal("\""), Expr.star(contentByte()), Expr.literal("\"")));
    }

    static Expr anyInteger() {
        return Expr.seq(Expr.opt(Expr.literal("-")), Expr.alt(Expr.literal("0"),
                Expr.seq(Expr.range('1', '9'), Expr.star(Expr.range('0', '9')))));
    }

    static Expr anyNumber() {
        Expr digits = Expr.plus(Expr.range('0', '9'));
        return Expr.seq(anyInteger(), Expr.opt(Expr.seq(Expr.literal("."), digits)),
                Expr.opt(Expr.seq(Expr.anyOf("eE"), Expr.opt(Expr.anyOf("+-")), digits)));
    }

    /** Any JSON value. */
    private Expr value() {
        Integer r = shared.get("value");
        if (r != null) {
            return new Expr.Ref(r);
        }
        r = b.rule("value");
        shared.put("value", r);
        Expr v = new Expr.Ref(r);
        Expr sep = Expr.seq(ws(), Expr.literal(","), ws());
        Expr member = Expr.seq(anyString(), ws(), Expr.literal(":"), ws(), v);
        Expr object = Expr.seq(Expr.literal("{"), ws(), Expr.opt(Expr.seq(member, Expr.star(Expr.seq(sep, member)))), ws(),
                Expr.literal("}"));
        Expr array = Expr.seq(Expr.literal("["), ws(), Expr.opt(Expr.seq(v, Expr.star(Expr.seq(sep, v)))), ws(),
                Expr.literal("]"));
        b.define(r, Expr.alt(object, array, anyString(), sharedRule("number", JsonSchemaCompiler::anyNumber),
                Expr.literal("true"), Expr.literal("false"), Expr.literal("null")));
        return v;
    }
}
