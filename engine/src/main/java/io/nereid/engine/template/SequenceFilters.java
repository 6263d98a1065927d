package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Jinja2's filters over sequences: {@code first}, {@code last}, {@code join}, {@code list},
 * {@code items}, {@code map}, {@code select}/{@code reject}/{@code selectattr}/{@code rejectattr},
 * {@code unique}, {@code sort}, {@code reverse}, {@code dictsort}, {@code sum}, {@code min},
 * {@code max}, {@code batch}. Where Jinja2 returns a lazy generator these return a list (same
 * items; only {@code {{ xs|map(...) }}} printed without {@code |list} differs). Attribute
 * arguments accept dotted paths ({@code attribute='function.name'}) and integer parts, like
 * Jinja2's {@code make_attrgetter}. Stateless; thread-safe.
 */
final class SequenceFilters {

    private SequenceFilters() {
    }

    static void register(Map<String, Filters.Filter> table) {
        table.put("first", (ev, v, a, k) -> {
            List<Object> items = PyValues.iterate(Filters.noArgs("first", v, a, k));
            return items.isEmpty() ? Undefined.withHint("No first item, sequence was empty.") : items.getFirst();
        });
        table.put("last", (ev, v, a, k) -> {
            List<Object> items = PyValues.iterate(Filters.noArgs("last", v, a, k));
            return items.isEmpty() ? Undefined.withHint("No last item, sequence was empty.") : items.getLast();
        });
        table.put("list", (ev, v, a, k) -> new MutableList(PyValues.iterate(Filters.noArgs("list", v, a, k))));
        table.put("join", SequenceFilters::join);
        table.put("items", (ev, v, a, k) -> items(Filters.noArgs("items", v, a, k)));
        table.put("map", SequenceFilters::map);
        table.put("select", (ev, v, a, k) -> select(ev, v, a, k, false, true));
        table.put("reject", (ev, v, a, k) -> select(ev, v, a, k, false, false));
        table.put("selectattr", (ev, v, a, k) -> select(ev, v, a, k, true, true));
        table.put("rejectattr", (ev, v, a, k) -> select(ev, v, a, k, true, false));
        table.put("unique", SequenceFilters::unique);
        table.put("sort", SequenceFilters::sort);
        table.put("reverse", (ev, v, a, k) -> reverse(Filters.noArgs("reverse", v, a, k)));
        table.put("dictsort", SequenceFilters::dictsort);
        table.put("sum", SequenceFilters::sum);
        table.put("min", (ev, v, a, k) -> minMax("min", v, a, k));
        table.put("max", (ev, v, a, k) -> minMax("max", v, a, k));
        table.put("batch", SequenceFilters::batch);
    }

    /** Jinja2's {@code make_attrgetter}: {@code a.b.0} via item lookup; null attribute is identity. */
    static Function<Object, Object> attrGetter(Object attribute, boolean ignoreCase, Object dflt) {
        if (attribute == null) {
            return ignoreCase ? SequenceFilters::ignoreCase : Function.identity();
        }
        String[] parts = PyValues.str(attribute).split("\\.");
        return item -> {
            Object v = item;
            for (String part : parts) {
                Object key = !part.isEmpty() && part.chars().allMatch(Character::isDigit) ? (Object) Long.parseLong(part)
                        : part;
                v = PyAccess.getitem(v, key);
                if (dflt != null && v instanceof Undefined) {
                    v = dflt;
                }
            }
            return ignoreCase ? ignoreCase(v) : v;
        };
    }

    private static Object ignoreCase(Object v) {
        return v instanceof String s ? PyStrings.lower(s) : v;
    }

    private static Object join(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("join", a, k, new String[] {"d", "attribute"}, "", null);
        Function<Object, Object> get = attrGetter(p[1], false, null);
        String sep = PyValues.str(p[0]);
        StringBuilder sb = new StringBuilder();
        List<Object> items = PyValues.iterate(v);
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                sb.append(sep);
            }
            PyValues.appendStr(sb, get.apply(items.get(i)));
        }
        return sb.toString();
    }

    private static Object items(Object v) {
        if (v instanceof Undefined) {
            return new MutableList();
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw PyError.type("Can only get item pairs from a mapping.");
        }
        MutableList out = new MutableList(m.size());
        m.forEach((key, value) -> out.add(PyTuple.of(key, value)));
        return out;
    }

    private static Object map(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Function<Object, Object> f;
        if (a.isEmpty() && k.containsKey("attribute")) {
            for (String key : k.keySet()) {
                if (!key.equals("attribute") && !key.equals("default")) {
                    throw PyError.runtime("Unexpected keyword argument '" + key + "'");
                }
            }
            f = attrGetter(k.get("attribute"), false, k.get("default"));
        } else {
            if (a.isEmpty()) {
                throw PyError.runtime("map requires a filter argument");
            }
            String name = PyValues.str(a.getFirst());
            List<Object> rest = a.subList(1, a.size());
            f = item -> Filters.apply(name, ev, item, rest, k);
        }
        MutableList out = new MutableList();
        if (PyValues.truthy(v)) {
            for (Object item : PyValues.iterate(v)) {
                out.add(f.apply(item));
            }
        }
        return out;
    }

    private static Object select(Evaluator ev, Object v, List<Object> a, Map<String, Object> k, boolean byAttr,
                                 boolean keep) {
        MutableList out = new MutableList();
        if (!PyValues.truthy(v)) {
            return out;
        }
        int off = 0;
        Function<Object, Object> get = Function.identity();
        if (byAttr) {
            if (a.isEmpty()) {
                throw PyError.runtime("Missing parameter for attribute name");
            }
            get = attrGetter(a.getFirst(), false, null);
            off = 1;
        }
        Predicate<Object> test;
        if (a.size() > off) {
            String name = PyValues.str(a.get(off));
            List<Object> rest = a.subList(off + 1, a.size());
            test = item -> Tests.apply(name, ev, item, rest, k);
        } else {
            test = PyValues::truthy;
        }
        for (Object item : PyValues.iterate(v)) {
            if (test.test(get.apply(item)) == keep) {
                out.add(item);
            }
        }
        return out;
    }

    private static Object unique(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("unique", a, k, new String[] {"case_sensitive", "attribute"}, false, null);
        Function<Object, Object> key = attrGetter(p[1], !PyValues.truthy(p[0]), null);
        List<Object> seen = new ArrayList<>();
        MutableList out = new MutableList();
        for (Object item : PyValues.iterate(v)) {
            Object kv = key.apply(item);
            if (seen.stream().noneMatch(s -> PyValues.eq(s, kv))) {
                seen.add(kv);
                out.add(item);
            }
        }
        return out;
    }

    private static Comparator<Object> keyOrder(Function<Object, Object> key, boolean reverse) {
        Comparator<Object> c = (x, y) -> PyValues.compare(key.apply(x), key.apply(y));
        return reverse ? c.reversed() : c;
    }

    private static Object sort(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("sort", a, k, new String[] {"reverse", "case_sensitive", "attribute"},
                false, false, null);
        boolean ignoreCase = !PyValues.truthy(p[1]);
        Function<Object, Object> key;
        if (p[2] instanceof String attrs && attrs.contains(",")) {
            List<Function<Object, Object>> getters = new ArrayList<>();
            for (String part : attrs.split(",")) {
                getters.add(attrGetter(part.strip(), ignoreCase, null));
            }
            key = item -> {
                List<Object> keys = new ArrayList<>();
                getters.forEach(g -> keys.add(g.apply(item)));
                return keys;
            };
        } else {
            key = attrGetter(p[2], ignoreCase, null);
        }
        MutableList out = new MutableList(PyValues.iterate(v));
        out.sort(keyOrder(key, PyValues.truthy(p[0])));
        return out;
    }

    private static Object reverse(Object v) {
        if (v instanceof String s) {
            return new StringBuilder(s).reverse().toString();
        }
        MutableList out = new MutableList(PyValues.iterate(v));
        Collections.reverse(out);
        return out;
    }

    private static Object dictsort(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("dictsort", a, k, new String[] {"case_sensitive", "by", "reverse"},
                false, "key", false);
        int pos = switch (PyValues.str(p[1])) {
            case "key" -> 0;
            case "value" -> 1;
            default -> throw PyError.runtime("You can only sort by either \"key\" or \"value\"");
        };
        boolean ignoreCase = !PyValues.truthy(p[0]);
        MutableList pairs = (MutableList) items(v);
        Function<Object, Object> key = item -> {
            Object x = ((PyTuple) item).items().get(pos);
            return ignoreCase ? ignoreCase(x) : x;
        };
        pairs.sort(keyOrder(key, PyValues.truthy(p[2])));
        return pairs;
    }

    private static Object sum(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("sum", a, k, new String[] {"attribute", "start"}, null, 0L);
        Function<Object, Object> get = attrGetter(p[0], false, null);
        if (p[1] instanceof String) {
            throw PyError.type("sum() can't sum strings [use ''.join(seq) instead]");
        }
        Object total = p[1];
        for (Object item : PyValues.iterate(v)) {
            total = PyOps.binary("+", total, get.apply(item));
        }
        return total;
    }

    private static Object minMax(String name, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind(name, a, k, new String[] {"case_sensitive", "attribute"}, false, null);
        List<Object> items = PyValues.iterate(v);
        if (items.isEmpty()) {
            return Undefined.withHint("No aggregated item, sequence was empty.");
        }
        Function<Object, Object> key = attrGetter(p[1], !PyValues.truthy(p[0]), null);
        Object best = items.getFirst();
        Object bestKey = key.apply(best);
        for (Object item : items.subList(1, items.size())) {
            Object itemKey = key.apply(item);
            if (name.equals("min") ? PyValues.order("<", itemKey, bestKey) : PyValues.order(">", itemKey, bestKey)) {
                best = item;
                bestKey = itemKey;
            }
        }
        return best;
    }

    private static Object batch(Evaluator ev, Object v, List<Object> a, Map<String, Object> k) {
        Object[] p = Params.bind("batch", a, k, new String[] {"linecount", "fill_with"}, Params.REQUIRED, null);
        int n = Params.intArg("batch", p[0]);
        if (n <= 0) {
            throw PyError.value("batch size must be positive");
        }
        MutableList out = new MutableList();
        MutableList tmp = new MutableList();
        for (Object item : PyValues.iterate(v)) {
            if (tmp.size() == n) {
                out.add(tmp);
                tmp = new MutableList();
            }
            tmp.add(item);
        }
        if (!tmp.isEmpty()) {
            while (p[1] != null && tmp.size() < n) {
                tmp.add(p[1]);
            }
            out.add(tmp);
        }
        return out;
    }
}
