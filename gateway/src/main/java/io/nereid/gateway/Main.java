package io.nereid.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * Command-line entry point used by {@code bin/nereid}: {@code version}, {@code generate} and {@code serve}
 * ({@code quantize} is the engine's: {@code io.nereid.engine.tools.Main}).
 */
public final class Main {

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
                return ServeCommand.run(args, System.getenv(), out, err);
            }
            case "completion" -> {
                out.print(completion());
                return 0;
            }
            default -> {
                err.println("nereid: unknown command '" + command + "' (try: version, serve, generate, completion)");
                return 64; // EX_USAGE
            }
        }
    }

    /** A bash completion script for {@code nereid serve}'s options (picocli's, from the same option list). */
    static String completion() {
        picocli.CommandLine.Model.CommandSpec root = picocli.CommandLine.Model.CommandSpec.create().name("nereid");
        root.addSubcommand("serve", new picocli.CommandLine(ServeConfig.commandSpec()));
        for (String other : new String[] {"version", "generate", "bench", "quantize", "bench-model", "structured-bench",
                "build", "test", "jmh", "completion", "help"}) {
            root.addSubcommand(other, new picocli.CommandLine(picocli.CommandLine.Model.CommandSpec.create().name(other)));
        }
        return picocli.AutoComplete.bash("nereid", new picocli.CommandLine(root));
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
