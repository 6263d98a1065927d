package io.nereid.engine.tokenizer;

/**
 * A tokenizer could not be built: missing or malformed metadata, an unknown tokenizer model or
 * pre-tokenizer. The message names the source file and the reason.
 */
public final class TokenizerException extends RuntimeException {

    public TokenizerException(String message) {
        super(message);
    }

    public TokenizerException(String message, Throwable cause) {
        super(message, cause);
    }
}
