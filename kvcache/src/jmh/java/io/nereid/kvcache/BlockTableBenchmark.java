package io.nereid.kvcache;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Per-token and per-sequence costs of block tables on the engine thread.
 * <ul>
 *   <li>{@code appendPerToken}: decode-style token-by-token append into a fresh sequence, with
 *       block allocation, eviction of old cached blocks and prefix registration of every full
 *       block; the free at the end is amortized over the 4,096 tokens;</li>
 *   <li>{@code baselineIntAppendPerToken}: appending the same tokens to a growable int array,
 *       the floor any token bookkeeping pays (read results as a ratio to it);</li>
 *   <li>{@code freeSequence}: releasing a 4,096-token sequence (256 blocks of 16), tail first.</li>
 * </ul>
 * Run: {@code bin/nereid jmh kvcache BlockTableBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BlockTableBenchmark {

    static final int TOKENS = 4096;
    static final int BLOCK_SIZE = 16;

    KvCacheManager kv;
    int[] tokens;
    long nextExtraKey = 1;
    int[] growable = new int[16];

    @Setup(Level.Trial)
    public void setUp() {
        kv = new KvCacheManager(new KvCacheConfig(3 * TOKENS / BLOCK_SIZE + 1, BLOCK_SIZE, 0, 42));
        tokens = randomTokens(TOKENS, 42);
    }

    static int[] randomTokens(int n, long seed) {
        Random random = new Random(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = random.nextInt(128_000);
        }
        return t;
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public int appendPerToken() {
        // A fresh extra key makes every block new content, as when decoding: each full block is
        // registered, and once the pool has filled, each allocation evicts an old cached block.
        BlockTable table = kv.newTable(nextExtraKey++);
        for (int token : tokens) {
            table.append(token);
        }
        int blocks = table.numBlocks();
        table.free();
        return blocks;
    }

    @Benchmark
    @OperationsPerInvocation(TOKENS)
    public int baselineIntAppendPerToken() {
        int length = 0;
        for (int token : tokens) {
            if (length == growable.length) {
                growable = Arrays.copyOf(growable, length * 2);
            }
            growable[length++] = token;
        }
        return growable[length - 1];
    }

    /** A 4,096-token sequence, refilled before each invocation of {@link #freeSequence}. */
    @State(Scope.Thread)
    public static class FullSequence {
        BlockTable table;
        long extraKey = -1;

        @Setup(Level.Invocation)
        public void fill(BlockTableBenchmark bench) {
            table = bench.kv.newTable(extraKey--);
            table.append(bench.tokens);
        }
    }

    @Benchmark
    public void freeSequence(FullSequence sequence) {
        sequence.table.free();
    }
}
