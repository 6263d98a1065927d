package io.nereid.engine.structured;

/**
 * A constraint that cannot be compiled or honoured: an unsupported JSON Schema keyword, a regex or
 * grammar that does not parse, one that is too large. The message names the problem for the
 * client (the gateway answers 400 with it).
 */
public class GrammarException extends RuntimeException {

    public GrammarException(String message) {
        super(message);
    }
}
