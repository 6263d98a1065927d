package io.nereid.bench;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTML reports render in headless Chromium without console errors, and each gets a screenshot
 * (kept in {@code target/report-screenshots/}). Chromium logs every console message of the page
 * to stderr as {@code INFO:CONSOLE} (uncaught exceptions as {@code "Uncaught ..."}); a page that
 * throws on purpose checks that this detection works on the installed Chromium. Skipped only when
 * Chromium is not installed ({@code .ci/run} installs it).
 */
class HtmlReportChromiumTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path SHOTS = Path.of("target", "report-screenshots");

    @BeforeAll
    static void chromiumInstalled() {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM), "no " + CHROMIUM + " (apt-get install -y chromium)");
    }

    /** What Chromium printed to stderr, from a headless screenshot of {@code page} into {@code png}. */
    private static String screenshot(Path page, Path png, Path work) throws Exception {
        Files.createDirectories(png.toAbsolutePath().getParent());
        Path log = work.resolve(png.getFileName() + ".stderr");
        Process p = new ProcessBuilder(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=" + work.resolve("profile-" + png.getFileName()), "--enable-logging=stderr", "--v=0",
                "--screenshot=" + png.toAbsolutePath(), "--window-size=1200,2000", page.toUri().toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(log.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("chromium did not finish in 60 s: " + page);
        }
        String stderr = Files.readString(log);
        assertEquals(0, p.exitValue(), stderr);
        return stderr;
    }

    /** The page's console messages and uncaught errors in Chromium's log. */
    private static List<String> consoleErrors(String stderr) {
        return stderr.lines().filter(l -> l.contains(":CONSOLE") || l.contains("Uncaught")).toList();
    }

    /** A PNG of the window's size with more than a blank page's bytes. */
    private static void assertScreenshot(Path png) throws IOException {
        assertTrue(Files.size(png) > 20_000, png + ": " + Files.size(png) + " bytes");
        try (InputStream in = Files.newInputStream(png); DataInputStream d = new DataInputStream(in)) {
            byte[] magic = d.readNBytes(8);
            assertEquals(0x89, magic[0] & 0xff, "PNG signature");
            assertEquals("PNG", new String(magic, 1, 3, java.nio.charset.StandardCharsets.US_ASCII));
            d.readInt(); // IHDR length
            d.readInt(); // "IHDR"
            assertEquals(1200, d.readInt(), "width");
            assertEquals(2000, d.readInt(), "height");
        }
    }

    @Test
    void runAndSweepReportsRenderWithoutConsoleErrors(@TempDir Path dir) throws Exception {
        try (FakeSseServer server = new FakeSseServer(1)) {
            EndToEndTest.run("--url", server.url(), "--concurrency", "1,3", "--num-requests", "12",
                    "--output-tokens-mean", "6", "--ttft-slo", "1000", "--output-dir", dir.resolve("out").toString(),
                    "--no-progress");
        }
        for (Path page : List.of(dir.resolve("out/concurrency3/report.html"), dir.resolve("out/sweep.html"))) {
            Path png = SHOTS.resolve(page.getParent().getFileName() + "-" + page.getFileName() + ".png");
            Files.deleteIfExists(png);
            String stderr = screenshot(page, png, dir);
            assertEquals(List.of(), consoleErrors(stderr), page.toString());
            assertScreenshot(png);
        }
    }

    @Test
    void aPageThatThrowsIsCaught(@TempDir Path dir) throws Exception {
        Path page = dir.resolve("throws.html");
        Files.writeString(page, "<!DOCTYPE html><html><body><p>x</p>"
                + "<script>throw new Error('deliberate');</script></body></html>");
        List<String> errors = consoleErrors(screenshot(page, dir.resolve("throws.png"), dir));
        assertTrue(errors.stream().anyMatch(l -> l.contains("Uncaught Error: deliberate")), errors::toString);
    }
}
