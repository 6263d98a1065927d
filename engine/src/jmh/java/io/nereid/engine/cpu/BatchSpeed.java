package io.nereid.engine.cpu;

import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Aggregate decode tok/s of {@code SEQS} sequences sharing every step, on one model file, in rounds:
 * one number per round, so that two builds can be alternated run by run on a noisy machine (the
 * figures of this VM move by 10-25 % from minute to minute; {@link ModelSpeed} measures many things
 * once).
 *
 * <p>Usage: {@code BatchSpeed MODEL THREADS SEQS SECONDS [CONTEXT] [ROUNDS]}: each round prefills
 * {@code SEQS} prompts of {@code CONTEXT} tokens (default 16) and then decodes for {@code SECONDS}
 * (at most {@link #MAX_STEPS} steps, after two warm-up steps; {@link ModelSpeed}'s decode loop), in the
 * default (fastest) order. {@code bench/models/batch.sh} runs it.
 */
public final class BatchSpeed {

    /** Steps a round measures at most. */
    private static final int MAX_STEPS = 180;

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
        try (ComputePool pool = new ComputePool(new ComputePool.Config(threads)); CpuModel model = CpuModel.open(file)) {
            RangeRunner runner = (start, end, min, body) -> pool.parallelFor(start, end, min, body::run);
            CpuForward forward = model.forward(Kernels.provider(), runner, 2048, false);
            for (int round = 0; round < rounds; round++) {
                double tokS = ModelSpeed.decode(forward, seqs, context, MAX_STEPS, seconds);
                System.out.printf(Locale.ROOT, "%s: %d seqs, context %d, %d threads: %.1f tok/s aggregate%n",
                        file.getFileName(), seqs, context, threads, tokS);
            }
        }
    }
}
