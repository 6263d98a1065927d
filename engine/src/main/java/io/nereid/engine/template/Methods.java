package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Methods callable on values, with Python semantics: {@code str} (strip, split, startswith,
 * replace, find, format, ...), {@code dict} (get, items, keys, values, copy), {@code list} and
 * {@code tuple} (index, count, and on template-created lists only, the mutators).
 *
 * <p>Like HF's {@code ImmutableSandboxedEnvironment}, a mutating method on the caller's data
 * ({@code messages.append}, {@code message.update}) is an unsafe attribute: an undefined whose use
 * raises. Unlike it, lists the template built itself can be mutated ({@code append},
 * {@code extend}, {@code pop}, ...): more permissive than HF, never less.
 * {@code dict.items()/keys()/values()} return lists (they print as lists, not as
 * {@code dict_items([...])}). Stateless; thread-safe.
 */
final class Methods {

    private static final Set<String> STR = Set.of("capitalize", "casefold", "center", "count", "endswith", "find",
            "format", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
            "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip",
            "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition",
            "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "upper", "zfill",
            "encode", "expandtabs", "format_map", "maketrans", "translate");
    private static final Set<String> DICT_SAFE = Set.of("get", "items", "keys", "values", "copy");
    private static final Set<String> DICT_UNSAFE = Set.of("clear", "pop", "popitem", "setdefault", "update");
    private static final Set<String> LIST_SAFE = Set.of("index", "count", "copy");
    private static final Set<String> LIST_UNSAFE =
            Set.of("append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear");
    private static final Set<String> LIST_ALL = Set.of("index", "count", "copy",
            "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear");

    private Methods() {
    }

    /** The bound method {@code obj.name}, an unsafe-attribute undefined, or null if there is none. */
    static Object attribute(Object obj, String name) {
        Set<String> safe;
        Set<String> unsafe = Set.of();
        switch (obj) {
            case String s -> safe = STR;
            case Map<?, ?> m -> {
                safe = DICT_SAFE;
                unsafe = DICT_UNSAFE;
            }
            case MutableList l -> safe = LIST_ALL;
            case List<?> l -> {
                safe = LIST_SAFE;
                unsafe = LIST_UNSAFE;
            }
            case PyTuple t -> safe = Set.of("index", "count");
            case null, default -> {
                return null;
            }
        }
        if (safe.contains(name)) {
            return new BoundMethod(obj, name);
        }
        if (unsafe.contains(name)) {
            return Undefined.unsafe("access to attribute '" + name + "' of '" + PyValues.typeName(obj)
                    + "' object is unsafe.");
        }
        return null;
    }

    static Object call(Object self, String name, List<Object> args, Map<String, Object> kwargs) {
        return switch (self) {
            case String s -> StrMethods.call(s, name, args, kwargs);
            case Map<?, ?> m -> dict(m, name, args, kwargs);
            case List<?> l -> list(l, name, args, kwargs);
            case PyTuple t -> list(t.items(), name, args, kwargs);
            default -> throw PyError.type("'" + PyValues.typeName(self) + "' object has no method " + name);
        };
    }

    private static Object dict(Map<?, ?> m, String name, List<Object> args, Map<String, Object> kwargs) {
        String fn = "dict." + name;
        switch (name) {
            case "get" -> {
                Object[] a = Params.bind(fn, args, kwargs, new String[] {"key", "default"}, Params.REQUIRED, null);
                Object v = PyAccess.item(m, a[0]);
                return v == Frame.MISSING ? a[1] : v;
            }
            case "items" -> {
                Params.bind(fn, args, kwargs, new String[0]);
                List<Object> out = new ArrayList<>(m.size());
                m.forEach((k, v) -> out.add(PyTuple.of(k, v)));
                return out;
            }
            case "keys" -> {
                Params.bind(fn, args, kwargs, new String[0]);
                return new ArrayList<Object>(m.keySet());
            }
            case "values" -> {
                Params.bind(fn, args, kwargs, new String[0]);
                return new ArrayList<Object>(m.values());
            }
            case "copy" -> {
                Params.bind(fn, args, kwargs, new String[0]);
                return new LinkedHashMap<Object, Object>(m);
            }
            default -> throw PyError.security("access to attribute '" + name + "' of 'dict' object is unsafe.");
        }
    }

    @SuppressWarnings("unchecked")
    private static Object list(List<?> l, String name, List<Object> args, Map<String, Object> kwargs) {
        String fn = "list." + name;
        switch (name) {
            case "index" -> {
                Object[] a = Params.bind(fn, args, kwargs, new String[] {"value"}, Params.REQUIRED);
                for (int i = 0; i < l.size(); i++) {
                    if (PyValues.eq(l.get(i), a[0])) {
                        return (long) i;
                    }
                }
                throw PyError.value(PyValues.repr(a[0]) + " is not in list");
            }
            case "count" -> {
                Object[] a = Params.bind(fn, args, kwargs, new String[] {"value"}, Params.REQUIRED);
                return l.stream().filter(o -> PyValues.eq(o, a[0])).count();
            }
            case "copy" -> {
                return new MutableList(l);
            }
            default -> {
                if (!(l instanceof MutableList)) {
                    throw PyError.security("access to attribute '" + name + "' of 'list' object is unsafe.");
                }
                return mutate((MutableList) l, fn, name, args, kwargs);
            }
        }
    }

    private static Object mutate(MutableList l, String fn, String name, List<Object> args,
                                 Map<String, Object> kwargs) {
        switch (name) {
            case "append" -> l.add(Params.bind(fn, args, kwargs, new String[] {"object"}, Params.REQUIRED)[0]);
            case "extend" -> l.addAll(PyValues.iterate(
                    Params.bind(fn, args, kwargs, new String[] {"iterable"}, Params.REQUIRED)[0]));
            case "insert" -> {
                Object[] a = Params.bind(fn, args, kwargs, new String[] {"index", "object"}, Params.REQUIRED,
                        Params.REQUIRED);
                long i = Params.integer(fn, a[0]);
                if (i < 0) {
                    i = Math.max(0, i + l.size());
                }
                l.add((int) Math.min(i, l.size()), a[1]);
            }
            case "pop" -> {
                Object[] a = Params.bind(fn, args, kwargs, new String[] {"index"}, -1L);
                if (l.isEmpty()) {
                    throw new PyError("IndexError", "pop from empty list");
                }
                long i = Params.integer(fn, a[0]);
                if (i < 0) {
                    i += l.size();
                }
                if (i < 0 || i >= l.size()) {
                    throw new PyError("IndexError", "pop index out of range");
                }
                return l.remove((int) i);
            }
            case "remove" -> {
                Object v = Params.bind(fn, args, kwargs, new String[] {"value"}, Params.REQUIRED)[0];
                for (int i = 0; i < l.size(); i++) {
                    if (PyValues.eq(l.get(i), v)) {
                        l.remove(i);
                        return null;
                    }
                }
                throw PyError.value("list.remove(x): x not in list");
            }
            case "reverse" -> java.util.Collections.reverse(l);
            case "sort" -> {
                Object[] a = Params.bind(fn, new ArrayList<>(), kwargs, new String[] {"key", "reverse"}, null, false);
                if (!args.isEmpty() || a[0] != null) {
                    throw PyError.type("list.sort() supports only reverse= in templates");
                }
                boolean reverse = PyValues.truthy(a[1]);
                l.sort((x, y) -> reverse ? PyValues.compare(y, x) : PyValues.compare(x, y));
            }
            case "clear" -> l.clear();
            default -> throw PyError.type("'list' object has no attribute '" + name + "'");
        }
        return null;
    }
}
