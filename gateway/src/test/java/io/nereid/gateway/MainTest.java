package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MainTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void versionPrintsTheProjectVersionFromTheBuild() {
        assertEquals(0, run("version"));
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("Nereid 0."), text);
        assertTrue(!text.contains("${project.version}") && !text.contains("unknown"), text);
    }

    @Test
    void serveHelpListsEveryOptionAndABadOptionIsAUsageError() {
        assertEquals(0, run("serve", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        for (String flag : new String[] {"--model", "--served-model-name", "--host", "--port", "--max-num-seqs",
                "--max-num-batched-tokens", "--max-waiting", "--block-size", "--kv-cache-memory", "--chat-template",
                "--threads", "NEREID_PORT"}) {
            assertTrue(help.contains(flag), flag + " missing from:\n" + help);
        }
        assertEquals(64, run("serve", "--no-such-flag", "1"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown option '--no-such-flag'"));
    }

    @Test
    void unknownCommandIsAUsageError() {
        assertEquals(64, run("frobnicate"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown command 'frobnicate'"));
    }
}
