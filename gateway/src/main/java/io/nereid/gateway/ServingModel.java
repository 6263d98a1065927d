package io.nereid.gateway;

import io.nereid.engine.api.Engine;
import io.nereid.engine.core.Backend;
import io.nereid.engine.core.CpuBackend;
import io.nereid.engine.core.EngineConfig;
import io.nereid.engine.core.InflightEngine;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.kernel.ComputePool;
import io.nereid.engine.kernel.Kernels;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.CpuModel;
import io.nereid.engine.model.KvPrecision;
import io.nereid.engine.model.KvStorage;
import io.nereid.engine.model.ModelConfig;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.engine.model.RangeRunner;
import io.nereid.engine.template.ChatRequestContext;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.tokenizer.SpecialTokens;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.gateway.http.ModelService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The model being served and what runs it: the memory-mapped model, the kernel pool, the KV
 * storage and the batching engine. Built once at startup from a {@link ServeConfig}; {@link #close}
 * stops the engine (in-flight requests finish as cancelled) and unmaps the model.
 * {@link #renderChat} and {@link #tokenize} are thread-safe and may block (worker pool only).
 */
final class ServingModel implements ModelService, AutoCloseable {

    /** The demo model: a small llama with random weights, generated at startup. */
    static final RandomModelWriter.Spec DEMO = new RandomModelWriter.Spec(Architecture.LLAMA, 256, 4, 8, 4, 512, 8000,
            2048, GgmlType.Q8_0, false, 42);
    private static final long KV_DEFAULT_CAP = 512L << 20;

    private final String name;
    private final String description;
    private final Path demoFile;
    private final CpuModel model;
    private final ComputePool pool;
    private final InflightEngine engine;
    private final ChatTemplate template;
    private final int maxModelLen;
    private final int numBlocks;
    private final int blockSize;
    private final long kvBytes;
    private final long created = System.currentTimeMillis() / 1000;

    private ServingModel(ServeConfig c, Path file, Path demoFile, UnaryOperator<Backend> backendDecorator) {
        this.name = c.servedModelName();
        this.description = demoFile == null ? null : "demo, random weights";
        this.demoFile = demoFile;
        this.model = CpuModel.open(file);
        try {
            ModelConfig mc = model.config();
            this.pool = new ComputePool(new ComputePool.Config(c.threads()));
            int bs = c.blockSize();
            this.blockSize = bs;
            long bytesPerBlock = 2L * mc.layers() * mc.kvHeads() * bs * mc.headDim() * KvPrecision.F16.bytes();
            long wanted = c.kvCacheBytes() > 0 ? c.kvCacheBytes()
                    : Math.min(KV_DEFAULT_CAP, bytesPerBlock * ((long) c.maxNumSeqs() * ceilDiv(mc.contextLength(), bs) + 1));
            this.numBlocks = (int) Math.max(2, Math.min(Integer.MAX_VALUE, wanted / bytesPerBlock));
            this.kvBytes = bytesPerBlock * numBlocks;
            this.maxModelLen = (int) Math.min(mc.contextLength(), (long) (numBlocks - 1) * bs);
            RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
            EngineConfig ec = new EngineConfig(c.maxNumSeqs(), c.maxNumBatchedTokens(), c.maxWaiting(), maxModelLen,
                    numBlocks, bs, 0.01, true, true);
            Backend backend = new CpuBackend(model.forward(Kernels.provider(), runner, maxModelLen),
                    new KvStorage(mc, numBlocks, bs, KvPrecision.F16));
            this.engine = new InflightEngine(ec, backendDecorator.apply(backend), model.tokenizer());
            this.template = c.chatTemplate() != null ? ChatTemplates.named(c.chatTemplate())
                    : model.chatTemplate().orElse(demoFile != null ? ChatTemplate.builtin("chatml") : null);
        } catch (RuntimeException e) {
            model.close();
            throw e;
        }
    }

    /** Opens {@code c.model()}, or writes the demo model to a temporary file first. */
    static ServingModel open(ServeConfig c) {
        return open(c, UnaryOperator.identity());
    }

    /**
     * As {@link #open(ServeConfig)}, with the engine running {@code backendDecorator} applied to the
     * CPU backend (tests put a failing backend under a real server this way).
     */
    static ServingModel open(ServeConfig c, UnaryOperator<Backend> backendDecorator) {
        if (c.model() != null) {
            return new ServingModel(c, c.model(), null, backendDecorator);
        }
        try {
            Path demo = Files.createTempFile("nereid-demo-", ".gguf");
            RandomModelWriter.write(DEMO, demo);
            return new ServingModel(c, demo, demo, backendDecorator);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the demo model: " + e.getMessage(), e);
        }
    }

    String summary() {
        ModelConfig mc = model.config();
        return String.format("model '%s'%s: %s, %d layers, dim %d, vocab %d; max_model_len %d; KV cache %d blocks of %d"
                + " tokens (f16, %.1f MiB); chat template: %s", name, description == null ? "" : " (" + description + ")",
                mc.architecture(), mc.layers(), mc.dim(), mc.vocabSize(), maxModelLen, numBlocks - 1, blockSize,
                kvBytes / (1024.0 * 1024.0), template == null ? "none (chat completions answer 400)" : "yes");
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public long created() {
        return created;
    }

    @Override
    public int maxModelLen() {
        return maxModelLen;
    }

    @Override
    public Engine engine() {
        return engine;
    }

    @Override
    public boolean hasChatTemplate() {
        return template != null;
    }

    @Override
    public String renderChat(List<Map<String, Object>> messages, boolean addGenerationPrompt) {
        if (addGenerationPrompt) {
            return ChatTemplates.renderForGeneration(template, messages, model.tokenizer());
        }
        Tokenizer t = model.tokenizer();
        SpecialTokens sp = t.specialTokens();
        return template.render(new ChatRequestContext(messages, null, false, sp.bos() >= 0 ? t.piece(sp.bos()) : null,
                sp.eos() >= 0 ? t.piece(sp.eos()) : null, Map.of(), null));
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial) {
        return model.tokenizer().encode(text, addSpecial, true);
    }

    @Override
    public String detokenize(int[] ids) {
        return model.tokenizer().decode(ids);
    }

    @Override
    public int[] textOffsets(int[] ids, boolean skipSpecial, int limit) {
        IncrementalDetokenizer text = new IncrementalDetokenizer(model.tokenizer(), skipSpecial);
        int[] offsets = new int[ids.length];
        int chars = 0;
        for (int i = 0; i < ids.length; i++) {
            offsets[i] = Math.min(chars, limit);
            chars += text.push(ids[i]).length();
        }
        return offsets;
    }

    @Override
    public byte[] tokenBytes(int id) {
        return model.tokenizer().tokenBytes(id);
    }

    @Override
    public int vocabSize() {
        return model.tokenizer().vocabSize();
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public int numKvBlocks() {
        return numBlocks;
    }

    @Override
    public void close() {
        engine.close();
        pool.close();
        model.close();
        if (demoFile != null) {
            try {
                Files.deleteIfExists(demoFile);
            } catch (IOException ignored) {
                // a temp file left behind is harmless
            }
        }
    }
}
