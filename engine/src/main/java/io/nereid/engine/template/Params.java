package io.nereid.engine.template;

import java.util.List;
import java.util.Map;

/**
 * Binds positional and keyword arguments to a Python-style signature, with CPython's error
 * messages for too many, unknown, duplicate or missing arguments. Stateless; thread-safe.
 */
final class Params {

    /** Default marking a required parameter. */
    static final Object REQUIRED = new Object();

    private Params() {
    }

    /**
     * @param function name for messages
     * @param names    parameter names in order
     * @param defaults one default per name ({@link #REQUIRED} for required ones)
     * @return the bound values, one per name
     */
    static Object[] bind(String function, List<Object> args, Map<String, Object> kwargs, String[] names,
                         Object... defaults) {
        if (args.size() > names.length) {
            throw PyError.type(function + "() takes at most " + names.length + " argument"
                    + (names.length == 1 ? "" : "s") + " (" + (args.size() + kwargs.size()) + " given)");
        }
        Object[] out = new Object[names.length];
        for (int i = 0; i < names.length; i++) {
            out[i] = i < args.size() ? args.get(i) : defaults[i];
        }
        for (Map.Entry<String, Object> e : kwargs.entrySet()) {
            int i = indexOf(names, e.getKey());
            if (i < 0) {
                throw PyError.type(function + "() got an unexpected keyword argument '" + e.getKey() + "'");
            }
            if (i < args.size()) {
                throw PyError.type(function + "() got multiple values for argument '" + e.getKey() + "'");
            }
            out[i] = e.getValue();
        }
        for (int i = 0; i < names.length; i++) {
            if (out[i] == REQUIRED) {
                throw PyError.type(function + "() missing required argument '" + names[i] + "'");
            }
        }
        return out;
    }

    private static int indexOf(String[] names, String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }

    static String string(String function, Object o) {
        if (o instanceof String s) {
            return s;
        }
        throw PyError.type(function + "() argument must be str, not " + PyValues.typeName(o));
    }

    /** A str argument or None. */
    static String optString(String function, Object o) {
        return o == null ? null : string(function, o);
    }

    static long integer(String function, Object o) {
        if (PyValues.isIntegral(o)) {
            return PyValues.toLong(o);
        }
        throw PyError.type("'" + PyValues.typeName(o) + "' object cannot be interpreted as an integer (in "
                + function + "())");
    }

    static int intArg(String function, Object o) {
        long v = integer(function, o);
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
    }
}
