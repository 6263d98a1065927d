package io.nereid.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import io.nereid.engine.json.Json;

/**
 * Locates {@code ../shared/fixtures} (next to the repository, as on dev machines and in CI),
 * or the directory named by the system property {@code nereid.fixtures}. Missing fixtures fail
 * the test loudly: they are the reference, never optional.
 */
public final class Fixtures {

    private Fixtures() {
    }

    public static Path root() {
        String configured = System.getProperty("nereid.fixtures");
        if (configured != null) {
            return requireDir(Path.of(configured));
        }
        // Tests run with the module directory (e.g. engine/) as the working directory.
        Path dir = Path.of("").toAbsolutePath();
        for (int up = 0; up < 4 && dir != null; up++, dir = dir.getParent()) {
            Path candidate = dir.resolveSibling("shared").resolve("fixtures");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("test fixtures not found: expected ../shared/fixtures beside the"
                + " repository (or -Dnereid.fixtures=DIR), searched upward from " + Path.of("").toAbsolutePath());
    }

    public static Path path(String relative) {
        Path p = root().resolve(relative);
        if (!Files.exists(p)) {
            throw new IllegalStateException("fixture missing: " + p);
        }
        return p;
    }

    public static String read(String relative) {
        try {
            return Files.readString(path(relative), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Each line of a {@code .jsonl} fixture parsed as a JSON object. */
    public static List<Map<String, Object>> jsonLines(String relative) {
        return read(relative).lines().filter(l -> !l.isBlank()).map(Json::parseObject).toList();
    }

    private static Path requireDir(Path p) {
        if (!Files.isDirectory(p)) {
            throw new IllegalStateException("-Dnereid.fixtures=" + p + " is not a directory");
        }
        return p;
    }
}
