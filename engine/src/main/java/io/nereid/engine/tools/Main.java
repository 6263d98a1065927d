package io.nereid.engine.tools;

import io.nereid.engine.model.LlamaFileType;
import io.nereid.engine.model.ModelLoadException;
import io.nereid.engine.model.ModelQuantizer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The engine's own commands, which work on model files rather than serve them; {@code bin/nereid}
 * runs them with the server's class path: {@code quantize [--pure] IN OUT TYPE} ({@link ModelQuantizer}) and
 * {@code bench-model} (llama-bench's table, {@link BenchModel}) and {@code structured-bench} (MaskBench's
 * table for the grammar engine, {@link StructuredBench}).
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
            case "structured-bench" -> StructuredBench.run(args, out, err);
            default -> {
                err.println("nereid: unknown engine command '" + command + "' (try: quantize, bench-model, structured-bench)");
                yield 64;   // EX_USAGE
            }
        };
    }

    private static final String QUANTIZE_USAGE = "usage: bin/nereid quantize [--pure] IN.gguf OUT.gguf TYPE   (TYPE: "
            + LlamaFileType.commandNames() + "; --help for more)";

    private static final String QUANTIZE_HELP = """
            usage: bin/nereid quantize [--pure] IN.gguf OUT.gguf TYPE

            Rewrites a GGUF model's weights as TYPE the way llama.cpp b4748's llama-quantize does without
            an importance matrix: the same tensors, byte for byte. Norms and other 1-D tensors are copied.

            TYPE (general.file_type)
              q8_0    (7)   Q8_0
              q4_0    (2)   Q4_0; output.weight Q6_K
              q4_k_m  (15)  Q4_K; output.weight Q6_K, and attn_v / ffn_down Q6_K in the first and last
                            eighth of the layers and every third layer between
              q4_k_s  (14)  Q4_K; output.weight Q6_K, the first 4 attn_v and first eighth of ffn_down Q5_K
              q5_k_m  (17)  Q5_K; Q6_K where q4_k_m has it
              q5_k_s  (16)  Q5_K; output.weight Q6_K
              q6_k    (18)  Q6_K
              f16 (1), bf16 (32), f32 (0)
            With no output.weight, token_embd.weight takes its type. A K-quant tensor whose rows are not
            a multiple of 256 falls back as in llama.cpp (to Q8_0 or F16; Q5_0 / Q5_1 are not offered,
            so such a tensor is an error).

            options
              --pure  every quantized tensor in TYPE's base type (Q4_K for q4_k_m), output.weight and
                      token_embd.weight included: no mix
            """;

    private static int quantize(String[] args, PrintStream out, PrintStream err) {
        boolean pure = false;
        List<String> files = new ArrayList<>();
        for (String arg : Arrays.asList(args).subList(1, args.length)) {
            if (arg.equals("--pure")) {
                pure = true;
            } else if (arg.equals("--help") || arg.equals("-h")) {
                out.print(QUANTIZE_HELP);
                return 0;
            } else if (arg.startsWith("-")) {
                err.println("nereid quantize: unknown option '" + arg + "'");
                err.println(QUANTIZE_USAGE);
                return 64;
            } else {
                files.add(arg);
            }
        }
        if (files.size() != 3) {
            err.println(QUANTIZE_USAGE);
            return 64;
        }
        Optional<LlamaFileType> type = LlamaFileType.fromCommandName(files.get(2));
        if (type.isEmpty()) {
            err.println("nereid quantize: unknown type '" + files.get(2) + "'; valid types: "
                    + LlamaFileType.commandNames());
            return 64;
        }
        try {
            var r = ModelQuantizer.quantize(Path.of(files.get(0)), Path.of(files.get(1)), type.get(), pure);
            String types = r.types().entrySet().stream().map(e -> e.getKey() + " x" + e.getValue())
                    .collect(Collectors.joining(", "));
            out.printf("%s -> %s: %s%s, %d tensors converted, %d copied (%s); tensor data %.1f MB%n", files.get(0),
                    files.get(1), type.get().commandName(), pure ? " --pure" : "", r.converted(), r.copied(), types,
                    r.bytesOut() / 1e6);
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
