package io.nereid.engine.cpu;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * What a speculative verification costs on the CPU backend: the time of a forward step of one
 * sequence with {@code n} tokens and {@code n} logit rows (a decode with {@code n - 1} drafts), for
 * {@code n} from 1 to MAX, as milliseconds and as a multiple of the one-token step measured in the
 * same rounds (the rounds take the counts in turn, so the VM's drift hits them alike). With a free
 * draft (n-gram, {@code c = 0}) a speculative decoder's efficiency is at most {@code T(1) / T(k + 1)}.
 *
 * <p>Usage: {@code VerifySpeed MODEL [THREADS] [CONTEXT] [ROUNDS] [MAX]}: the sequence holds
 * {@code CONTEXT} tokens of prompt; each round runs 20 steps of each count (the drafts appended,
 * computed and truncated again, as a rejected verification leaves the cache).
 */
public final class VerifySpeed {

    private VerifySpeed() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int context = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        int max = args.length > 4 ? Integer.parseInt(args[4]) : 6;
        try (ComputePool pool = new ComputePool(new ComputePool.Config(threads)); CpuModel m = CpuModel.open(file)) {
            RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
            CpuForward f = m.forward(Kernels.provider(), runner, context + max + 16, false);
            int blocks = (context + max + 16) / 16 + 4;
            KvCacheManager cache = new KvCacheManager(new KvCacheConfig(blocks, 16, 0, 1));
            KvStorage kv = new KvStorage(f.config(), blocks, 16, KvPrecision.F16);
            int[] prompt = new int[context];
            for (int i = 0; i < context; i++) {
                prompt[i] = 300 + i % 500;
            }
            BlockTable t = cache.newTable(0);
            t.append(prompt);
            f.forward(List.of(new Slice(prompt, 0, t.blockIds(), true)), kv);
            double[][] ms = new double[rounds][max + 1];
            for (int r = -2; r < rounds; r++) { // two rounds of warm-up
                for (int n = 1; n <= max; n++) {
                    int steps = r < 0 ? 10 : 20;
                    long t0 = System.nanoTime();
                    for (int s = 0; s < steps; s++) {
                        int[] tokens = new int[n];
                        for (int i = 0; i < n; i++) {
                            tokens[i] = 500 + (s + i) % 300;
                        }
                        t.append(tokens);
                        f.forward(List.of(new Slice(tokens, context, t.blockIds(), n)), kv);
                        t.truncate(context);
                    }
                    if (r >= 0) {
                        ms[r][n] = (System.nanoTime() - t0) / 1e6 / steps;
                    }
                }
            }
            System.out.printf(Locale.ROOT, "%s, %d threads, %d tokens of context: ms a step of n tokens (rounds), mean, "
                    + "÷ one token%n", file.getFileName(), threads, context);
            double one = 0;
            for (int r = 0; r < rounds; r++) {
                one += ms[r][1];
            }
            for (int n = 1; n <= max; n++) {
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "n=%d", n));
                double sum = 0;
                for (int r = 0; r < rounds; r++) {
                    line.append(String.format(Locale.ROOT, " %7.2f", ms[r][n]));
                    sum += ms[r][n];
                }
                line.append(String.format(Locale.ROOT, "   mean %7.2f   x one %.2f", sum / rounds, sum / one));
                System.out.println(line);
            }
        }
    }
}
