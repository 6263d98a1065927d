package io.nereid.engine.template;

/**
 * Base of every error a chat template can raise, so that a front end can map all of them to one
 * status (HTTP 400: the request's messages or the model's template are at fault, not the server).
 *
 * <p>Three kinds, all unchecked: {@link TemplateSyntaxException} (the template source does not
 * parse), {@link TemplateRenderException} (a runtime error while rendering: a type error, use of
 * an undefined value) and {@link TemplateRaisedException} (the template itself called
 * {@code raise_exception(msg)}, typically to reject a conversation shape). Immutable.
 */
public abstract sealed class TemplateException extends RuntimeException
        permits TemplateSyntaxException, TemplateRenderException, TemplateRaisedException {

    private final String templateName;
    private final int line;
    private final String reason;

    /** A message of the form {@code template 'NAME', line N: REASON}. */
    TemplateException(String templateName, int line, String reason) {
        this(locate(templateName, line) + ": " + reason, templateName, line, reason);
    }

    TemplateException(String message, String templateName, int line, String reason) {
        super(message, null, true, false);
        this.templateName = templateName;
        this.line = line;
        this.reason = reason;
    }

    /** The name given to {@link ChatTemplate#compile(String, String)} (or the built-in's name). */
    public String templateName() {
        return templateName;
    }

    /** 1-based line of the template source where the error was detected; 0 when unknown. */
    public int line() {
        return line;
    }

    /** What went wrong, without the location. */
    public String reason() {
        return reason;
    }

    private static String locate(String templateName, int line) {
        return line > 0 ? "template '" + templateName + "', line " + line : "template '" + templateName + "'";
    }
}
