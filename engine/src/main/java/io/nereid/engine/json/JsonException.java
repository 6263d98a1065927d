package io.nereid.engine.json;

/** Malformed JSON; the message names the offset and the reason. */
public final class JsonException extends RuntimeException {

    public JsonException(String message) {
        super(message);
    }
}
