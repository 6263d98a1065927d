package io.nereid.engine.tools;

import io.nereid.engine.model.LlamaFileType;
import io.nereid.engine.model.ModelLoadException;
import io.nereid.engine.model.ModelQuantizer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Collectors;

/** {@code bin/nereid quantize}: a GGUF model's weights rewritten as llama-quantize does ({@link ModelQuantizer}). */
public final class Quantize {

    /** What the command does and the types it takes, for its help. */
    public static final String DESCRIPTION = """
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
            """;

    private Quantize() {
    }

    /** The valid TYPE names, comma-separated. */
    public static String typeNames() {
        return LlamaFileType.commandNames();
    }

    /**
     * Writes {@code in} quantized as {@code type} (a TYPE name, any case) to {@code out}, {@code pure}:
     * every quantized tensor in the type's base type. 0 and a summary on {@code stdout}; 64 for an
     * unknown type, 1 for a model it cannot read or write, the reason on {@code err}.
     */
    public static int run(Path in, Path out, String type, boolean pure, PrintStream stdout, PrintStream err) {
        Optional<LlamaFileType> t = LlamaFileType.fromCommandName(type);
        if (t.isEmpty()) {
            err.println("nereid quantize: unknown type '" + type + "'; valid types: " + typeNames());
            return 64;
        }
        try {
            var r = ModelQuantizer.quantize(in, out, t.get(), pure);
            String types = r.types().entrySet().stream().map(e -> e.getKey() + " x" + e.getValue())
                    .collect(Collectors.joining(", "));
            stdout.printf("%s -> %s: %s%s, %d tensors converted, %d copied (%s); tensor data %.1f MB%n", in, out,
                    t.get().commandName(), pure ? " --pure" : "", r.converted(), r.copied(), types, r.bytesOut() / 1e6);
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
