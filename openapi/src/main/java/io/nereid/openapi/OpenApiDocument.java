package io.nereid.openapi;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The OpenAPI 3.1 document of every route ({@code openapi.json} next to this class), served as is at {@code /openapi.json}. */
public final class OpenApiDocument {

    private OpenApiDocument() {
    }

    /** The document's bytes (UTF-8 JSON). */
    public static byte[] bytes() {
        try (InputStream in = OpenApiDocument.class.getResourceAsStream("openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is missing from the classpath");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read openapi.json", e);
        }
    }
}
