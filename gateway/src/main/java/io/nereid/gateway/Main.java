package io.nereid.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Command-line entry point used by {@code bin/nereid}: {@code version}, {@code generate}, {@code serve},
 * the engine's model-file tools ({@code quantize}, {@code bench-model}, {@code structured-bench}: {@link
 * ToolCommands}) and {@code completion}. Every command line is parsed by picocli.
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
            case "quantize", "bench-model", "structured-bench" -> {
                return ToolCommands.run(args, out, err);
            }
            case "completion" -> {
                List<String[]> bench = new ArrayList<>();
                if (args.length == 3 && args[1].equals("--bench-options")) {
                    try {
                        for (String line : Files.readAllLines(Path.of(args[2]))) {
                            if (!line.isBlank()) {
                                bench.add(line.split("\t", -1));
                            }
                        }
                    } catch (IOException e) {
                        err.println("nereid completion: " + e.getMessage());
                        return 1;
                    }
                } else if (args.length != 1) {
                    err.println("nereid completion: takes no arguments");
                    return 64;
                }
                out.print(completion(bench));
                return 0;
            }
            default -> {
                err.println("nereid: unknown command '" + command + "' (try: version, serve, generate, quantize, bench-model,"
                        + " structured-bench, completion)");
                return 64; // EX_USAGE
            }
        }
    }

    /**
     * A bash completion script for every command (picocli's, from the same option lists the parsers use);
     * {@code bench} lines are the bench's options as its {@code --list-options} prints them (name, tab, value
     * label or nothing), since the bench is its own module.
     */
    static String completion(List<String[]> bench) {
        picocli.CommandLine.Model.CommandSpec root = picocli.CommandLine.Model.CommandSpec.create().name("nereid");
        root.addSubcommand("serve", new picocli.CommandLine(ServeConfig.commandSpec()));
        root.addSubcommand("generate", new picocli.CommandLine(GenerateCommand.commandSpec()));
        root.addSubcommand("quantize", new picocli.CommandLine(ToolCommands.quantizeSpec()));
        root.addSubcommand("bench-model", new picocli.CommandLine(ToolCommands.benchModelSpec()));
        root.addSubcommand("structured-bench", new picocli.CommandLine(ToolCommands.structuredBenchSpec()));
        picocli.CommandLine.Model.CommandSpec benchSpec = picocli.CommandLine.Model.CommandSpec.create().name("bench");
        for (String[] o : bench) {
            boolean value = o.length > 1 && !o[1].isEmpty();
            benchSpec.addOption(picocli.CommandLine.Model.OptionSpec.builder(o[0]).arity(value ? "1" : "0")
                    .type(value ? String.class : boolean.class).paramLabel(value ? o[1] : "").build());
        }
        root.addSubcommand("bench", new picocli.CommandLine(benchSpec));
        for (String other : new String[] {"version", "build", "test", "jmh", "completion", "help"}) {
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
