package io.nereid.engine.template;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The filter table: Jinja2's built-in filters with their Python semantics and argument names, plus
 * HF's {@code tojson}. String and number filters live here; sequence filters in
 * {@link SequenceFilters}. A name Jinja2 knows but Nereid does not implement parses, and fails
 * only if a render reaches it. Stateless; thread-safe.
 */
final class Filters {

    /** One filter: {@code value | name(args, kwargs)}. Called on the rendering thread. */
    @FunctionalInterface
    interface Filter {
        Object apply(Evaluator ev, Object value, List<Object> args, Map<String, Object> kwargs);
    }

    /** Every built-in filter name of Jinja2 3.1, implemented or not. */
    private static final Set<String> JINJA = Set.of("abs", "attr", "batch", "capitalize", "center", "count", "d",
            "default", "dictsort", "e", "escape", "filesizeformat", "first", "float", "forceescape", "format",
            "groupby", "indent", "int", "items", "join", "last", "length", "list", "lower", "map", "max", "min",
            "pprint", "random", "reject", "rejectattr", "replace", "reverse", "round", "safe", "select",
            "selectattr", "slice", "sort", "string", "striptags", "sum", "title", "tojson", "trim", "truncate",
            "unique", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr");

    private static final Map<String, Filter> TABLE = new HashMap<>();
    private static final Pattern WORD = Pattern.compile("\\w+", Pattern.UNICODE_CHARACTER_CLASS);
    private static final Pattern PY_FLOAT = Pattern.compile(
            "[+-]?(?:(?:\\d(?:_?\\d)*)?\\.?\\d(?:_?\\d)*(?:[eE][+-]?\\d(?:_?\\d)*)?|\\d(?:_?\\d)*\\.)");

    static {
        oneString("upper", PyStrings::upper);
        oneString("lower", PyStrings::lower);
        oneString("title", PyStrings::jinjaTitle);
        oneString("capitalize", PyStrings::capitalize);
        oneString("string", s -> s);
        oneString("safe", s -> s);
        oneString("e", Filters::escape);
        oneString("escape", Filters::escape);
        TABLE.put("pprint", (ev, v, a, k) -> PyValues.repr(v));
        oneString("wordcount", s -> {
            Matcher m = WORD.matcher(s);
            long n = 0;
            while (m.find()) {
                n++;
            }
            return n;
        });
        TABLE.put("trim", (ev, v, a, k) -> PyStrings.strip(PyValues.str(v),
                Params.optString("trim", Params.bind("trim", a, k, new String[] {"chars"}, (Object) null)[0])));
        TABLE.put("length", (ev, v, a, k) -> (long) PyValues.len(noArgs("length", v, a, k)));
        TABLE.put("count", TABLE.get("length"));
        TABLE.put("default", Filters::defaultFilter);
        TABLE.put("d", Filters::defaultFilter);
        TABLE.put("replace", Filters::replace);
        TABLE.put("int", Filters::toInt);
        TABLE.put("float", Filters::toFloat);
        TABLE.put("abs", (ev, v, a, k) -> abs(noArgs("abs", v, a, k)));
        TABLE.put("round", Filters::round);
        TABLE.put("indent", Filters::indent);
        TABLE.put("center", (ev, v, a, k) -> PyStrings.center(PyValues.str(v),
                Params.intArg("center", Params.bind("center", a, k, new String[] {"width"}, 80L)[0]), " "));
        TABLE.put("truncate", Filters::truncate);
        TABLE.put("format", Filters::format);
        TABLE.put("tojson", (ev, v, a, k) -> {
            Object[] p = Params.bind("tojson", a, k,
                    new String[] {"ensure_ascii", "indent", "separators", "sort_keys"}, false, null, null, false);
            return JsonDumper.of(p[0], p[1], p[2], p[3]).dump(v);
        });
        TABLE.put("attr", (ev, v, a, k) -> {
            String name = PyValues.str(Params.bind("attr", a, k, new String[] {"name"}, Params.REQUIRED)[0]);
            if (v instanceof Map<?, ?>) {
                Object method = Methods.attribute(v, name);
                return method != null ? method : Undefined.member(v, name);
            }
            return PyAccess.getattr(v, name);
        });
        SequenceFilters.register(TABLE);
    }

    private Filters() {
    }

    static boolean isKnown(String name) {
        return TABLE.containsKey(name) || JINJA.contains(name);
    }

    static Object apply(String name, Evaluator ev, Object value, List<Object> args, Map<String, Object> kwargs) {
        Filter f = TABLE.get(name);
        if (f == null) {
            throw JINJA.contains(name) ? PyError.runtime("the filter '" + name + "' is not supported by Nereid")
                    : PyError.runtime("No filter named '" + name + "'.");
        }
        return f.apply(ev, value, args, kwargs);
    }

    private static void oneString(String name, java.util.function.Function<String, Object> f) {
        TABLE.put(name, (ev, v, a, k) -> f.apply(PyValues.str(noArgs(name, v, a, k))));
    }

    static Object noArgs(String name, Object value, List<Object> args, Map<String, Object> kwargs) {
        Params.bind(name, args, kwargs, new String[0]);
        return value;
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> sb.append("&amp;");
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '"' -> sb.append("&#34;");
                case '\'' -> sb.append("&#39;");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }

    private static Object defaultFilter(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("default", a, k, new String[] {"default_value", "boolean"}, "", false);
        return v instanceof Undefined || PyValues.truthy(p[1]) && !PyValues.truthy(v) ? p[0] : v;
    }

    private static Object replace(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("replace", a, k, new String[] {"old", "new", "count"},
                Params.REQUIRED, Params.REQUIRED, null);
        long count = p[2] == null ? -1 : Params.integer("replace", p[2]);
        return PyStrings.replace(PyValues.str(v), PyValues.str(p[0]), PyValues.str(p[1]), count);
    }

    private static Object abs(Object v) {
        if (PyValues.isFloat(v)) {
            return Math.abs(PyValues.toDouble(v));
        }
        if (PyValues.isIntegral(v)) {
            long x = PyValues.toLong(v);
            if (x == Long.MIN_VALUE) {
                throw PyError.overflow("integer result does not fit in 64 bits");
            }
            return Math.abs(x);
        }
        throw PyError.type("bad operand type for abs(): '" + PyValues.typeName(v) + "'");
    }

    private static Object toInt(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("int", a, k, new String[] {"default", "base"}, 0L, 10L);
        int base = Params.intArg("int", p[1]);
        if (v instanceof Undefined u) {
            throw u.error();
        }
        if (v instanceof String s) {
            Long parsed = parseInt(s, base);
            if (parsed != null) {
                return parsed;
            }
            Double d = parseFloat(s);
            return d != null && !d.isNaN() && !d.isInfinite() ? (Object) (long) d.doubleValue() : p[0];
        }
        if (PyValues.isIntegral(v)) {
            return PyValues.toLong(v);
        }
        if (PyValues.isFloat(v)) {
            double d = PyValues.toDouble(v);
            return Double.isNaN(d) || Double.isInfinite(d) ? p[0] : (Object) (long) d;
        }
        return p[0];
    }

    /** Python {@code int(s, base)}: surrounding whitespace, sign, underscores, base prefixes. */
    static Long parseInt(String text, int base) {
        String s = PyStrings.strip(text, null);
        boolean negative = false;
        if (!s.isEmpty() && (s.charAt(0) == '+' || s.charAt(0) == '-')) {
            negative = s.charAt(0) == '-';
            s = s.substring(1);
        }
        String lower = s.toLowerCase(java.util.Locale.ROOT);
        int prefixBase = lower.startsWith("0x") ? 16 : lower.startsWith("0o") ? 8 : lower.startsWith("0b") ? 2 : 0;
        if (prefixBase != 0 && (base == prefixBase || base == 0)) {
            s = s.substring(2);
            base = prefixBase;
            if (s.startsWith("_")) {
                s = s.substring(1);
            }
        } else if (base == 0) {
            base = 10;
        }
        if (s.isEmpty() || s.startsWith("_") || s.endsWith("_") || s.contains("__") || base < 2 || base > 36) {
            return null;
        }
        try {
            long v = Long.parseLong(s.replace("_", ""), base);
            return negative ? -v : v;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Python {@code float(s)}, or null where Python raises ValueError. */
    static Double parseFloat(String text) {
        String s = PyStrings.strip(text, null);
        String lower = s.toLowerCase(java.util.Locale.ROOT);
        String unsigned = lower.startsWith("+") || lower.startsWith("-") ? lower.substring(1) : lower;
        double sign = lower.startsWith("-") ? -1 : 1;
        if (unsigned.equals("inf") || unsigned.equals("infinity")) {
            return sign * Double.POSITIVE_INFINITY;
        }
        if (unsigned.equals("nan")) {
            return Double.NaN;
        }
        if (!PY_FLOAT.matcher(s).matches()) {
            return null;
        }
        return Double.parseDouble(s.replace("_", ""));
    }

    private static Object toFloat(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object dflt = Params.bind("float", a, k, new String[] {"default"}, 0.0)[0];
        if (v instanceof Undefined u) {
            throw u.error();
        }
        if (v instanceof String s) {
            Double d = parseFloat(s);
            return d != null ? d : dflt;
        }
        return PyValues.isNumber(v) ? (Object) PyValues.toDouble(v) : dflt;
    }

    private static Object round(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("round", a, k, new String[] {"precision", "method"}, 0L, "common");
        int precision = Params.intArg("round", p[0]);
        String method = PyValues.str(p[1]);
        if (!method.equals("common") && !method.equals("ceil") && !method.equals("floor")) {
            throw PyError.runtime("method must be common, ceil or floor");
        }
        if (!PyValues.isNumber(v)) {
            throw PyError.type("type " + PyValues.typeName(v) + " doesn't define __round__ method");
        }
        if (method.equals("common") && PyValues.isIntegral(v)) {
            return new BigDecimal(PyValues.toLong(v)).setScale(precision, RoundingMode.HALF_EVEN).longValue();
        }
        double d = PyValues.toDouble(v);
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return d;
        }
        RoundingMode mode = switch (method) {
            case "ceil" -> RoundingMode.CEILING;
            case "floor" -> RoundingMode.FLOOR;
            default -> RoundingMode.HALF_EVEN;
        };
        return new BigDecimal(d).setScale(precision, mode).doubleValue();
    }

    private static Object indent(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("indent", a, k, new String[] {"width", "first", "blank"}, 4L, false, false);
        String indention = p[0] instanceof String s ? s : " ".repeat(Math.max(0, Params.intArg("indent", p[0])));
        String s = PyValues.str(v) + "\n"; // Jinja2's quirk so that splitlines keeps a trailing empty line
        List<Object> lines = PyStrings.splitlines(s, false);
        StringBuilder rv = new StringBuilder();
        if (PyValues.truthy(p[2])) {
            for (int i = 0; i < lines.size(); i++) {
                if (i > 0) {
                    rv.append('\n').append(indention);
                }
                rv.append((String) lines.get(i));
            }
        } else {
            rv.append((String) lines.getFirst());
            for (int i = 1; i < lines.size(); i++) {
                String line = (String) lines.get(i);
                rv.append('\n');
                if (!line.isEmpty()) {
                    rv.append(indention).append(line);
                }
            }
        }
        return PyValues.truthy(p[1]) ? indention + rv : rv.toString();
    }

    private static Object truncate(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("truncate", a, k, new String[] {"length", "killwords", "end", "leeway"},
                255L, false, "...", null);
        String s = PyValues.str(v);
        int length = Params.intArg("truncate", p[0]);
        String end = PyValues.str(p[2]);
        int leeway = p[3] == null ? 5 : Params.intArg("truncate", p[3]);
        int endLength = PyStrings.length(end);
        if (length < endLength) {
            throw PyError.runtime("expected length >= " + endLength + ", got " + length);
        }
        if (PyStrings.length(s) <= length + leeway) {
            return s;
        }
        String head = s.substring(0, PyStrings.offset(s, length - endLength));
        if (PyValues.truthy(p[1])) {
            return head + end;
        }
        int space = head.lastIndexOf(' ');
        return (space < 0 ? head : head.substring(0, space)) + end;
    }

    private static Object format(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        if (!a.isEmpty() && !k.isEmpty()) {
            throw PyError.runtime("can't handle positional and keyword arguments at the same time");
        }
        return PyFormat.percent(PyValues.str(v), k.isEmpty() ? PyTuple.copyOf(a) : k);
    }
}
