package io.nereid.engine.cpu;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Aggregate decode tok/s of {@code SEQS} sequences sharing every step, on one model file, in rounds:
 * one number per round, so that two builds can be alternated run by run on a noisy machine (the
 * figures of this VM move by 10-25 % from minute to minute; {@link ModelSpeed} measures many things
 * once).
 *
 * <p>Usage: {@code BatchSpeed MODEL THREADS SEQS SECONDS [CONTEXT] [ROUNDS]}: each round prefills
 * {@code SEQS} prompts of {@code CONTEXT} tokens (default 16) and then decodes for {@code SECONDS}
 * (at most 180 steps), in the default (fastest) order. {@code bench/models/batch.sh} runs it.
 */
public final class BatchSpeed {

    private BatchSpeed() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: BatchSpeed MODEL THREADS SEQS SECONDS [CONTEXT] [ROUNDS]");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int seqs = Integer.parseInt(args[2]);
        double seconds = Double.parseDouble(args[3]);
        int context = args.length > 4 ? Integer.parseInt(args[4]) : 16;
        int rounds = args.length > 5 ? Integer.parseInt(args[5]) : 3;
        int maxSteps = 180;
        try (ComputePool pool = new ComputePool(new ComputePool.Config(threads)); CpuModel model = CpuModel.open(file)) {
            RangeRunner runner = (start, end, min, body) -> pool.parallelFor(start, end, min, body::run);
            CpuForward forward = model.forward(Kernels.provider(), runner, 2048, false);
            int blocksPerSequence = (context + maxSteps) / 16 + 2;
            for (int round = 0; round < rounds; round++) {
                KvCacheManager cache = new KvCacheManager(new KvCacheConfig(seqs * blocksPerSequence + 8, 16, 0, 1));
                KvStorage kv = new KvStorage(forward.config(), seqs * blocksPerSequence + 8, 16, KvPrecision.F16);
                List<BlockTable> tables = new ArrayList<>();
                List<Slice> prefill = new ArrayList<>();
                for (int s = 0; s < seqs; s++) {
                    int[] prompt = new int[context];
                    for (int i = 0; i < context; i++) {
                        prompt[i] = 300 + (s * 7 + i) % 5000;
                    }
                    BlockTable table = cache.newTable(s);
                    table.append(prompt);
                    tables.add(table);
                    prefill.add(new Slice(prompt, 0, table.blockIds(), false));
                }
                forward.forward(prefill, kv);
                long t0 = System.nanoTime();
                int steps = 0;
                while (System.nanoTime() - t0 < seconds * 1e9 && steps < maxSteps) {
                    List<Slice> slices = new ArrayList<>();
                    for (int s = 0; s < seqs; s++) {
                        BlockTable table = tables.get(s);
                        int position = table.length();
                        table.append(400 + steps);
                        slices.add(new Slice(new int[] {400 + steps}, position, table.blockIds(), true));
                    }
                    forward.forward(slices, kv);
                    steps++;
                }
                double elapsed = (System.nanoTime() - t0) / 1e9;
                System.out.printf(Locale.ROOT, "%s: %d seqs, context %d, %d threads: %.1f tok/s aggregate (%d steps)%n",
                        file.getFileName(), seqs, context, threads, seqs * steps / elapsed, steps);
            }
        }
    }
}
