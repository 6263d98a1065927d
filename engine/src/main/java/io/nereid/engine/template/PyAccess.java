package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * Attribute and item access as Jinja2's sandbox does it. {@code obj.name} tries the Python
 * attribute first (so {@code d.items} is the method) and falls back to the item;
 * {@code obj[key]} tries the item first and falls back to the attribute for string keys. A miss
 * is an {@link Undefined}, never an error; access on an undefined value is an error. Slicing
 * follows Python exactly (negative bounds, steps, clamping). Stateless; thread-safe.
 */
final class PyAccess {

    private PyAccess() {
    }

    static Object getattr(Object obj, String name) {
        return switch (obj) {
            case Undefined u -> throw u.error();
            case Map<?, ?> m -> {
                Object method = Methods.attribute(obj, name);
                if (method != null) {
                    yield method;
                }
                yield m.containsKey(name) ? m.get(name) : Undefined.member(obj, name);
            }
            case Namespace ns -> ns.attributes().containsKey(name) ? ns.attributes().get(name)
                    : Undefined.member(obj, name);
            case LoopContext loop -> loop.attribute(name);
            case null -> Undefined.member(null, name);
            default -> {
                Object method = Methods.attribute(obj, name);
                yield method != null ? method : Undefined.member(obj, name);
            }
        };
    }

    static Object getitem(Object obj, Object key) {
        if (obj instanceof Undefined u) {
            throw u.error();
        }
        Object found = item(obj, key);
        if (found != Frame.MISSING) {
            return found;
        }
        if (key instanceof String name && !(obj instanceof Map<?, ?> m && m.containsKey(name))) {
            Object attr = obj instanceof Map<?, ?> ? Methods.attribute(obj, name) : getattr(obj, name);
            if (attr != null && !(attr instanceof Undefined)) {
                return attr;
            }
        }
        return Undefined.member(obj, key);
    }

    /** {@code obj[key]} in Python terms, or {@link Frame#MISSING} where Python raises a lookup or type error. */
    static Object item(Object obj, Object key) {
        if (key instanceof PySlice slice) {
            return slice(obj, slice);
        }
        switch (obj) {
            case Map<?, ?> m -> {
                if (m.containsKey(key)) {
                    return m.get(key);
                }
                if (PyValues.isNumber(key)) { // Python: 1, 1.0 and True are the same key
                    for (Map.Entry<?, ?> e : m.entrySet()) {
                        if (PyValues.isNumber(e.getKey()) && PyValues.eq(e.getKey(), key)) {
                            return e.getValue();
                        }
                    }
                }
                return Frame.MISSING;
            }
            case List<?> l -> {
                int i = index(l.size(), key);
                return i < 0 ? Frame.MISSING : l.get(i);
            }
            case PyTuple t -> {
                int i = index(t.items().size(), key);
                return i < 0 ? Frame.MISSING : t.items().get(i);
            }
            case String s -> {
                if (!PyValues.isIntegral(key)) {
                    return Frame.MISSING;
                }
                int i = index(PyStrings.length(s), key);
                if (i < 0) {
                    return Frame.MISSING;
                }
                int off = PyStrings.offset(s, i);
                return s.substring(off, off + Character.charCount(s.codePointAt(off)));
            }
            case null, default -> {
                return Frame.MISSING;
            }
        }
    }

    /** Python index normalization; -1 when out of range or not an int. */
    private static int index(int size, Object key) {
        if (!PyValues.isIntegral(key)) {
            return -1;
        }
        long i = PyValues.toLong(key);
        if (i < 0) {
            i += size;
        }
        return i < 0 || i >= size ? -1 : (int) i;
    }

    /** {@code obj[start:stop:step]} for lists, tuples and strings; MISSING for anything else. */
    static Object slice(Object obj, PySlice slice) {
        int size = switch (obj) {
            case List<?> l -> l.size();
            case PyTuple t -> t.items().size();
            case String s -> PyStrings.length(s);
            case null, default -> -1;
        };
        if (size < 0) {
            return Frame.MISSING;
        }
        int[] idx = sliceIndices(size, slice);
        if (idx == null) {
            return Frame.MISSING;
        }
        int start = idx[0];
        int step = idx[1];
        int count = idx[2];
        if (obj instanceof String s) {
            StringBuilder sb = new StringBuilder(count);
            if (!PyStrings.hasSurrogates(s)) {
                for (int k = 0, i = start; k < count; k++, i += step) {
                    sb.append(s.charAt(i));
                }
            } else {
                int[] cps = s.codePoints().toArray();
                for (int k = 0, i = start; k < count; k++, i += step) {
                    sb.appendCodePoint(cps[i]);
                }
            }
            return sb.toString();
        }
        List<?> items = obj instanceof List<?> l ? l : ((PyTuple) obj).items();
        MutableList out = new MutableList(count);
        for (int k = 0, i = start; k < count; k++, i += step) {
            out.add(items.get(i));
        }
        return obj instanceof PyTuple ? PyTuple.copyOf(out) : out;
    }

    /** CPython's {@code PySlice_AdjustIndices}: {start, step, count}; null if a bound is not an int. */
    private static int[] sliceIndices(int len, PySlice s) {
        if (!isBound(s.start()) || !isBound(s.stop()) || !isBound(s.step())) {
            return null;
        }
        long step = s.step() == null ? 1 : PyValues.toLong(s.step());
        if (step == 0) {
            throw PyError.value("slice step cannot be zero");
        }
        long start;
        long stop;
        if (s.start() == null) {
            start = step < 0 ? len - 1 : 0;
        } else {
            start = clamp(PyValues.toLong(s.start()), len, step);
        }
        if (s.stop() == null) {
            stop = step < 0 ? -1 : len;
        } else {
            stop = clamp(PyValues.toLong(s.stop()), len, step);
        }
        long count;
        if (step < 0) {
            count = stop < start ? (start - stop - 1) / -step + 1 : 0;
        } else {
            count = start < stop ? (stop - start - 1) / step + 1 : 0;
        }
        return new int[] {(int) start, (int) Math.max(Math.min(step, Integer.MAX_VALUE), Integer.MIN_VALUE),
            (int) count};
    }

    private static boolean isBound(Object o) {
        return o == null || PyValues.isIntegral(o);
    }

    private static long clamp(long i, int len, long step) {
        if (i < 0) {
            i += len;
            if (i < 0) {
                i = step < 0 ? -1 : 0;
            }
        } else if (i >= len) {
            i = step < 0 ? len - 1 : len;
        }
        return i;
    }
}
