package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * Python {@code str} methods callable from templates ({@code message.content.strip()},
 * {@code content.split('</think>')[-1]}, {@code s.startswith(('a', 'b'))}, ...). Indices count
 * code points. Stateless; thread-safe.
 */
final class StrMethods {

    private static final String[] NONE = {};
    private static final String[] CHARS = {"chars"};
    private static final String[] SPLIT = {"sep", "maxsplit"};
    private static final String[] AFFIX = {"prefix", "start", "end"};
    private static final String[] SEARCH = {"sub", "start", "end"};
    private static final String[] PAD = {"width", "fillchar"};

    private StrMethods() {
    }

    static Object call(String s, String name, List<Object> args, Map<String, Object> kwargs) {
        String fn = "str." + name;
        return switch (name) {
            case "strip", "lstrip", "rstrip" -> {
                String chars = Params.optString(fn, Params.bind(fn, args, kwargs, CHARS, (Object) null)[0]);
                yield name.equals("strip") ? PyStrings.strip(s, chars)
                        : name.equals("lstrip") ? PyStrings.lstrip(s, chars) : PyStrings.rstrip(s, chars);
            }
            case "split", "rsplit" -> {
                Object[] a = Params.bind(fn, args, kwargs, SPLIT, null, -1L);
                String sep = Params.optString(fn, a[0]);
                long max = Params.integer(fn, a[1]);
                yield new MutableList(name.equals("split") ? PyStrings.split(s, sep, max)
                        : PyStrings.rsplit(s, sep, max));
            }
            case "splitlines" -> new MutableList(PyStrings.splitlines(s,
                    PyValues.truthy(Params.bind(fn, args, kwargs, new String[] {"keepends"}, false)[0])));
            case "startswith", "endswith" -> affix(s, fn, name.equals("startswith"),
                    Params.bind(fn, args, kwargs, AFFIX, Params.REQUIRED, null, null));
            case "upper" -> noArgs(fn, args, kwargs, PyStrings.upper(s));
            case "lower", "casefold" -> noArgs(fn, args, kwargs, PyStrings.lower(s));
            case "title" -> noArgs(fn, args, kwargs, PyStrings.title(s));
            case "capitalize" -> noArgs(fn, args, kwargs, PyStrings.capitalize(s));
            case "swapcase" -> noArgs(fn, args, kwargs, PyStrings.swapcase(s));
            case "replace" -> {
                Object[] a = Params.bind(fn, args, kwargs, new String[] {"old", "new", "count"},
                        Params.REQUIRED, Params.REQUIRED, -1L);
                yield PyStrings.replace(s, Params.string(fn, a[0]), Params.string(fn, a[1]), Params.integer(fn, a[2]));
            }
            case "find", "rfind", "index", "rindex", "count" -> search(s, fn, name,
                    Params.bind(fn, args, kwargs, SEARCH, Params.REQUIRED, null, null));
            case "join" -> join(s, Params.bind(fn, args, kwargs, new String[] {"iterable"}, Params.REQUIRED)[0]);
            case "format" -> PyFormat.format(s, args, kwargs);
            case "center", "ljust", "rjust" -> {
                Object[] a = Params.bind(fn, args, kwargs, PAD, Params.REQUIRED, " ");
                int width = Params.intArg(fn, a[0]);
                String fill = Params.string(fn, a[1]);
                if (PyStrings.length(fill) != 1) {
                    throw PyError.type("The fill character must be exactly one character long");
                }
                yield name.equals("center") ? PyStrings.center(s, width, fill)
                        : name.equals("ljust") ? PyStrings.ljust(s, width, fill) : PyStrings.rjust(s, width, fill);
            }
            case "zfill" -> PyStrings.zfill(s, Params.intArg(fn,
                    Params.bind(fn, args, kwargs, new String[] {"width"}, Params.REQUIRED)[0]));
            case "partition", "rpartition" -> partition(s, name.equals("partition"),
                    Params.string(fn, Params.bind(fn, args, kwargs, new String[] {"sep"}, Params.REQUIRED)[0]));
            case "removeprefix" -> {
                String p = Params.string(fn, Params.bind(fn, args, kwargs, new String[] {"prefix"}, Params.REQUIRED)[0]);
                yield s.startsWith(p) ? s.substring(p.length()) : s;
            }
            case "removesuffix" -> {
                String p = Params.string(fn, Params.bind(fn, args, kwargs, new String[] {"suffix"}, Params.REQUIRED)[0]);
                yield !p.isEmpty() && s.endsWith(p) ? s.substring(0, s.length() - p.length()) : s;
            }
            case "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric",
                 "isprintable", "isspace", "istitle", "isupper" -> noArgs(fn, args, kwargs, classify(s, name));
            default -> throw PyError.runtime("str." + name + "() is not supported in templates");
        };
    }

    private static Object noArgs(String fn, List<Object> args, Map<String, Object> kwargs, Object result) {
        Params.bind(fn, args, kwargs, NONE);
        return result;
    }

    /** Code-point bounds {@code [start, end)} of a Python {@code s[start:end]}, as UTF-16 offsets. */
    private static int[] bounds(String s, String fn, Object start, Object end) {
        int len = PyStrings.length(s);
        long a = start == null ? 0 : Params.integer(fn, start);
        long b = end == null ? len : Params.integer(fn, end);
        a = a < 0 ? Math.max(0, a + len) : Math.min(a, len);
        b = b < 0 ? Math.max(0, b + len) : Math.min(b, len);
        return new int[] {PyStrings.offset(s, (int) a), PyStrings.offset(s, (int) Math.max(a, b)), (int) a, (int) b};
    }

    private static boolean affix(String s, String fn, boolean prefix, Object[] a) {
        int[] r = bounds(s, fn, a[1], a[2]);
        if (r[2] > r[3]) {
            return false;
        }
        String window = s.substring(r[0], r[1]);
        List<Object> candidates = a[0] instanceof PyTuple t ? t.items() : List.of(a[0]);
        for (Object c : candidates) {
            if (!(c instanceof String p)) {
                throw PyError.type(fn.substring(4) + " first arg must be str or a tuple of str, not "
                        + PyValues.typeName(c));
            }
            if (prefix ? window.startsWith(p) : window.endsWith(p)) {
                return true;
            }
        }
        return false;
    }

    private static Object search(String s, String fn, String name, Object[] a) {
        String sub = Params.string(fn, a[0]);
        int[] r = bounds(s, fn, a[1], a[2]);
        if (r[2] > r[3]) {
            if (name.equals("count")) {
                return 0L;
            }
            return notFound(name);
        }
        String window = s.substring(r[0], r[1]);
        if (name.equals("count")) {
            if (sub.isEmpty()) {
                return (long) PyStrings.length(window) + 1;
            }
            long n = 0;
            for (int i = window.indexOf(sub); i >= 0; i = window.indexOf(sub, i + sub.length())) {
                n++;
            }
            return n;
        }
        int i = name.startsWith("r") ? window.lastIndexOf(sub) : window.indexOf(sub);
        if (i < 0) {
            return notFound(name);
        }
        return (long) PyStrings.index(s, r[0] + i);
    }

    private static Object notFound(String name) {
        if (name.endsWith("index")) {
            throw PyError.value("substring not found");
        }
        return -1L;
    }

    static String join(String sep, Object iterable) {
        StringBuilder sb = new StringBuilder();
        List<Object> items = PyValues.iterate(iterable);
        for (int i = 0; i < items.size(); i++) {
            if (!(items.get(i) instanceof String item)) {
                throw PyError.type("sequence item " + i + ": expected str instance, "
                        + PyValues.typeName(items.get(i)) + " found");
            }
            if (i > 0) {
                sb.append(sep);
            }
            sb.append(item);
        }
        return sb.toString();
    }

    private static PyTuple partition(String s, boolean first, String sep) {
        if (sep.isEmpty()) {
            throw PyError.value("empty separator");
        }
        int i = first ? s.indexOf(sep) : s.lastIndexOf(sep);
        if (i < 0) {
            return first ? PyTuple.of(s, "", "") : PyTuple.of("", "", s);
        }
        return PyTuple.of(s.substring(0, i), sep, s.substring(i + sep.length()));
    }

    private static boolean classify(String s, String name) {
        switch (name) {
            case "isascii" -> {
                return s.chars().allMatch(c -> c < 128);
            }
            case "islower" -> {
                return PyStrings.isCase(s, false);
            }
            case "isupper" -> {
                return PyStrings.isCase(s, true);
            }
            case "istitle" -> {
                return !s.isEmpty() && PyStrings.title(s).equals(s) && s.codePoints().anyMatch(PyStrings::isCased);
            }
            case "isidentifier" -> {
                return !s.isEmpty() && (s.codePointAt(0) == '_' || Character.isUnicodeIdentifierStart(s.codePointAt(0)))
                        && s.codePoints().allMatch(c -> c == '_' || Character.isUnicodeIdentifierPart(c)
                        && !Character.isIdentifierIgnorable(c));
            }
            case "isprintable" -> {
                return s.codePoints().allMatch(PyValues::isPrintable);
            }
            default -> { }
        }
        if (s.isEmpty()) {
            return false;
        }
        return s.codePoints().allMatch(c -> switch (name) {
            case "isalpha" -> Character.isLetter(c);
            case "isdecimal" -> Character.getType(c) == Character.DECIMAL_DIGIT_NUMBER;
            case "isdigit" -> Character.isDigit(c) || Character.getType(c) == Character.OTHER_NUMBER
                    && Character.digit(c, 10) >= 0;
            case "isnumeric" -> isNumeric(c);
            case "isspace" -> PyStrings.isSpace(c);
            default -> Character.isLetter(c) || isNumeric(c); // isalnum
        });
    }

    private static boolean isNumeric(int c) {
        int t = Character.getType(c);
        return t == Character.DECIMAL_DIGIT_NUMBER || t == Character.LETTER_NUMBER || t == Character.OTHER_NUMBER;
    }
}
