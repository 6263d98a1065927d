package io.nereid.engine.model;

/**
 * A model file cannot be served: unknown architecture, a missing or mis-shaped tensor, an
 * unsupported tensor type, inconsistent hyper-parameters. The message names the file, the
 * tensor or key, and the reason.
 */
public final class ModelLoadException extends RuntimeException {

    public ModelLoadException(String message) {
        super(message);
    }

    public ModelLoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
