package io.nereid.engine.api;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvCacheSpec;
import io.nereid.engine.core.AdaptiveDraftLength;
import io.nereid.engine.core.DraftModelProposer;
import io.nereid.engine.core.DraftProposer;
import io.nereid.engine.core.EngineConfig;
import io.nereid.engine.core.InflightEngine;
import io.nereid.engine.core.NgramProposer;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Assembles engines, so that front ends never wire engine internals: opens the model, finds the
 * backend by name ({@link BackendProvider}), sizes and allocates the KV cache, and starts the
 * engine thread. Stateless.
 */
public final class Engines {

    /** The demo model: a small llama with random weights, generated when no model is given. */
    static final RandomModelWriter.Spec DEMO = new RandomModelWriter.Spec(Architecture.LLAMA, 256, 4, 8, 4, 512, 8000,
            2048, GgmlType.Q8_0, false, 42);

    private Engines() {
    }

    /** Refuses a speculative configuration that cannot run, before anything is loaded. */
    private static void checkSpeculative(SpeculativeConfig c) {
        if (c != null && c.method().equals("draft_model") && !Files.exists(Path.of(c.model()))) {
            throw new IllegalArgumentException("speculative config: draft model " + c.model() + " does not exist");
        }
    }

    /**
     * The draft proposer {@code c} asks for ({@link DraftProposer#NONE} for none), its draft length chosen per
     * step where {@code c} is adaptive ({@link AdaptiveDraftLength}); a draft model is
     * opened on the target's backend kind with its own KV blocks (as many as the target's) and
     * must share the target's vocabulary token for token.
     */
    private static DraftProposer proposer(SpeculativeConfig c, EngineSpec spec, Tokenizer target, int numBlocks, int bs,
            int maxModelLen, List<AutoCloseable> opened) {
        if (c == null) {
            return DraftProposer.NONE;
        }
        DraftProposer p = fixedLength(c, spec, target, numBlocks, bs, maxModelLen, opened);
        return c.adaptive() ? new AdaptiveDraftLength(p, c.numSpeculativeTokens(), spec.maxNumBatchedTokens()) : p;
    }

    /** The proposer of {@code c}'s method, {@code num_speculative_tokens} drafts whenever it can. */
    private static DraftProposer fixedLength(SpeculativeConfig c, EngineSpec spec, Tokenizer target, int numBlocks,
            int bs, int maxModelLen, List<AutoCloseable> opened) {
        if (c.method().equals("ngram")) {
            return new NgramProposer(c.numSpeculativeTokens(), c.promptLookupMin(), c.promptLookupMax(),
                    c.disableByBatchSize());
        }
        ModelSource draftSource = ModelSource.open(Path.of(c.model()));
        opened.add(draftSource);
        String mismatch = vocabularyMismatch(target, draftSource.tokenizer());
        if (mismatch != null) {
            throw new IllegalArgumentException("speculative config: draft model " + c.model()
                    + " does not share the target's vocabulary: " + mismatch);
        }
        Backend draft = BackendProvider.named(spec.backend()).open(new BackendConfig(draftSource, spec.kvPrecision(),
                spec.threads(), spec.batchInvariant(), spec.eager()));
        opened.add(draft);
        draft.allocate(numBlocks, bs, maxModelLen);
        warmUp(BackendProvider.named(spec.backend()), draft, numBlocks, bs, maxModelLen);
        return new DraftModelProposer(draft, numBlocks, bs, maxModelLen, c.numSpeculativeTokens(),
                spec.maxNumBatchedTokens(), c.disableByBatchSize());
    }

    /** Why two tokenizers differ (size, or the first id whose piece differs), or null when they agree. */
    private static String vocabularyMismatch(Tokenizer target, Tokenizer draft) {
        if (target.vocabSize() != draft.vocabSize()) {
            return draft.vocabSize() + " tokens against " + target.vocabSize();
        }
        for (int id = 0; id < target.vocabSize(); id++) {
            if (!target.piece(id).equals(draft.piece(id))) {
                return "token " + id + " is '" + draft.piece(id) + "' there, '" + target.piece(id) + "' here";
            }
        }
        return null;
    }

    /**
     * Opens {@code spec.model()} (or generates the demo model) on {@code spec.backend()} and starts an
     * engine over it.
     *
     * @throws RuntimeException naming the file and the reason when the model cannot be loaded
     *                          ({@code ModelLoadException}), the backend is unknown or cannot run here,
     *                          or the chat template does not compile
     */
    public static LoadedModel open(EngineSpec spec) {
        checkSpeculative(spec.speculative());
        Path demo = spec.model() == null ? writeDemo() : null;
        ModelSource source = null;
        Backend backend = null;
        List<AutoCloseable> draftParts = new ArrayList<>();   // a draft model's source and backend
        try {
            source = ModelSource.open(demo != null ? demo : spec.model());
            BackendProvider provider = BackendProvider.named(spec.backend());
            Optional<String> unavailable = provider.unavailableReason();
            if (unavailable.isPresent()) {
                throw new IllegalArgumentException("backend '" + spec.backend() + "' cannot run here: " + unavailable.get());
            }
            Backend opened = provider.open(new BackendConfig(source, spec.kvPrecision(), spec.threads(), spec.batchInvariant(),
                    spec.eager()));
            backend = spec.backendDecorator().apply(opened);
            ModelConfig mc = source.config();
            int bs = spec.blockSize();
            int context = spec.maxModelLen() > 0 ? spec.maxModelLen() : mc.contextLength();
            KvCacheSpec kv = backend.kvCacheSpec(bs);
            // By default enough for max-num-seqs full contexts, capped: on the CPU at DEFAULT_KV_CAP (host memory is
            // the weights' and everyone's), on a device at 90 % of what its free memory holds (vLLM's
            // gpu_memory_utilization idea: the device is the server's).
            long cap = provider.name().equals("cpu") ? EngineSpec.DEFAULT_KV_CAP : kv.bytes(kv.maxBlocks()) / 10 * 9;
            long wanted = spec.kvCacheBytes() > 0 ? spec.kvCacheBytes()
                    : Math.min(cap, kv.bytesPerBlock() * ((long) spec.maxNumSeqs() * ceilDiv(context, bs) + 1));
            int numBlocks = Math.max(2, kv.blocksFor(wanted));
            int maxModelLen = (int) Math.min(context, (numBlocks - 1L) * bs);
            backend.allocate(numBlocks, bs, maxModelLen);
            warmUp(provider, opened, numBlocks, bs, maxModelLen);
            Optional<ChatTemplate> template = source.chatTemplate();
            EngineConfig config = new EngineConfig(spec.maxNumSeqs(), spec.maxNumBatchedTokens(), spec.maxWaiting(), maxModelLen,
                    numBlocks, bs, 0.01, spec.prefixCaching(), spec.chunkedPrefill());
            DraftProposer proposer = proposer(spec.speculative(), spec, source.tokenizer(), numBlocks, bs, maxModelLen,
                    draftParts);
            InflightEngine engine = new InflightEngine(config, backend, source.tokenizer(), proposer);
            return new Loaded(source, backend, engine, template, maxModelLen,
                    new LoadedModel.KvCacheInfo(numBlocks, bs, kv.bytes(numBlocks), spec.kvPrecision().name().toLowerCase(Locale.ROOT)),
                    demo, List.copyOf(draftParts));
        } catch (RuntimeException | Error e) {
            closeAll(draftParts);
            if (backend != null) {
                backend.close();
            }
            if (source != null) {
                source.close();
            }
            deleteQuietly(demo);
            throw e;
        }
    }

    /**
     * The CPU backend's forward passes of every step shape, before it serves ({@link WarmUp}: the JIT then
     * compiles them with every shape's branches); the backend as opened, not as a test decorates it.
     */
    private static void warmUp(BackendProvider provider, Backend backend, int numBlocks, int bs, int maxModelLen) {
        if (provider.name().equals("cpu") && WARM_UP) {
            WarmUp.run(backend, numBlocks, bs, maxModelLen);
        }
    }

    /**
     * System property: {@code false} starts serving without {@link WarmUp}'s passes (a faster start; the first
     * requests, and the first steps of each new shape, then run the kernels cold).
     */
    public static final String WARM_UP_PROPERTY = "nereid.warmup";

    private static final boolean WARM_UP = !"false".equals(System.getProperty(WARM_UP_PROPERTY));

    private static Path writeDemo() {
        try {
            Path demo = Files.createTempFile("nereid-demo-", ".gguf");
            RandomModelWriter.write(DEMO, demo);
            return demo;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the demo model: " + e.getMessage(), e);
        }
    }

    private static void deleteQuietly(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temporary file left behind is harmless
            }
        }
    }

    /** Closes in reverse order of opening (a draft backend before its model source). */
    private static void closeAll(List<AutoCloseable> parts) {
        for (int i = parts.size() - 1; i >= 0; i--) {
            try {
                parts.get(i).close();
            } catch (Exception ignored) {
                // closing what failed to open: nothing more to do
            }
        }
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /** The assembled engine; closing stops the engine first, then frees the backend, then unmaps the model. */
    private record Loaded(ModelSource source, Backend backend, InflightEngine engine, Optional<ChatTemplate> chatTemplate,
            int maxModelLen, KvCacheInfo kvCache, Path demoFile, List<AutoCloseable> draftParts)
            implements LoadedModel {

        @Override
        public Tokenizer tokenizer() {
            return source.tokenizer();
        }

        @Override
        public ModelInfo info() {
            ModelConfig c = source.config();
            return new ModelInfo(c.architecture().name().toLowerCase(Locale.ROOT), c.layers(), c.dim(), c.vocabSize(),
                    c.contextLength());
        }

        @Override
        public boolean demo() {
            return demoFile != null;
        }

        @Override
        public long weightCopyBytes() {
            return backend.weightCopyBytes();
        }

        @Override
        public Optional<EmbeddingSpec> embedding() {
            return source.embedding();
        }

        @Override
        public void close() {
            engine.close();
            closeAll(draftParts);
            backend.close();
            source.close();
            deleteQuietly(demoFile);
        }
    }
}
