package io.nereid.engine.cpu;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.cpu.tensor.WeightMatrix;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.LlamaFileType;
import io.nereid.engine.model.ModelQuantizer;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.DoubleAdder;

/**
 * Speed of the CPU runtime on Llama-shaped random-weight models, with this machine's memory read
 * bandwidth measured in the same run as the baseline: single-sequence decode tok/s (and as a
 * percentage of the bandwidth roofline, weight bytes per token / bandwidth), prompt processing of
 * 512 tokens, and aggregate decode of 4 and 16 sequences sharing each step.
 *
 * <p>Usage: {@code ModelSpeed DIR [SIZES] [TYPES] [THREADS]}, e.g.
 * {@code ModelSpeed /tmp/nereid-models 110m,1.1b f16,q8_0,q4_0,q4_k_m 2}. Models are generated into DIR
 * once and reused (see {@link #model}). The kernels run in the default order (fastest per batch shape);
 * {@code NEREID_DETERMINISTIC=1} measures the batch-invariant one ({@code --deterministic}).
 */
public final class ModelSpeed {

    private static final boolean DETERMINISTIC = "1".equals(System.getenv("NEREID_DETERMINISTIC"))
            || "true".equalsIgnoreCase(System.getenv("NEREID_DETERMINISTIC"));

    private static final Map<String, int[]> SIZES = Map.of(
            // dim, layers, heads, kvHeads, ffn, vocab
            "110m", new int[] {768, 12, 12, 12, 2048, 32000},
            "1.1b", new int[] {2048, 22, 32, 4, 5632, 32000});

    private ModelSpeed() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/nereid-models");
        String[] sizes = (args.length > 1 ? args[1] : "110m").split(",");
        String[] types = (args.length > 2 ? args[2] : "Q8_0").split(",");
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : Runtime.getRuntime().availableProcessors();
        Files.createDirectories(dir);
        try (ComputePool pool = new ComputePool(new ComputePool.Config(threads))) {
            RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
            double bandwidth = bandwidthGBs(pool);
            System.out.printf("memory read bandwidth (%d threads): %.2f GB/s; kernels %s%n", threads, bandwidth,
                    DETERMINISTIC ? "batch invariant (NEREID_DETERMINISTIC)" : "default order");
            System.out.println("model   type  weights/token  roofline  decode tok/s (%roof)  pp512 tok/s  4 seqs tok/s  16 seqs tok/s");
            for (String size : sizes) {
                for (String type : types) {
                    Path file = model(dir, size, type);
                    try (CpuModel m = CpuModel.open(file)) {
                        CpuForward f = m.forward(Kernels.provider(), runner, 640, DETERMINISTIC);
                        // JIT warm-up of every path measured (one token, four, a tile): a path first taken inside
                        // a measurement ran interpreted or in C1 code for part of it (4 seqs of 110M Q4_K_S read
                        // 15 tok/s cold, 164 warm)
                        decode(f, 1, 24);
                        decode(f, 4, 12);
                        decode(f, 16, 6);
                        long bytes = bytesPerToken(m);
                        double roof = bandwidth * 1e9 / bytes;
                        double decode = decode(f, 1, 24);
                        double pp = prefill(f, 512);
                        double d4 = decode(f, 4, 12);
                        double d16 = decode(f, 16, 6);
                        System.out.printf("%-7s %-5s %9.0f MB  %6.1f t/s  %8.2f (%4.1f%%)  %11.2f  %12.2f  %13.2f%n",
                                size, type, bytes / 1e6, roof, decode, 100 * decode / roof, pp, d4, d16);
                    }
                }
            }
        }
    }

    /** Bytes of weight matrices one decode token reads (embedding: one row, so not counted). */
    private static long bytesPerToken(CpuModel m) {
        long total = 0;
        ModelConfig c = m.config();
        for (int l = 0; l < c.layers(); l++) {
            ModelWeights.Layer L = m.weights().layer(l);
            for (WeightMatrix w : List.of(L.wq(), L.wk(), L.wv(), L.wo(), L.gate(), L.up(), L.down())) {
                total += w.type().byteSize(new long[] {w.cols(), w.rows()});
            }
        }
        WeightMatrix out = m.weights().output();
        return total + out.type().byteSize(new long[] {out.cols(), out.rows()});
    }

    /**
     * The {@code size} model as {@code type}, a {@code bin/nereid quantize} type name ({@code f16},
     * {@code q8_0}, {@code q4_0}, {@code q4_k_m}, ...): random F32 weights generated once, then
     * quantized as llama.cpp's {@code llama-quantize} does, with its per-tensor mix (Q6_K output for
     * Q4_0 and the K-quants, attn_v / ffn_down promoted in Q4_K_M), so the files have the
     * structure of the ones users download.
     */
    private static Path model(Path dir, String size, String type) throws IOException {
        int[] s = SIZES.get(size);
        Path base = dir.resolve("llama-" + size + "-F32.gguf");
        if (!Files.exists(base)) {
            System.out.println("generating " + base + " ...");
            RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, s[0], s[1], s[2], s[3], s[4], s[5], 2048,
                    GgmlType.F32, false, 42), base);
        }
        LlamaFileType fileType = LlamaFileType.fromCommandName(type.toLowerCase(Locale.ROOT))
                .orElseThrow(() -> new IllegalArgumentException("unknown type " + type + "; one of "
                        + LlamaFileType.commandNames()));
        if (fileType == LlamaFileType.F32) {
            return base;
        }
        Path file = dir.resolve("llama-" + size + "-" + type.toUpperCase(Locale.ROOT) + ".mix.gguf");
        if (!Files.exists(file)) {
            System.out.println("quantizing " + file + " ...");
            ModelQuantizer.quantize(base, file, fileType, false);
        }
        return file;
    }

    /** Best of 5 parallel passes summing a 1 GiB off-heap buffer. */
    private static double bandwidthGBs(ComputePool pool) {
        long size = 1L << 30;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment seg = arena.allocate(size, 64);
            seg.fill((byte) 1);
            long longs = size / 8;
            double best = 0;
            for (int run = 0; run < 5; run++) {
                DoubleAdder sink = new DoubleAdder();
                long t0 = System.nanoTime();
                pool.parallelFor(0, (int) (longs / 1024), 1024, (from, to) -> {
                    long sum = 0;
                    for (long i = (long) from * 1024; i < (long) to * 1024; i += 4) {
                        sum += seg.getAtIndex(ValueLayout.JAVA_LONG, i) + seg.getAtIndex(ValueLayout.JAVA_LONG, i + 1)
                                + seg.getAtIndex(ValueLayout.JAVA_LONG, i + 2) + seg.getAtIndex(ValueLayout.JAVA_LONG, i + 3);
                    }
                    sink.add(sum);
                });
                double secs = (System.nanoTime() - t0) / 1e9;
                if (sink.sum() == 0) {
                    throw new IllegalStateException("the buffer was filled with ones"); // keeps the reads live
                }
                best = Math.max(best, size / secs / 1e9);
            }
            return best;
        }
    }

    /** Aggregate decode tok/s of {@code seqs} sequences (16-token prompts) over {@code steps} steps. */
    private static double decode(CpuForward f, int seqs, int steps) {
        return decode(f, seqs, 16, steps, Double.POSITIVE_INFINITY);
    }

    /**
     * Aggregate decode tok/s of {@code seqs} sequences of {@code context}-token prompts (prefilled first), after
     * two warm-up steps, over {@code steps} steps or as many as {@code seconds} allow, whichever ends first.
     */
    static double decode(CpuForward f, int seqs, int context, int steps, double seconds) {
        int blocks = seqs * ((context + steps + 2 + 15) / 16) + 8;
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(blocks, 16, 0, 1));
        KvStorage kv = new KvStorage(f.config(), blocks, 16, KvPrecision.F16);
        List<BlockTable> tables = new ArrayList<>();
        List<Slice> prefill = new ArrayList<>();
        for (int s = 0; s < seqs; s++) {
            int[] prompt = new int[context];
            Arrays.fill(prompt, 300 + s);
            BlockTable t = cache.newTable(s);
            t.append(prompt);
            tables.add(t);
            prefill.add(new Slice(prompt, 0, t.blockIds(), false));
        }
        f.forward(prefill, kv);
        long t0 = 0;
        int step = -2; // two warm-up steps
        for (; step < steps && (step <= 0 || System.nanoTime() - t0 < seconds * 1e9); step++) {
            if (step == 0) {
                t0 = System.nanoTime();
            }
            List<Slice> slices = new ArrayList<>();
            for (int s = 0; s < seqs; s++) {
                BlockTable t = tables.get(s);
                int pos = t.length();
                t.append(400 + step + 2);
                slices.add(new Slice(new int[] {400 + step + 2}, pos, t.blockIds(), true));
            }
            f.forward(slices, kv);
        }
        return (double) seqs * step / ((System.nanoTime() - t0) / 1e9);
    }

    /** Prompt tokens per second for one {@code n}-token prompt in one step (after one warm-up pass). */
    private static double prefill(CpuForward f, int n) {
        double best = 0;
        for (int run = 0; run < 2; run++) {
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(n / 16 + 4, 16, 0, 1));
            KvStorage kv = new KvStorage(f.config(), n / 16 + 4, 16, KvPrecision.F16);
            int[] prompt = new int[n];
            for (int i = 0; i < n; i++) {
                prompt[i] = 300 + i % 1000;
            }
            BlockTable t = cache.newTable(0);
            t.append(prompt);
            long t0 = System.nanoTime();
            f.forward(List.of(new Slice(prompt, 0, t.blockIds(), true)), kv);
            best = Math.max(best, n / ((System.nanoTime() - t0) / 1e9));
        }
        return best;
    }
}
