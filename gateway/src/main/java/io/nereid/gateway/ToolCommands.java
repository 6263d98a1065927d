package io.nereid.gateway;

import io.nereid.engine.tools.BenchModel;
import io.nereid.engine.tools.Quantize;
import io.nereid.engine.tools.StructuredBench;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The command lines of the engine's model-file tools ({@code quantize}, {@code bench-model},
 * {@code structured-bench}), parsed with picocli from one option table each, as {@code serve} and
 * {@code generate} are; the work is the engine's ({@code io.nereid.engine.tools}). Exit statuses:
 * 0, 1 when the work fails, 64 (EX_USAGE) for a bad command line.
 */
final class ToolCommands {

    static final List<CliSpec.Option> QUANTIZE = List.of(
            new CliSpec.Option("--pure", null, "every quantized tensor in TYPE's base type (Q4_K for q4_k_m),"
                    + " output.weight and token_embd.weight included: no mix"));
    static final List<CliSpec.Positional> QUANTIZE_ARGS = List.of(
            new CliSpec.Positional("IN", "1", "the GGUF model to read"),
            new CliSpec.Positional("OUT", "1", "the GGUF file to write"),
            new CliSpec.Positional("TYPE", "1", "one of " + Quantize.typeNames()));

    static final List<CliSpec.Option> BENCH_MODEL = List.of(
            new CliSpec.Option("--model", "FILE", "GGUF file or Hugging Face model directory (required)", List.of("-m")),
            new CliSpec.Option("--threads", "N", "compute threads (default: available processors)", List.of("-t")),
            new CliSpec.Option("--n-prompt", "N", "prompt tokens of the pp test (default 512; 0: no pp test)", List.of("-p")),
            new CliSpec.Option("--n-gen", "N", "tokens of the tg test (default 128; 0: no tg test)", List.of("-n")),
            new CliSpec.Option("--repetitions", "N", "timed repetitions of each test, after one warm-up run (default 5)",
                    List.of("-r")),
            new CliSpec.Option("--n-depth", "N", "tokens already in the context when each test starts, as llama-bench's -d"
                    + " (default 0; their prefill is not timed; rows labelled tg128 @ d2048)", List.of("-d")),
            new CliSpec.Option("--backend", "B", "backend (default cpu)"),
            new CliSpec.Option("--deterministic", null, "batch-invariant kernels, as serve --deterministic (default: the"
                    + " fastest order for each batch shape)"));

    static final List<CliSpec.Option> STRUCTURED_BENCH = List.of(
            new CliSpec.Option("--tokenizer", "PATH", "a tokenizer.json, a directory holding one, or a GGUF file (required)"),
            new CliSpec.Option("--whitespace", "compact|flexible", "JSON without whitespace (default), or with any"),
            new CliSpec.Option("--timeout-ms", "N", "per schema: compile and every instance (default 20000)"),
            new CliSpec.Option("--json", "FILE", "also write the report as JSON"),
            new CliSpec.Option("--limit", "N", "at most N files, an even sample across the sorted files (default: all)"));
    static final List<CliSpec.Positional> STRUCTURED_BENCH_ARGS = List.of(
            new CliSpec.Positional("DIR", "1..*", "directories of MaskBench files (*.json)"));

    private ToolCommands() {
    }

    static CommandSpec quantizeSpec() {
        return CliSpec.of("quantize", List.of("bin/nereid quantize [--pure] IN.gguf OUT.gguf TYPE"), Quantize.DESCRIPTION,
                QUANTIZE, QUANTIZE_ARGS);
    }

    static CommandSpec benchModelSpec() {
        return CliSpec.of("bench-model", List.of("bin/nereid bench-model --model FILE.gguf|HF_DIR [options]"),
                "Prompt processing (ppN: one forward over N random tokens) and generation (tgN: N one-token forwards)"
                        + " speed, the table llama.cpp's llama-bench prints: mean ± stddev tok/s over the repetitions.",
                BENCH_MODEL);
    }

    static CommandSpec structuredBenchSpec() {
        return CliSpec.of("structured-bench", List.of("bin/nereid structured-bench --tokenizer PATH [options] DIR..."),
                "The grammar engine on MaskBench files (JSON Schemas with valid and invalid instances): passing, compile /"
                        + " validation / invalidation errors, timeouts and mask times per split and in total, MaskBench's table.",
                STRUCTURED_BENCH, STRUCTURED_BENCH_ARGS);
    }

    /** Runs {@code args[0]} (one of the three) with the rest of {@code args}. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        String command = args[0];
        CommandSpec spec = switch (command) {
            case "quantize" -> quantizeSpec();
            case "bench-model" -> benchModelSpec();
            case "structured-bench" -> structuredBenchSpec();
            default -> throw new IllegalArgumentException(command);
        };
        List<CliSpec.Option> table = switch (command) {
            case "quantize" -> QUANTIZE;
            case "bench-model" -> BENCH_MODEL;
            default -> STRUCTURED_BENCH;
        };
        String[] words = Arrays.copyOfRange(args, 1, args.length);
        try {
            CliSpec.Parsed p = CliSpec.parse(spec, table, words);
            if (p.help()) {
                out.print(CliSpec.usage(spec));
                return 0;
            }
            return switch (command) {
                case "quantize" -> Quantize.run(Path.of(p.positionals().get(0)), Path.of(p.positionals().get(1)),
                        p.positionals().get(2), p.options().containsKey("--pure"), out, err);
                case "bench-model" -> benchModel(p, out, err);
                default -> structuredBench(p, out, err);
            };
        } catch (IllegalArgumentException e) {
            err.println("nereid " + command + ": " + e.getMessage() + "\n" + CliSpec.usage(spec));
            return 64;
        }
    }

    private static int benchModel(CliSpec.Parsed p, PrintStream out, PrintStream err) {
        String model = p.options().get("--model");
        if (model == null) {
            throw new IllegalArgumentException("--model is required");
        }
        var options = new BenchModel.Options(Path.of(model), p.integer("--threads", Runtime.getRuntime().availableProcessors(), 1),
                p.integer("--n-prompt", 512, 0), p.integer("--n-gen", 128, 0), p.integer("--repetitions", 5, 1),
                p.integer("--n-depth", 0, 0), p.get("--backend", "cpu"), p.options().containsKey("--deterministic"));
        return BenchModel.run(options, out, err);
    }

    private static int structuredBench(CliSpec.Parsed p, PrintStream out, PrintStream err) {
        String tokenizer = p.options().get("--tokenizer");
        if (tokenizer == null) {
            throw new IllegalArgumentException("--tokenizer and at least one DIR are required");
        }
        String ws = p.get("--whitespace", "compact");
        if (!ws.equals("compact") && !ws.equals("flexible")) {
            throw new IllegalArgumentException("--whitespace must be compact or flexible, got " + ws);
        }
        String json = p.options().get("--json");
        var options = new StructuredBench.Options(Path.of(tokenizer), ws.equals("flexible"),
                p.integer("--timeout-ms", 20_000, 1), json == null ? null : Path.of(json),
                p.integer("--limit", Integer.MAX_VALUE, 1), p.positionals().stream().map(Path::of).toList());
        return StructuredBench.run(options, out, err);
    }
}
