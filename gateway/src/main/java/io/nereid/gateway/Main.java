package io.nereid.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * Command-line entry point used by {@code bin/nereid}: {@code version}, {@code generate} and {@code serve}.
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
            case "quantize" -> {
                return quantize(args, out, err);
            }
            case "serve" -> {
                return ServeCommand.run(args, System.getenv(), out, err);
            }
            default -> {
                err.println("nereid: unknown command '" + command + "' (try: version, serve, generate, quantize)");
                return 64; // EX_USAGE
            }
        }
    }

    private static int quantize(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 4) {
            err.println("usage: bin/nereid quantize IN.gguf OUT.gguf TYPE   (TYPE: q8_0, q4_0, f16, bf16, f32)");
            return 64;
        }
        try {
            io.nereid.engine.gguf.GgmlType type = io.nereid.engine.gguf.GgmlType.valueOf(args[3].toUpperCase(java.util.Locale.ROOT));
            var r = io.nereid.engine.model.ModelQuantizer.quantize(java.nio.file.Path.of(args[1]), java.nio.file.Path.of(args[2]), type);
            out.printf("%s -> %s: %d matrices converted to %s, %d tensors copied; tensor data %.1f MB%n",
                    args[1], args[2], r.converted(), type, r.copied(), r.bytesOut() / 1e6);
            return 0;
        } catch (IllegalArgumentException | io.nereid.engine.model.ModelLoadException e) {
            err.println("nereid quantize: " + e.getMessage());
            return 1;
        } catch (java.io.IOException e) {
            err.println("nereid quantize: " + e);
            return 1;
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
