package io.nereid.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * Command-line entry point used by {@code bin/nereid}: {@code version}, {@code generate} and {@code serve}.
 *
 * <p>The HTTP server has not landed yet (issue #6): {@code serve} says so and exits with status
 * 2 instead of pretending to serve.
 */
public final class Main {

    /** Exit status of a command that exists in the CLI but is not implemented yet. */
    static final int NOT_IMPLEMENTED = 2;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        String command = args.length == 0 ? "version" : args[0];
        switch (command) {
            case "version" -> {
                out.println(banner());
                return 0;
            }
            case "generate" -> {
                return GenerateCommand.run(args, out, err);
            }
            case "serve" -> {
                err.println(banner());
                err.println("nereid serve: no HTTP server exists in this build yet; the OpenAI-compatible gateway"
                        + " is still to come (see README.md, status table). This build contains the paged KV-cache"
                        + " manager (kvcache/) only.");
                return NOT_IMPLEMENTED;
            }
            default -> {
                err.println("nereid: unknown command '" + command + "' (try: version, serve, generate)");
                return 64; // EX_USAGE
            }
        }
    }

    static String banner() {
        return "Nereid " + version() + " (Java " + Runtime.version() + ", " + System.getProperty("os.arch") + ")";
    }

    static String version() {
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
