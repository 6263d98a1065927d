package io.nereid.engine.tokenizer;

/** Token types as GGUF stores them in {@code tokenizer.ggml.token_type} (llama.cpp's numbering). */
public enum TokenType {
    NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE;

    /** GGUF code 1..6; anything else (0 = undefined) is read as NORMAL, as llama.cpp does. */
    static TokenType fromGguf(int code) {
        return switch (code) {
            case 2 -> UNKNOWN;
            case 3 -> CONTROL;
            case 4 -> USER_DEFINED;
            case 5 -> UNUSED;
            case 6 -> BYTE;
            default -> NORMAL;
        };
    }
}
