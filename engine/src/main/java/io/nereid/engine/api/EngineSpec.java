package io.nereid.engine.api;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.KvPrecision;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * What {@link Engines#open} assembles: the model, the backend that runs it, the engine's limits and
 * the KV cache's size. Built with {@link #builder(Path)}; every field has the default that
 * {@code bin/nereid serve} documents. Validated once, here.
 *
 * @param model               GGUF file or Hugging Face directory, or null: generate the random-weight
 *                            demo model (removed again on close)
 * @param backend             backend name ({@code cpu}; see {@code BackendProvider})
 * @param threads             compute threads of the backend
 * @param maxNumSeqs          sequences per engine step
 * @param maxNumBatchedTokens tokens per engine step (decodes and prefill chunks together)
 * @param maxWaiting          queued requests before {@code submit} answers QUEUE_FULL
 * @param blockSize           tokens per KV block
 * @param kvCacheBytes        KV cache memory, or 0: enough for {@code maxNumSeqs} full contexts, at most 512 MiB
 * @param kvPrecision         element type of the KV cache
 * @param maxModelLen         context length to serve, or 0: the model's own; capped by the KV cache
 * @param prefixCaching       reuse cached prompt prefixes
 * @param chunkedPrefill      split long prompts into chunks within the token budget
 * @param backendDecorator    applied to the opened backend before the engine uses it (identity but in tests)
 * @param speculative         speculative decoding, or null for none
 * @param batchInvariant      {@code --deterministic}: a token's logits the same bits alone, batched,
 *                            chunked and after a prefix-cache hit (see {@code BackendConfig})
 * @param eager               {@code --enforce-eager}: no CUDA graphs (see {@code BackendConfig})
 */
public record EngineSpec(Path model, String backend, int threads, int maxNumSeqs, int maxNumBatchedTokens, int maxWaiting,
        int blockSize, long kvCacheBytes, KvPrecision kvPrecision, int maxModelLen, boolean prefixCaching,
        boolean chunkedPrefill, UnaryOperator<Backend> backendDecorator, SpeculativeConfig speculative,
        boolean batchInvariant, boolean eager) {

    /** The default KV cache is at most this big. */
    public static final long DEFAULT_KV_CAP = 512L << 20;

    public EngineSpec {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(kvPrecision, "kvPrecision");
        Objects.requireNonNull(backendDecorator, "backendDecorator");
        if (threads < 1 || maxNumSeqs < 1 || maxNumBatchedTokens < 1 || maxWaiting < 1) {
            throw new IllegalArgumentException("threads, max-num-seqs, max-num-batched-tokens and max-waiting must be"
                    + " positive, got " + threads + ", " + maxNumSeqs + ", " + maxNumBatchedTokens + ", " + maxWaiting);
        }
        if (blockSize != 8 && blockSize != 16 && blockSize != 32 && blockSize != 64) {
            throw new IllegalArgumentException("block size must be 8, 16, 32 or 64, got " + blockSize);
        }
        if (kvCacheBytes < 0 || maxModelLen < 0) {
            throw new IllegalArgumentException("KV cache memory and max model length must not be negative");
        }
    }

    /** A spec for {@code model} (null: the demo model) with every default. */
    public static Builder builder(Path model) {
        return new Builder(model);
    }

    /** This spec with another backend decorator. */
    public EngineSpec withBackendDecorator(UnaryOperator<Backend> decorator) {
        return new EngineSpec(model, backend, threads, maxNumSeqs, maxNumBatchedTokens, maxWaiting, blockSize, kvCacheBytes,
                kvPrecision, maxModelLen, prefixCaching, chunkedPrefill, decorator, speculative, batchInvariant, eager);
    }

    /** Builds an {@link EngineSpec}; not thread-safe. */
    public static final class Builder {
        private final Path model;
        private String backend = "cpu";
        private int threads = Runtime.getRuntime().availableProcessors();
        private int maxNumSeqs = 64;
        private int maxNumBatchedTokens = 512;
        private int maxWaiting = 1024;
        private int blockSize = 16;
        private long kvCacheBytes;
        private KvPrecision kvPrecision = KvPrecision.F16;
        private int maxModelLen;
        private boolean prefixCaching = true;
        private boolean chunkedPrefill = true;
        private UnaryOperator<Backend> backendDecorator = UnaryOperator.identity();
        private SpeculativeConfig speculative;
        private boolean batchInvariant;
        private boolean eager;

        private Builder(Path model) {
            this.model = model;
        }

        public Builder backend(String name) {
            this.backend = name;
            return this;
        }

        public Builder threads(int n) {
            this.threads = n;
            return this;
        }

        public Builder maxNumSeqs(int n) {
            this.maxNumSeqs = n;
            return this;
        }

        public Builder maxNumBatchedTokens(int n) {
            this.maxNumBatchedTokens = n;
            return this;
        }

        public Builder maxWaiting(int n) {
            this.maxWaiting = n;
            return this;
        }

        public Builder blockSize(int tokens) {
            this.blockSize = tokens;
            return this;
        }

        public Builder kvCacheBytes(long bytes) {
            this.kvCacheBytes = bytes;
            return this;
        }

        public Builder kvPrecision(KvPrecision p) {
            this.kvPrecision = p;
            return this;
        }

        /**
         * {@code f16} or {@code f32} (the names of {@code --kv-type} and llama.cpp's {@code --cache-type-k}).
         *
         * @throws IllegalArgumentException for any other name
         */
        public Builder kvPrecision(String name) {
            return kvPrecision(KvPrecision.parse(name));
        }

        public Builder maxModelLen(int tokens) {
            this.maxModelLen = tokens;
            return this;
        }

        public Builder prefixCaching(boolean on) {
            this.prefixCaching = on;
            return this;
        }

        public Builder chunkedPrefill(boolean on) {
            this.chunkedPrefill = on;
            return this;
        }

        public Builder backendDecorator(UnaryOperator<Backend> decorator) {
            this.backendDecorator = decorator;
            return this;
        }

        /** Speculative decoding (null: none). */
        public Builder speculative(SpeculativeConfig config) {
            this.speculative = config;
            return this;
        }

        /** Batch-invariant kernels ({@code --deterministic}); off by default. */
        public Builder batchInvariant(boolean on) {
            this.batchInvariant = on;
            return this;
        }

        /** Every kernel launched as the step runs, no CUDA graph ({@code --enforce-eager}); off by default. */
        public Builder eager(boolean on) {
            this.eager = on;
            return this;
        }

        /** @throws IllegalArgumentException naming the first bad value */
        public EngineSpec build() {
            return new EngineSpec(model, backend, threads, maxNumSeqs, maxNumBatchedTokens, maxWaiting, blockSize,
                    kvCacheBytes, kvPrecision, maxModelLen, prefixCaching, chunkedPrefill, backendDecorator, speculative,
                    batchInvariant, eager);
        }
    }
}
