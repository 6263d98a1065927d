package io.nereid.kvcache;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code longestCachedPrefix} of a 4,096-token prompt (blocks of 16) with 0, 50 and 100 % of it
 * cached, against {@code baselineHashPrompt}: computing the prompt's 255 chained block hashes
 * and nothing else. A lookup stops hashing at its first miss, so 0 % costs one hash.
 * Run: {@code bin/nereid jmh kvcache PrefixLookupBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PrefixLookupBenchmark {

    static final int TOKENS = 4096;
    static final int BLOCK_SIZE = 16;

    @Param({"0", "50", "100"})
    int cachedPercent;

    KvCacheManager kv;
    int[] prompt;

    @Setup(Level.Trial)
    public void setUp() {
        kv = new KvCacheManager(new KvCacheConfig(2 * TOKENS / BLOCK_SIZE + 1, BLOCK_SIZE, 0, 42));
        prompt = BlockTableBenchmark.randomTokens(TOKENS, 7);
        // Kept live, so its blocks stay cached for the whole trial.
        kv.newTable(0).append(prompt, 0, TOKENS * cachedPercent / 100);
        int expected = Math.min(TOKENS * cachedPercent / 100, TOKENS - BLOCK_SIZE);
        if (longestCachedPrefix() != expected) {
            throw new IllegalStateException("expected " + expected + " cached tokens");
        }
    }

    @Benchmark
    public int longestCachedPrefix() {
        return kv.longestCachedPrefix(prompt, 0).numTokens();
    }

    @Benchmark
    public long baselineHashPrompt() {
        BlockHasher hasher = kv.pool().hasher();
        long parent = BlockHasher.ROOT;
        for (int offset = 0; offset + BLOCK_SIZE < TOKENS; offset += BLOCK_SIZE) {
            parent = hasher.hash(parent, 0, prompt, offset, BLOCK_SIZE);
        }
        return parent;
    }
}
