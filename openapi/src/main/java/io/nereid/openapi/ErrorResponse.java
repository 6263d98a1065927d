package io.nereid.openapi;

import com.fasterxml.jackson.annotation.JsonProperty;

/** OpenAI's error envelope: {@code {"error":{"message","type","param","code"}}}; param and code may be null. */
public record ErrorResponse(@JsonProperty("error") Detail error) {

    public record Detail(@JsonProperty("message") String message, @JsonProperty("type") String type,
            @JsonProperty("param") String param, @JsonProperty("code") String code) {
    }

    public static ErrorResponse of(String message, String type, String param, String code) {
        return new ErrorResponse(new Detail(message, type, param, code));
    }
}
