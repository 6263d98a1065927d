package io.nereid.engine.template;

/**
 * The template called {@code raise_exception(msg)}: it rejects the conversation it was given (for
 * example gemma's {@code System role not supported}). {@link #getMessage()} is exactly the message
 * the template passed (so is {@link #reason()}), so it can be shown to the client unchanged;
 * {@link #templateName()} and {@link #line()} say where it was raised. Immutable.
 */
public final class TemplateRaisedException extends TemplateException {

    TemplateRaisedException(String templateName, int line, String message) {
        super(message, templateName, line, message);
    }
}
