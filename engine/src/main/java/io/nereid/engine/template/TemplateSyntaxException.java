package io.nereid.engine.template;

/**
 * The template source is not valid Jinja (as far as HF chat templates use it): an unclosed block,
 * an unknown tag, a malformed expression, an unknown filter or test. Thrown by
 * {@link ChatTemplate#compile(String, String)}. The message reads
 * {@code template 'NAME', line N: REASON}. Immutable.
 */
public final class TemplateSyntaxException extends TemplateException {

    TemplateSyntaxException(String templateName, int line, String reason) {
        super(templateName, line, reason);
    }
}
