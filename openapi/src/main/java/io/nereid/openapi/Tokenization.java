package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonProperty;

/** {@code POST /tokenize} and {@code POST /detokenize} responses, shaped as vLLM's. */
public final class Tokenization {

    private Tokenization() {
    }

    /** The prompt's token ids; {@code count} is their number, {@code max_model_len} the context length. */
    public record Tokens(@JsonProperty("count") int count, @JsonProperty("max_model_len") int maxModelLen,
            @JsonProperty("tokens") int[] tokens) {

        public Tokens(int[] tokens, int maxModelLen) {
            this(tokens.length, maxModelLen, tokens);
        }
    }

    /** The text of the given token ids. */
    public record Prompt(@JsonProperty("prompt") String prompt) {
    }
}
