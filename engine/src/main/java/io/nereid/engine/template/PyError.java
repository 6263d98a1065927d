package io.nereid.engine.template;

/**
 * A Python-style runtime error raised while evaluating (e.g. {@code TypeError},
 * {@code UndefinedError}). Internal: the {@link Evaluator} turns it into a
 * {@link TemplateRenderException} that names the template and line. Carries no stack trace:
 * it is a value-level error report, not a bug in Nereid. Immutable.
 */
final class PyError extends RuntimeException {

    private final String kind;

    PyError(String kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    /** The Python exception class name, e.g. {@code TypeError}. */
    String kind() {
        return kind;
    }

    static PyError type(String message) {
        return new PyError("TypeError", message);
    }

    static PyError value(String message) {
        return new PyError("ValueError", message);
    }

    static PyError undefined(String message) {
        return new PyError("UndefinedError", message);
    }

    static PyError runtime(String message) {
        return new PyError("TemplateRuntimeError", message);
    }

    static PyError security(String message) {
        return new PyError("SecurityError", message);
    }

    static PyError zeroDivision(String message) {
        return new PyError("ZeroDivisionError", message);
    }

    static PyError overflow(String message) {
        return new PyError("OverflowError", message);
    }
}
