package io.nereid.gateway;

import java.nio.file.Files;
import java.nio.file.Path;

/** The fixture model the gateway tests serve; tests run in gateway/, the fixtures live beside the repository. */
final class TestModels {

    /** stories260K's greedy continuation of "Once upon a time" for 12 tokens (llama.cpp's). */
    static final String ONCE_UPON_A_TIME_12 = ", there was a little girl named Lily. She";

    private TestModels() {
    }

    /** {@code ../shared/fixtures/models/stories260K.gguf}; fails loudly when the fixtures are missing. */
    static Path stories260K() {
        Path p = Path.of("").toAbsolutePath().getParent().resolveSibling("shared").resolve("fixtures/models/stories260K.gguf");
        if (!Files.exists(p)) {
            throw new IllegalStateException("fixture missing: " + p);
        }
        return p;
    }
}
