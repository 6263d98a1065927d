package io.nereid.engine.template;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Python value semantics over the Java values a template sees: {@code null} is None,
 * {@code Boolean} bool, {@code Long}/{@code Integer}/{@code Short}/{@code Byte} int,
 * {@code Double}/{@code Float} float, {@code String} str, {@code List} list, {@link PyTuple}
 * tuple, {@code Map} dict, {@link Undefined} Jinja2's undefined. Truthiness, {@code str()},
 * {@code repr()}, {@code len()}, iteration, {@code ==} and ordering behave as in CPython, including
 * its error messages. Stateless; thread-safe.
 */
final class PyValues {

    private PyValues() {
    }

    // ---------------------------------------------------------------- type predicates

    static boolean isInt(Object o) {
        return o instanceof Long || o instanceof Integer || o instanceof Short || o instanceof Byte;
    }

    static boolean isFloat(Object o) {
        return o instanceof Double || o instanceof Float;
    }

    /** int, float or bool (bool is an int subclass in Python). */
    static boolean isNumber(Object o) {
        return isInt(o) || isFloat(o) || o instanceof Boolean;
    }

    /** int or bool: usable where Python wants an integer. */
    static boolean isIntegral(Object o) {
        return isInt(o) || o instanceof Boolean;
    }

    static long toLong(Object o) {
        if (o instanceof Boolean b) {
            return b ? 1 : 0;
        }
        return ((Number) o).longValue();
    }

    static double toDouble(Object o) {
        if (o instanceof Boolean b) {
            return b ? 1 : 0;
        }
        return ((Number) o).doubleValue();
    }

    /** Python's {@code type(o).__name__}. */
    static String typeName(Object o) {
        if (o == null) {
            return "NoneType";
        }
        if (o instanceof Boolean) {
            return "bool";
        }
        if (isInt(o)) {
            return "int";
        }
        if (isFloat(o)) {
            return "float";
        }
        return switch (o) {
            case String s -> "str";
            case List<?> l -> "list";
            case Map<?, ?> m -> "dict";
            case PyTuple t -> "tuple";
            case Undefined u -> "Undefined";
            case Namespace n -> "Namespace";
            case LoopContext l -> "LoopContext";
            case Macro m -> "Macro";
            case PyCallable c -> "builtin_function_or_method";
            default -> o.getClass().getSimpleName();
        };
    }

    /** Jinja2's {@code object_type_repr}: {@code None}, {@code dict object}, ... */
    static String objectTypeRepr(Object o) {
        if (o == null) {
            return "None";
        }
        return switch (o) {
            case Namespace n -> "jinja2.utils.Namespace object";
            case LoopContext l -> "jinja2.runtime.LoopContext object";
            case Macro m -> "jinja2.runtime.Macro object";
            default -> typeName(o) + " object";
        };
    }

    // ---------------------------------------------------------------- truth, length, iteration

    static boolean truthy(Object o) {
        return switch (o) {
            case null -> false;
            case Boolean b -> b;
            case String s -> !s.isEmpty();
            case Long l -> l != 0;
            case Double d -> d != 0.0;
            case List<?> l -> !l.isEmpty();
            case Map<?, ?> m -> !m.isEmpty();
            case PyTuple t -> !t.items().isEmpty();
            case Undefined u -> false;
            case Number n -> isFloat(n) ? n.doubleValue() != 0.0 : n.longValue() != 0;
            default -> true;
        };
    }

    static int len(Object o) {
        return switch (o) {
            case String s -> PyStrings.length(s);
            case List<?> l -> l.size();
            case Map<?, ?> m -> m.size();
            case PyTuple t -> t.items().size();
            case Undefined u -> 0;
            case LoopContext l -> l.length();
            case null, default -> throw PyError.type("object of type '" + typeName(o) + "' has no len()");
        };
    }

    /** The items {@code for x in o} visits: list items, dict keys, string characters; undefined is empty. */
    @SuppressWarnings("unchecked")
    static List<Object> iterate(Object o) {
        return switch (o) {
            case List<?> l -> (List<Object>) l;
            case PyTuple t -> t.items();
            case Map<?, ?> m -> new ArrayList<>(m.keySet());
            case String s -> PyStrings.characters(s);
            case Undefined u -> List.of();
            case LoopContext l -> l.items();
            case null, default -> throw PyError.type("'" + typeName(o) + "' object is not iterable");
        };
    }

    // ---------------------------------------------------------------- str / repr

    /** Python {@code str(o)} as Jinja2 prints it ({@code None}, {@code True}, {@code 1.0}, {@code ['a']}). */
    static String str(Object o) {
        if (o instanceof String s) {
            return s;
        }
        StringBuilder sb = new StringBuilder();
        appendStr(sb, o);
        return sb.toString();
    }

    static void appendStr(StringBuilder sb, Object o) {
        switch (o) {
            case String s -> sb.append(s);
            case Undefined u -> { }
            case null, default -> appendRepr(sb, o);
        }
    }

    static String repr(Object o) {
        StringBuilder sb = new StringBuilder();
        appendRepr(sb, o);
        return sb.toString();
    }

    static void appendRepr(StringBuilder sb, Object o) {
        switch (o) {
            case null -> sb.append("None");
            case Boolean b -> sb.append(b ? "True" : "False");
            case String s -> appendStringRepr(sb, s);
            case Double d -> sb.append(floatRepr(d));
            case Float f -> sb.append(floatRepr(f));
            case Number n -> sb.append(n);
            case List<?> l -> appendItems(sb, "[", l, "]");
            case PyTuple t -> appendItems(sb, "(", t.items(), t.items().size() == 1 ? ",)" : ")");
            case Map<?, ?> m -> {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        sb.append(", ");
                    }
                    first = false;
                    appendRepr(sb, e.getKey());
                    sb.append(": ");
                    appendRepr(sb, e.getValue());
                }
                sb.append('}');
            }
            case Undefined u -> sb.append("Undefined");
            case Macro m -> sb.append("<Macro '").append(m.name()).append("'>");
            case PyCallable c -> sb.append("<built-in function ").append(c.name()).append('>');
            default -> sb.append(o);
        }
    }

    private static void appendItems(StringBuilder sb, String open, List<?> items, String close) {
        sb.append(open);
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            appendRepr(sb, items.get(i));
        }
        sb.append(close);
    }

    /** CPython's {@code unicode_repr}: single quotes unless only single quotes occur, escapes for non-printables. */
    static void appendStringRepr(StringBuilder sb, String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        sb.append(quote);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == quote || cp == '\\') {
                sb.append('\\').append((char) cp);
            } else if (cp == '\t') {
                sb.append("\\t");
            } else if (cp == '\n') {
                sb.append("\\n");
            } else if (cp == '\r') {
                sb.append("\\r");
            } else if (cp < ' ' || cp == 0x7f) {
                sb.append(String.format("\\x%02x", cp));
            } else if (cp < 0x7f || isPrintable(cp)) {
                sb.appendCodePoint(cp);
            } else if (cp <= 0xff) {
                sb.append(String.format("\\x%02x", cp));
            } else if (cp <= 0xffff) {
                sb.append(String.format("\\u%04x", cp));
            } else {
                sb.append(String.format("\\U%08x", cp));
            }
        }
        sb.append(quote);
    }

    /** Python's {@code str.isprintable} for one code point. */
    static boolean isPrintable(int cp) {
        if (cp == ' ') {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                 Character.UNASSIGNED, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                 Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    /** Python's {@code repr(float)}: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return 1 / d < 0 ? "-0.0" : "0.0";
        }
        BigDecimal bd = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
        if (bd.precision() == 2) {
            // Java may prefer a closer 2-digit decimal where a 1-digit one also round-trips (4.9E-324);
            // Python's repr takes the shortest.
            BigDecimal one = bd.round(new java.math.MathContext(1, java.math.RoundingMode.HALF_EVEN));
            if (one.doubleValue() == Math.abs(d)) {
                bd = one.stripTrailingZeros();
            }
        }
        String digits = bd.unscaledValue().toString();
        int decpt = digits.length() - bd.scale(); // value = 0.DIGITS * 10^decpt
        StringBuilder sb = new StringBuilder(24);
        if (d < 0) {
            sb.append('-');
        }
        if (decpt > -4 && decpt <= 16) {
            if (decpt <= 0) {
                sb.append("0.").append("0".repeat(-decpt)).append(digits);
            } else if (decpt >= digits.length()) {
                sb.append(digits).append("0".repeat(decpt - digits.length())).append(".0");
            } else {
                sb.append(digits, 0, decpt).append('.').append(digits, decpt, digits.length());
            }
        } else {
            sb.append(digits.charAt(0));
            if (digits.length() > 1) {
                sb.append('.').append(digits, 1, digits.length());
            }
            int exp = decpt - 1;
            sb.append(exp < 0 ? "e-" : "e+");
            if (Math.abs(exp) < 10) {
                sb.append('0');
            }
            sb.append(Math.abs(exp));
        }
        return sb.toString();
    }

    // ---------------------------------------------------------------- equality and ordering

    /** Python {@code a == b}: numbers by value across int/float/bool, containers element-wise. */
    static boolean eq(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null) {
            return false;
        }
        if (isNumber(a) && isNumber(b)) {
            if (isFloat(a) || isFloat(b)) {
                return toDouble(a) == toDouble(b);
            }
            return toLong(a) == toLong(b);
        }
        return switch (a) {
            case String s -> s.equals(b);
            case Undefined u -> b instanceof Undefined;
            case List<?> l -> b instanceof List<?> m && sequenceEq(l, m);
            case PyTuple t -> b instanceof PyTuple u && sequenceEq(t.items(), u.items());
            case Map<?, ?> m -> b instanceof Map<?, ?> n && mapEq(m, n);
            default -> a.equals(b);
        };
    }

    private static boolean sequenceEq(List<?> a, List<?> b) {
        if (a.size() != b.size()) {
            return false;
        }
        Iterator<?> i = a.iterator();
        Iterator<?> j = b.iterator();
        while (i.hasNext()) {
            if (!eq(i.next(), j.next())) {
                return false;
            }
        }
        return true;
    }

    private static boolean mapEq(Map<?, ?> a, Map<?, ?> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (Map.Entry<?, ?> e : a.entrySet()) {
            if (!b.containsKey(e.getKey()) || !eq(e.getValue(), b.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Python ordering for {@code op} in {@code < <= > >=}: numbers, strings (by code point), and
     * lists/tuples lexicographically; anything else is a {@code TypeError}.
     */
    static boolean order(String op, Object a, Object b) {
        if (a instanceof Undefined u) {
            throw u.error();
        }
        if (b instanceof Undefined u) {
            throw u.error();
        }
        if (isNumber(a) && isNumber(b)) {
            if (isFloat(a) || isFloat(b)) {
                double x = toDouble(a);
                double y = toDouble(b);
                return switch (op) {
                    case "<" -> x < y;
                    case "<=" -> x <= y;
                    case ">" -> x > y;
                    default -> x >= y;
                };
            }
            return test(op, Long.compare(toLong(a), toLong(b)));
        }
        if (a instanceof String s && b instanceof String t) {
            return test(op, PyStrings.compare(s, t));
        }
        if (a instanceof List<?> l && b instanceof List<?> m) {
            return sequenceOrder(op, l, m);
        }
        if (a instanceof PyTuple t && b instanceof PyTuple u) {
            return sequenceOrder(op, t.items(), u.items());
        }
        throw PyError.type("'" + op + "' not supported between instances of '" + typeName(a) + "' and '"
                + typeName(b) + "'");
    }

    private static boolean test(String op, int cmp) {
        return switch (op) {
            case "<" -> cmp < 0;
            case "<=" -> cmp <= 0;
            case ">" -> cmp > 0;
            default -> cmp >= 0;
        };
    }

    private static boolean sequenceOrder(String op, List<?> a, List<?> b) {
        int n = Math.min(a.size(), b.size());
        for (int i = 0; i < n; i++) {
            if (!eq(a.get(i), b.get(i))) {
                return order(op, a.get(i), b.get(i));
            }
        }
        return test(op, Integer.compare(a.size(), b.size()));
    }

    /** A total order for sorting consistent with {@link #order}; raises the same type errors. */
    static int compare(Object a, Object b) {
        if (eq(a, b)) {
            return 0;
        }
        return order("<", a, b) ? -1 : 1;
    }
}
