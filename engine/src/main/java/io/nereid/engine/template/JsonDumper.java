package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code tojson} filter as HF transformers defines it:
 * {@code json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)}.
 * Output matches CPython's {@code json} module byte for byte: default separators {@code ", "} and
 * {@code ": "}, or {@code ","} between items when indenting; floats as Python {@code repr}
 * ({@code NaN}, {@code Infinity}); key order kept unless sorted; non-string keys converted like
 * Python; anything not JSON-like is a {@code TypeError}. Stateless; thread-safe.
 */
final class JsonDumper {

    private static final int MAX_DEPTH = 500;

    private final boolean ensureAscii;
    private final String indent;      // null: single line
    private final String itemSeparator;
    private final String keySeparator;
    private final boolean sortKeys;

    JsonDumper(boolean ensureAscii, String indent, String itemSeparator, String keySeparator, boolean sortKeys) {
        this.ensureAscii = ensureAscii;
        this.indent = indent;
        this.itemSeparator = itemSeparator;
        this.keySeparator = keySeparator;
        this.sortKeys = sortKeys;
    }

    /** From the filter's arguments: {@code indent} None/int/str, {@code separators} None or a pair of str. */
    static JsonDumper of(Object ensureAscii, Object indent, Object separators, Object sortKeys) {
        String ind = switch (indent) {
            case null -> null;
            case String s -> s;
            default -> {
                if (!PyValues.isIntegral(indent)) {
                    throw PyError.type("indent must be None, an int or a str, not " + PyValues.typeName(indent));
                }
                yield " ".repeat((int) Math.max(0, Math.min(PyValues.toLong(indent), 1000)));
            }
        };
        String item = ind == null ? ", " : ",";
        String key = ": ";
        if (separators != null) {
            List<Object> pair = PyValues.iterate(separators);
            if (pair.size() != 2 || !(pair.get(0) instanceof String a) || !(pair.get(1) instanceof String b)) {
                throw PyError.value("separators must be a pair of strings");
            }
            item = a;
            key = b;
        }
        return new JsonDumper(PyValues.truthy(ensureAscii), ind, item, key, PyValues.truthy(sortKeys));
    }

    String dump(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.toString();
    }

    private void write(StringBuilder sb, Object value, int depth) {
        if (depth > MAX_DEPTH) {
            throw PyError.value("Circular reference detected");
        }
        switch (value) {
            case null -> sb.append("null");
            case Boolean b -> sb.append(b ? "true" : "false");
            case String s -> string(sb, s);
            case Double d -> sb.append(number(d));
            case Float f -> sb.append(number(f));
            case Number n when PyValues.isInt(n) -> sb.append(n.longValue());
            case List<?> l -> array(sb, l, depth);
            case PyTuple t -> array(sb, t.items(), depth);
            case Map<?, ?> m -> object(sb, m, depth);
            default -> throw PyError.type("Object of type " + PyValues.typeName(value) + " is not JSON serializable");
        }
    }

    private static String number(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        return PyValues.floatRepr(d);
    }

    private void newline(StringBuilder sb, int level) {
        sb.append('\n');
        for (int i = 0; i < level; i++) {
            sb.append(indent);
        }
    }

    private void array(StringBuilder sb, List<?> items, int depth) {
        if (items.isEmpty()) {
            sb.append("[]");
            return;
        }
        sb.append('[');
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                sb.append(itemSeparator);
            }
            if (indent != null) {
                newline(sb, depth + 1);
            }
            write(sb, items.get(i), depth + 1);
        }
        if (indent != null) {
            newline(sb, depth);
        }
        sb.append(']');
    }

    private void object(StringBuilder sb, Map<?, ?> map, int depth) {
        if (map.isEmpty()) {
            sb.append("{}");
            return;
        }
        List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
        if (sortKeys) {
            entries.sort((a, b) -> PyValues.compare(a.getKey(), b.getKey()));
        }
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : entries) {
            if (!first) {
                sb.append(itemSeparator);
            }
            first = false;
            if (indent != null) {
                newline(sb, depth + 1);
            }
            string(sb, key(e.getKey()));
            sb.append(keySeparator);
            write(sb, e.getValue(), depth + 1);
        }
        if (indent != null) {
            newline(sb, depth);
        }
        sb.append('}');
    }

    private static String key(Object k) {
        return switch (k) {
            case String s -> s;
            case Boolean b -> b ? "true" : "false";
            case null -> "null";
            case Double d -> number(d);
            case Float f -> number(f);
            case Number n when PyValues.isInt(n) -> Long.toString(n.longValue());
            default -> throw PyError.type("keys must be str, int, float, bool or None, not " + PyValues.typeName(k));
        };
    }

    private void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || ensureAscii && c > 0x7e) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
