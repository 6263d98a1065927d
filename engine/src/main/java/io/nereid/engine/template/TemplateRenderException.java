package io.nereid.engine.template;

/**
 * Rendering failed at runtime the way Python Jinja2 would fail: a Python-style type error
 * ({@code TypeError: argument of type 'NoneType' is not iterable}), use of an undefined value
 * ({@code UndefinedError: 'dict object' has no attribute 'x'}), a division by zero, an unsafe
 * operation. The message reads {@code template 'NAME', line N: KIND: DETAIL}. Immutable.
 */
public final class TemplateRenderException extends TemplateException {

    TemplateRenderException(String templateName, int line, String reason) {
        super(templateName, line, reason);
    }
}
