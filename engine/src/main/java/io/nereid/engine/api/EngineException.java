package io.nereid.engine.api;

/** Base of the engine's typed errors; the gateway maps each subtype to an HTTP status. */
public class EngineException extends RuntimeException {

    public EngineException(String message) {
        super(message);
    }

    public EngineException(String message, Throwable cause) {
        super(message, cause);
    }
}
