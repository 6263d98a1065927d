package io.nereid.engine.template;

/**
 * Rendering failed at runtime the way Python Jinja2 would fail: a Python-style type error
 * ({@code TypeError: argument of type 'NoneType' is not iterable}), use of an undefined value
 * ({@code UndefinedError: 'dict object' has no attribute 'x'}), a division by zero, an unsafe
 * operation. The message reads {@code template 'NAME', line N: KIND: DETAIL}. Immutable.
 */
public final class TemplateRenderException extends TemplateException {

    private final String reason;

    TemplateRenderException(String templateName, int line, String reason) {
        super(locate(templateName, line) + ": " + reason, templateName, line);
        this.reason = reason;
    }

    /** The Python-style error, e.g. {@code TypeError: ...}, without the location. */
    public String reason() {
        return reason;
    }
}
