package io.nereid.engine.core;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.KvCacheSpec;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Single-sequence generation over any {@link Backend}: prefill the prompt in chunks, then decode
 * one token per step until a stop token or the token limit. For {@code bin/nereid generate} and
 * model tests; the serving engine batches many sequences instead. Allocates the backend's KV cache
 * for one full context. Not thread-safe.
 */
public final class Generator {

    private final Backend backend;
    private final KvCacheManager cache;
    private final int prefillChunk;
    private final long kvBytes;

    /**
     * @param backend       an unallocated backend, which this generator allocates and then owns the use of
     * @param contextLength the most positions a sequence may use
     * @param blockSize     KV block size (8, 16, 32 or 64)
     * @param prefillChunk  prompt tokens per prefill step
     */
    public Generator(Backend backend, int contextLength, int blockSize, int prefillChunk) {
        this.backend = backend;
        int blocks = (contextLength + blockSize - 1) / blockSize + 2;   // the pool's null block, and one spare
        KvCacheSpec spec = backend.kvCacheSpec(blockSize);
        backend.allocate(blocks, blockSize, contextLength);
        this.kvBytes = spec.bytes(blocks);
        this.cache = new KvCacheManager(new KvCacheConfig(blocks, blockSize, 0, KvCacheConfig.randomSeed()));
        this.prefillChunk = prefillChunk;
    }

    /** Bytes the KV cache holds (allocated up front for the whole context). */
    public long kvBytes() {
        return kvBytes;
    }

    /** Timings of one {@link #generate} call, in nanoseconds. */
    public record Stats(int promptTokens, int generatedTokens, long prefillNanos, long decodeNanos) {
    }

    /**
     * Generates up to {@code maxTokens} tokens after {@code prompt}, passing each to {@code onToken}
     * as it is chosen; stops after a token in {@code stopIds}.
     */
    public Stats generate(int[] prompt, int maxTokens, SamplingChain chain, int[] stopIds, Consumer<SampledToken> onToken) {
        BlockTable table = cache.newTable(0);
        try {
            long t0 = System.nanoTime();
            float[] logits = null;
            for (int start = 0; start < prompt.length; start += prefillChunk) {
                int len = Math.min(prefillChunk, prompt.length - start);
                logits = step(table, Arrays.copyOfRange(prompt, start, start + len), start + len == prompt.length);
            }
            long t1 = System.nanoTime();
            int generated = 0;
            while (generated < maxTokens && logits != null) {
                SampledToken next = chain.sample(logits, true);
                chain.accept(next.id());
                generated++;
                onToken.accept(next);
                if (contains(stopIds, next.id()) || generated == maxTokens) {
                    break;
                }
                logits = step(table, new int[] {next.id()}, true);
            }
            return new Stats(prompt.length, generated, t1 - t0, System.nanoTime() - t1);
        } finally {
            table.free();
        }
    }

    private float[] step(BlockTable table, int[] tokens, boolean wantsLogits) {
        int start = table.length();
        table.append(tokens);
        backend.copy(cache.drainCopies());
        return backend.forward(new Step(List.of(new Slice(tokens, start, table.blockIds(), wantsLogits)))).logits()[0];
    }

    private static boolean contains(int[] ids, int id) {
        for (int x : ids) {
            if (x == id) {
                return true;
            }
        }
        return false;
    }
}
