package io.nereid.engine.template;

import java.util.HashMap;
import java.util.Map;

/**
 * One variable scope. Lookups walk outward through the parents. Scopes follow Jinja2: the
 * template's top level, each loop iteration, each macro call and each captured block
 * ({@code set} block, {@code filter}, {@code with}) get their own frame, so a {@code set} inside
 * them never leaks out; {@code if} shares its enclosing frame. Macros close over the frame they
 * were defined in. Lives within one render; not thread-safe.
 */
final class Frame {

    /** Returned by {@link #get} for a name bound nowhere (distinct from None). */
    static final Object MISSING = new Object();

    private final Frame parent;
    private Map<String, Object> vars; // created on the first assignment

    Frame(Frame parent) {
        this.parent = parent;
    }

    Frame(Frame parent, Map<String, Object> initial) {
        this.parent = parent;
        this.vars = initial;
    }

    Object get(String name) {
        for (Frame f = this; f != null; f = f.parent) {
            if (f.vars != null) {
                Object v = f.vars.getOrDefault(name, MISSING);
                if (v != MISSING) {
                    return v;
                }
            }
        }
        return MISSING;
    }

    void set(String name, Object value) {
        if (vars == null) {
            vars = new HashMap<>(8);
        }
        vars.put(name, value);
    }
}
