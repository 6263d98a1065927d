package io.nereid.engine.template;

/**
 * Jinja2's default {@code Undefined}: the value of a missing variable, attribute or item. It prints
 * as the empty string, is falsy, has length 0, iterates as empty and equals only another
 * undefined; any other use (attribute, item, call, arithmetic, ordering) raises an
 * {@code UndefinedError} with the message Jinja2 would give. Immutable.
 *
 * @param hint  an explicit message, or null to derive one from {@code owner} and {@code name}
 * @param owner the Python type description of the object that lacked {@code name}
 *              (e.g. {@code dict object}), or null for a missing variable
 * @param name  the missing variable, attribute or key
 */
record Undefined(String hint, String owner, Object name) {

    static Undefined variable(String name) {
        return new Undefined(null, null, name);
    }

    static Undefined member(Object obj, Object name) {
        return new Undefined(null, PyValues.objectTypeRepr(obj), name);
    }

    static Undefined withHint(String hint) {
        return new Undefined(hint, null, null);
    }

    String message() {
        if (hint != null) {
            return hint;
        }
        if (owner == null) {
            return "'" + name + "' is undefined";
        }
        if (!(name instanceof String)) {
            return owner + " has no element " + PyValues.repr(name);
        }
        return "'" + owner + "' has no attribute '" + name + "'";
    }

    PyError error() {
        return PyError.undefined(message());
    }
}
