package io.nereid.engine.template;

/**
 * The template source is not valid Jinja (as far as HF chat templates use it): an unclosed block,
 * an unknown tag, a malformed expression, an unknown filter or test. Thrown by
 * {@link ChatTemplate#compile(String, String)}. The message reads
 * {@code template 'NAME', line N: REASON}. Immutable.
 */
public final class TemplateSyntaxException extends TemplateException {

    private final String reason;

    TemplateSyntaxException(String templateName, int line, String reason) {
        super(locate(templateName, line) + ": " + reason, templateName, line);
        this.reason = reason;
    }

    /** What is wrong, without the location. */
    public String reason() {
        return reason;
    }
}
