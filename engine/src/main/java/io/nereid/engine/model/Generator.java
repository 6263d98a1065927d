package io.nereid.engine.model;

import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.Sampler;
import io.nereid.kvcache.BlockCopy;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.util.List;
import java.util.function.Consumer;

/**
 * Single-sequence generation over the paged cache: prefill the prompt in chunks, then decode one
 * token per step until a stop token or the token limit. For {@code bin/nereid generate} and model
 * tests; the serving engine batches many sequences instead. Not thread-safe.
 */
public final class Generator {

    private final CpuForward forward;
    private final KvCacheManager cache;
    private final KvStorage storage;
    private final int prefillChunk;

    /** A generator over an F32 KV cache. */
    public Generator(CpuForward forward, int contextLength, int blockSize, int prefillChunk) {
        this(forward, contextLength, blockSize, prefillChunk, KvPrecision.F32);
    }

    /**
     * @param contextLength the most positions a sequence may use
     * @param blockSize     KV block size (8, 16, 32 or 64)
     * @param prefillChunk  prompt tokens per prefill step
     * @param kvPrecision   element type of the KV cache (F16 halves its memory)
     */
    public Generator(CpuForward forward, int contextLength, int blockSize, int prefillChunk, KvPrecision kvPrecision) {
        this.forward = forward;
        int blocks = (contextLength + blockSize - 1) / blockSize + 1;
        this.cache = new KvCacheManager(new KvCacheConfig(blocks + 1, blockSize, 0, KvCacheConfig.randomSeed()));
        this.storage = new KvStorage(forward.config(), blocks + 1, blockSize, kvPrecision);
        this.prefillChunk = prefillChunk;
    }

    /** Bytes the KV cache holds (allocated up front for the whole context). */
    public long kvBytes() {
        return storage.bytes();
    }

    /** Timings of one {@link #generate} call, in nanoseconds. */
    public record Stats(int promptTokens, int generatedTokens, long prefillNanos, long decodeNanos) {
    }

    /**
     * Generates up to {@code maxTokens} tokens after {@code prompt}, passing each to {@code onToken}
     * as it is chosen; stops after a token in {@code stopIds}.
     */
    public Stats generate(int[] prompt, int maxTokens, Sampler sampler, int[] stopIds, Consumer<SampledToken> onToken) {
        BlockTable table = cache.newTable(0);
        try {
            long t0 = System.nanoTime();
            float[] logits = null;
            for (int start = 0; start < prompt.length; start += prefillChunk) {
                int len = Math.min(prefillChunk, prompt.length - start);
                logits = step(table, java.util.Arrays.copyOfRange(prompt, start, start + len), start + len == prompt.length);
            }
            long t1 = System.nanoTime();
            int generated = 0;
            while (generated < maxTokens && logits != null) {
                SampledToken next = sampler.sample(logits);
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
        for (BlockCopy c : cache.drainCopies()) {
            storage.copy(c);
        }
        return forward.forward(List.of(new Slice(tokens, start, table.blockIds(), wantsLogits)), storage)[0];
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
