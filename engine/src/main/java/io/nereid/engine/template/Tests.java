package io.nereid.engine.template;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The test table of {@code x is name(args)}: Jinja2's built-in tests with Python semantics
 * ({@code number} includes bool, {@code iterable} and {@code sequence} are true for strings and
 * undefined, {@code integer} excludes bool). Stateless; thread-safe.
 */
final class Tests {

    /** One test. Called on the rendering thread. */
    @FunctionalInterface
    interface Test {
        boolean apply(Evaluator ev, Object value, List<Object> args);
    }

    private static final Map<String, Test> TABLE = new HashMap<>();

    static {
        TABLE.put("defined", (ev, v, a) -> !(v instanceof Undefined));
        TABLE.put("undefined", (ev, v, a) -> v instanceof Undefined);
        TABLE.put("none", (ev, v, a) -> v == null);
        TABLE.put("boolean", (ev, v, a) -> v instanceof Boolean);
        TABLE.put("true", (ev, v, a) -> Boolean.TRUE.equals(v));
        TABLE.put("false", (ev, v, a) -> Boolean.FALSE.equals(v));
        TABLE.put("integer", (ev, v, a) -> PyValues.isInt(v));
        TABLE.put("float", (ev, v, a) -> PyValues.isFloat(v));
        TABLE.put("number", (ev, v, a) -> PyValues.isNumber(v));
        TABLE.put("string", (ev, v, a) -> v instanceof String);
        TABLE.put("mapping", (ev, v, a) -> v instanceof Map<?, ?>);
        TABLE.put("iterable", (ev, v, a) -> v instanceof String || v instanceof List<?> || v instanceof Map<?, ?>
                || v instanceof PyTuple || v instanceof Undefined || v instanceof LoopContext);
        TABLE.put("sequence", (ev, v, a) -> v instanceof String || v instanceof List<?> || v instanceof Map<?, ?>
                || v instanceof PyTuple || v instanceof Undefined);
        TABLE.put("callable", (ev, v, a) -> v instanceof PyCallable || v instanceof Undefined);
        TABLE.put("odd", (ev, v, a) -> PyValues.truthy(PyOps.binary("%", v, 2L)));
        TABLE.put("even", (ev, v, a) -> !PyValues.truthy(PyOps.binary("%", v, 2L)));
        TABLE.put("divisibleby", (ev, v, a) -> !PyValues.truthy(PyOps.binary("%", v, arg(a, "divisibleby"))));
        Test eq = (ev, v, a) -> PyValues.eq(v, arg(a, "eq"));
        Test ne = (ev, v, a) -> !PyValues.eq(v, arg(a, "ne"));
        Test lt = (ev, v, a) -> PyValues.order("<", v, arg(a, "lt"));
        Test le = (ev, v, a) -> PyValues.order("<=", v, arg(a, "le"));
        Test gt = (ev, v, a) -> PyValues.order(">", v, arg(a, "gt"));
        Test ge = (ev, v, a) -> PyValues.order(">=", v, arg(a, "ge"));
        for (String name : new String[] {"eq", "equalto", "=="}) {
            TABLE.put(name, eq);
        }
        TABLE.put("ne", ne);
        TABLE.put("!=", ne);
        for (String name : new String[] {"lt", "lessthan", "<"}) {
            TABLE.put(name, lt);
        }
        TABLE.put("le", le);
        TABLE.put("<=", le);
        for (String name : new String[] {"gt", "greaterthan", ">"}) {
            TABLE.put(name, gt);
        }
        TABLE.put("ge", ge);
        TABLE.put(">=", ge);
        TABLE.put("in", (ev, v, a) -> PyOps.contains(arg(a, "in"), v));
        TABLE.put("sameas", (ev, v, a) -> sameAs(v, arg(a, "sameas")));
        TABLE.put("lower", (ev, v, a) -> PyStrings.isCase(PyValues.str(v), false));
        TABLE.put("upper", (ev, v, a) -> PyStrings.isCase(PyValues.str(v), true));
        TABLE.put("escaped", (ev, v, a) -> false);
        TABLE.put("filter", (ev, v, a) -> v instanceof String s && Filters.isKnown(s));
        TABLE.put("test", (ev, v, a) -> v instanceof String s && isKnown(s));
    }

    private Tests() {
    }

    static boolean isKnown(String name) {
        return TABLE.containsKey(name);
    }

    static boolean apply(String name, Evaluator ev, Object value, List<Object> args, Map<String, Object> kwargs) {
        Test t = TABLE.get(name);
        if (t == null) {
            throw PyError.runtime("No test named '" + name + "'.");
        }
        if (!kwargs.isEmpty()) {
            throw PyError.type("test '" + name + "' takes no keyword arguments");
        }
        return t.apply(ev, value, args);
    }

    private static Object arg(List<Object> args, String test) {
        if (args.size() != 1) {
            throw PyError.type("test '" + test + "' takes exactly one argument (" + args.size() + " given)");
        }
        return args.getFirst();
    }

    /** Python {@code is}: None/True/False are singletons, small ints are cached, otherwise identity. */
    private static boolean sameAs(Object a, Object b) {
        if (a == null || b == null || a instanceof Boolean || b instanceof Boolean) {
            return a == null ? b == null : a.equals(b);
        }
        if (PyValues.isInt(a) && PyValues.isInt(b)) {
            long x = PyValues.toLong(a);
            return x == PyValues.toLong(b) && x >= -5 && x <= 256;
        }
        return a == b;
    }
}
