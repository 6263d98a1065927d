package io.nereid.engine.tools;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.model.TensorSource;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * {@code bin/nereid bench-model}: the table llama.cpp's {@code llama-bench} prints, for any GGUF
 * file or Hugging Face directory, so the two can be read side by side on the same machine.
 *
 * <pre>
 * | model                      |       size |     params | backend  | threads |  test |           t/s |
 * | -------------------------- | ---------: | ---------: | -------- | ------: | ----: | ------------: |
 * | llama 1.10B Q4_K (out Q6_K) | 636.2 MiB |     1.10 B | CPU Java |       2 | pp512 |  61.22 ± 0.31 |
 * | llama 1.10B Q4_K (out Q6_K) | 636.2 MiB |     1.10 B | CPU Java |       2 | tg128 |   5.91 ± 0.02 |
 * </pre>
 *
 * As llama-bench measures them: {@code ppN} is one forward pass over N random tokens from an empty
 * context (one step, logits of the last position); {@code tgN} is N forward passes of one random
 * token each, positions 0 to N - 1, from an empty context; with a depth D ({@code -d}, llama-bench's
 * {@code --n-depth}) both start after D random tokens already in the context (their prefill not
 * timed, the rows labelled {@code tg128 @ d2048}); each test runs once untimed (warm-up),
 * then {@code -r} timed repetitions, reported as mean ± sample standard deviation of tokens per
 * second. The KV cache is F16 (llama.cpp's default). Runs on the backend directly, without the
 * engine's scheduler, as llama-bench runs libllama without its server.
 */
public final class BenchModel {

    /**
     * What to measure: {@code model} (a GGUF file or HF directory) on {@code threads} kernel threads, the
     * {@code pp} test over {@code promptTokens} (0: none), the {@code tg} test over {@code genTokens}
     * (0: none), each {@code repetitions} times after a warm-up and after {@code depth} tokens of context,
     * on {@code backend}, with batch-invariant kernels or not ({@code deterministic}).
     */
    public record Options(Path model, int threads, int promptTokens, int genTokens, int repetitions, int depth,
            String backend, boolean deterministic) {
        public Options {
            if (threads < 1 || repetitions < 1 || promptTokens < 0 || genTokens < 0 || depth < 0) {
                throw new IllegalArgumentException("threads and repetitions must be > 0, token counts >= 0");
            }
        }
    }

    private static final int BLOCK = 16;

    private BenchModel() {
    }

    /** Prints the table to {@code out}; 0, or 1 with the reason on {@code err} when the model does not load. */
    public static int run(Options o, PrintStream out, PrintStream err) {
        try {
            bench(o, out);
            return 0;
        } catch (RuntimeException e) {   // a model that does not load names the file and the reason
            err.println("nereid bench-model: " + e.getMessage());
            return 1;
        }
    }

    private static void bench(Options o, PrintStream out) {
        Path model = o.model();
        int threads = o.threads(), pp = o.promptTokens(), tg = o.genTokens(), reps = o.repetitions(), depth = o.depth();
        String backendName = o.backend();
        try (ModelSource source = ModelSource.open(model);
                Backend backend = BackendProvider.named(backendName).open(new BackendConfig(source, KvPrecision.F16, threads,
                        o.deterministic()))) {
            ModelConfig c = source.config();
            int context = depth + Math.max(pp, tg) + 1;
            int blocks = (context + BLOCK - 1) / BLOCK + 2;
            backend.allocate(blocks, BLOCK, context);
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(blocks, BLOCK, 0, 1));
            boolean tied = source.tensors().find("output.weight").isEmpty();
            double p = parameters(c, tied);
            String name = name(c, source.tensors(), p);
            String size = String.format(Locale.ROOT, "%.2f MiB", bytes(model) / (1024.0 * 1024.0));
            String params = String.format(Locale.ROOT, "%.2f %s", p >= 1e9 ? p / 1e9 : p / 1e6, p >= 1e9 ? "B" : "M");
            String backendLabel = (backendName.equals("cpu") ? "CPU Java" : backendName) + (o.deterministic() ? " det" : "");
            out.printf("| %-32s | %12s | %10s | %-8s | %7s | %8s | %20s |%n", "model", "size", "params", "backend", "threads",
                    "test", "t/s");
            out.printf("| %s | %s: | %s: | %s | %s: | %s: | %s: |%n", "-".repeat(32), "-".repeat(11), "-".repeat(9),
                    "-".repeat(8), "-".repeat(6), "-".repeat(7), "-".repeat(19));
            SplittableRandom random = new SplittableRandom(42);
            int[] prefix = tokens(random, depth, c.vocabSize());
            String at = depth > 0 ? " @ d" + depth : "";
            if (pp > 0) {
                double[] tps = measure(reps, prefix, backend, cache,
                        t -> prompt(backend, t, depth, tokens(random, pp, c.vocabSize())), pp);
                out.printf("| %-32s | %12s | %10s | %-8s | %7d | %8s | %20s |%n", name, size, params, backendLabel, threads,
                        "pp" + pp + at, meanStd(tps));
            }
            if (tg > 0) {
                double[] tps = measure(reps, prefix, backend, cache,
                        t -> generate(backend, t, depth, tokens(random, tg, c.vocabSize())), tg);
                out.printf("| %-32s | %12s | %10s | %-8s | %7d | %8s | %20s |%n", name, size, params, backendLabel, threads,
                        "tg" + tg + at, meanStd(tps));
            }
        }
    }

    /**
     * Tokens per second of each of {@code reps} timed runs of {@code test}, after one untimed run; each run on a
     * fresh sequence whose context holds {@code prefix} first (prefilled in one untimed pass).
     */
    private static double[] measure(int reps, int[] prefix, Backend backend, KvCacheManager cache,
            Consumer<BlockTable> test, int tokens) {
        double[] tps = new double[reps];
        for (int r = -1; r < reps; r++) {
            BlockTable t = cache.newTable(0);
            try {
                if (prefix.length > 0) {
                    t.append(prefix);
                    backend.forward(new Step(List.of(new Slice(prefix, 0, t.blockIds(), 0))));
                }
                long t0 = System.nanoTime();
                test.accept(t);
                if (r >= 0) {
                    tps[r] = tokens / ((System.nanoTime() - t0) / 1e9);
                }
            } finally {
                t.free();
            }
        }
        return tps;
    }

    /** One forward pass over the whole prompt, at positions from {@code depth}. */
    private static void prompt(Backend backend, BlockTable t, int depth, int[] tokens) {
        t.append(tokens);
        backend.forward(new Step(List.of(new Slice(tokens, depth, t.blockIds(), 1))));
    }

    /** One forward pass per token, each at the next position from {@code depth}. */
    private static void generate(Backend backend, BlockTable t, int depth, int[] tokens) {
        for (int i = 0; i < tokens.length; i++) {
            t.append(tokens[i]);
            backend.forward(new Step(List.of(new Slice(new int[] {tokens[i]}, depth + i, t.blockIds(), 1))));
        }
    }

    private static int[] tokens(SplittableRandom random, int n, int vocab) {
        return random.ints(n, 0, vocab).toArray();
    }

    static String meanStd(double[] v) {
        double mean = 0;
        for (double x : v) {
            mean += x;
        }
        mean /= v.length;
        double ss = 0;
        for (double x : v) {
            ss += (x - mean) * (x - mean);
        }
        double std = v.length > 1 ? Math.sqrt(ss / (v.length - 1)) : 0;
        return String.format(Locale.ROOT, "%.2f ± %.2f", mean, std);
    }

    /** "llama 1.10B Q4_K (out Q6_K)": architecture, parameters, the type of the FFN and output matrices. */
    private static String name(ModelConfig c, TensorSource tensors, double p) {
        String body = tensors.find("blk.0.ffn_down.weight").map(t -> t.type().name()).orElse("?");
        String ffnUp = tensors.find("blk.0.ffn_up.weight").map(t -> t.type().name()).orElse(body);
        String output = tensors.find("output.weight").or(() -> tensors.find("token_embd.weight"))
                .map(t -> t.type().name()).orElse("?");
        String type = ffnUp.equals(body) ? body : ffnUp + "/" + body;
        String size = p >= 1e9 ? String.format(Locale.ROOT, "%.2fB", p / 1e9)
                : String.format(Locale.ROOT, p >= 1e7 ? "%.0fM" : "%.2fM", p / 1e6);
        return c.architecture().name().toLowerCase(Locale.ROOT) + " " + size + " " + type
                + (output.equals(ffnUp) ? "" : " (out " + output + ")");
    }

    /** Weights of the architecture's matrices, embeddings and norms (a tied output counted once). */
    static double parameters(ModelConfig c, boolean tiedEmbeddings) {
        long dim = c.dim();
        long layer = dim * c.qDim() + 2 * dim * c.kvDim() + (long) c.qDim() * dim + 3 * dim * c.ffnDim() + 2 * dim;
        if (c.architecture().qkvBias()) {
            layer += c.qDim() + 2L * c.kvDim();
        }
        if (c.architecture().qkNorm()) {
            layer += 2L * c.headDim();
        }
        long embeddings = (long) c.vocabSize() * dim;
        return embeddings * (tiedEmbeddings ? 1 : 2) + c.layers() * layer + dim;
    }

    /** The file's size, or a directory's safetensors files together. */
    private static long bytes(Path model) {
        try {
            if (!Files.isDirectory(model)) {
                return Files.size(model);
            }
            try (Stream<Path> files = Files.list(model)) {
                long sum = 0;
                for (Path f : files.filter(f -> f.toString().endsWith(".safetensors")).toList()) {
                    sum += Files.size(f);
                }
                return sum;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(model + ": " + e.getMessage(), e);
        }
    }

}
