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
 * @param errorKind the Python exception a use raises: {@code UndefinedError}, or
 *              {@code SecurityError} for an unsafe attribute
 */
record Undefined(String hint, String owner, Object name, String errorKind) {

    static Undefined variable(String name) {
        return new Undefined(null, null, name, "UndefinedError");
    }

    static Undefined member(Object obj, Object name) {
        return new Undefined(null, PyValues.objectTypeRepr(obj), name, "UndefinedError");
    }

    static Undefined withHint(String hint) {
        return new Undefined(hint, null, null, "UndefinedError");
    }

    /** The sandbox's answer to a mutating method on caller data: undefined, and a SecurityError when used. */
    static Undefined unsafe(String hint) {
        return new Undefined(hint, null, null, "SecurityError");
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
        return new PyError(errorKind, message());
    }
}
