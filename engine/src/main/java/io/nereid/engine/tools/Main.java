package io.nereid.engine.tools;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.ModelLoadException;
import io.nereid.engine.model.ModelQuantizer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The engine's own commands, which work on model files rather than serve them; {@code bin/nereid}
 * runs them with the server's class path: {@code quantize IN OUT TYPE} and {@code bench-model} (llama-bench's
 * table, {@link BenchModel}).
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        String command = args.length == 0 ? "" : args[0];
        return switch (command) {
            case "quantize" -> quantize(args, out, err);
            case "bench-model" -> BenchModel.run(args, out, err);
            default -> {
                err.println("nereid: unknown engine command '" + command + "' (try: quantize, bench-model)");
                yield 64;   // EX_USAGE
            }
        };
    }

    private static int quantize(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 4) {
            err.println("usage: bin/nereid quantize IN.gguf OUT.gguf TYPE   (TYPE: q8_0, q4_0, f16, bf16, f32)");
            return 64;
        }
        try {
            GgmlType type = GgmlType.valueOf(args[3].toUpperCase(Locale.ROOT));
            var r = ModelQuantizer.quantize(Path.of(args[1]), Path.of(args[2]), type);
            out.printf("%s -> %s: %d matrices converted to %s, %d tensors copied; tensor data %.1f MB%n",
                    args[1], args[2], r.converted(), type, r.copied(), r.bytesOut() / 1e6);
            return 0;
        } catch (IllegalArgumentException | ModelLoadException e) {
            err.println("nereid quantize: " + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("nereid quantize: " + e);
            return 1;
        }
    }
}
