package io.nereid.gateway;

import io.nereid.engine.api.Engine;
import io.nereid.engine.api.EngineSpec;
import io.nereid.engine.api.Engines;
import io.nereid.engine.api.LoadedModel;
import io.nereid.engine.template.ChatRequestContext;
import io.nereid.engine.api.ToolCallFormat;
import io.nereid.engine.template.ChatTemplate;
import io.nereid.engine.template.ChatTemplates;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.tokenizer.SpecialTokens;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.gateway.http.ModelService;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The model being served, as the HTTP layer sees it: an engine assembled by {@link Engines#open}
 * from a {@link ServeConfig}, the chat template in use and the text front end (tokenizer,
 * detokenizer). {@link #close} stops the engine (in-flight requests finish as cancelled) and frees
 * the model. {@link #renderChat} and {@link #tokenize} are thread-safe and may block (worker pool only).
 */
final class ServingModel implements ModelService, AutoCloseable {

    private final String name;
    private final LoadedModel loaded;
    private final ChatTemplate template;
    private final ToolCallFormat toolCalls;
    private final String reasoning;
    private final io.nereid.engine.api.EmbeddingSpec embedding;
    private final long created = System.currentTimeMillis() / 1000;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile Runnable onClose = () -> { };

    private ServingModel(String name, LoadedModel loaded, ChatTemplate template, ToolCallFormat toolCalls, String reasoning,
            io.nereid.engine.api.EmbeddingSpec embedding) {
        this.reasoning = reasoning;
        this.embedding = embedding;
        this.name = name;
        this.loaded = loaded;
        this.template = template;
        this.toolCalls = toolCalls;
    }

    /** Opens {@code c.model()}, or the generated demo model when there is none. */
    static ServingModel open(ServeConfig c) {
        return open(c, UnaryOperator.identity());
    }

    /** As {@link #open(ServeConfig)}, with the engine spec adjusted by {@code spec} first (tests put a failing backend in). */
    static ServingModel open(ServeConfig c, UnaryOperator<EngineSpec> spec) {
        LoadedModel loaded = Engines.open(spec.apply(c.engineSpec()));
        try {
            ChatTemplate template = c.chatTemplate() != null ? ChatTemplates.named(c.chatTemplate())
                    : loaded.chatTemplate().orElse(loaded.demo() ? ChatTemplate.builtin("chatml") : null);
            ToolCallFormat tools = c.toolCallParser() != null ? c.toolCallParser()
                    : template == null ? null : ToolCallFormat.detect(template.source());
            io.nereid.engine.api.EmbeddingSpec embedding = switch (c.task()) {
                case "embed" -> loaded.embedding().orElse(io.nereid.engine.api.EmbeddingSpec.DECODER_DEFAULT);
                case "generate" -> null;
                default -> loaded.embedding().orElse(null);
            };
            return new ServingModel(c.servedModelName(), loaded, template, tools, c.reasoningParser(), embedding);
        } catch (RuntimeException e) {
            loaded.close();
            throw e;
        }
    }

    String summary() {
        LoadedModel.ModelInfo m = loaded.info();
        LoadedModel.KvCacheInfo kv = loaded.kvCache();
        return String.format("model '%s'%s: %s, %d layers, dim %d, vocab %d; max_model_len %d; KV cache %d blocks of %d"
                + " tokens (%s, %.1f MiB); chat template: %s%s", name, description() == null ? "" : " (" + description() + ")",
                m.architecture(), m.layers(), m.dim(), m.vocabSize(), loaded.maxModelLen(), kv.blocks() - 1, kv.blockSize(),
                kv.precision(), kv.bytes() / (1024.0 * 1024.0), template == null ? "none (chat completions answer 400)" : "yes",
                embedding == null ? "" : "; embeddings: " + embedding.pooling().name().toLowerCase(java.util.Locale.ROOT)
                        + " pooling" + (embedding.normalize() ? ", normalised" : ""));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return loaded.demo() ? "demo, random weights" : null;
    }

    @Override
    public long created() {
        return created;
    }

    @Override
    public int maxModelLen() {
        return loaded.maxModelLen();
    }

    @Override
    public Engine engine() {
        return loaded.engine();
    }

    @Override
    public boolean hasChatTemplate() {
        return template != null;
    }

    @Override
    public String renderChat(List<Map<String, Object>> messages, boolean addGenerationPrompt, List<Map<String, Object>> tools,
            Map<String, Object> kwargs) {
        Tokenizer t = loaded.tokenizer();
        SpecialTokens sp = t.specialTokens();
        if (toolCalls == ToolCallFormat.MISTRAL) {
            messages = lastNineOfIds(messages);
        }
        return template.render(new ChatRequestContext(messages, tools, addGenerationPrompt,
                sp.bos() >= 0 ? t.piece(sp.bos()) : null, sp.eos() >= 0 ? t.piece(sp.eos()) : null, kwargs, null));
    }

    /**
     * The history with every tool-call id cut to its last 9 characters, as vLLM does for Mistral:
     * Mistral's templates take back only 9-character ids, and clients keep ids of other shapes
     * ({@code call_…} from OpenAI-style histories). Ours for Mistral are 9 characters already.
     */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> lastNineOfIds(List<Map<String, Object>> messages) {
        List<Map<String, Object>> out = new java.util.ArrayList<>(messages.size());
        for (Map<String, Object> m : messages) {
            Map<String, Object> copy = new java.util.LinkedHashMap<>(m);
            if (copy.get("tool_call_id") instanceof String id) {
                copy.put("tool_call_id", lastNine(id));
            }
            if (copy.get("tool_calls") instanceof List<?> calls) {
                List<Object> cut = new java.util.ArrayList<>(calls.size());
                for (Object c : calls) {
                    if (c instanceof Map<?, ?> call && call.get("id") instanceof String id) {
                        Map<String, Object> cc = new java.util.LinkedHashMap<>((Map<String, Object>) call);
                        cc.put("id", lastNine(id));
                        cut.add(cc);
                    } else {
                        cut.add(c);
                    }
                }
                copy.put("tool_calls", cut);
            }
            out.add(copy);
        }
        return out;
    }

    private static String lastNine(String id) {
        return id.length() > 9 ? id.substring(id.length() - 9) : id;
    }

    @Override
    public ToolCallFormat toolCallFormat() {
        return toolCalls;
    }

    @Override
    public String reasoningParser() {
        return reasoning;
    }

    @Override
    public int[] tokenize(String text, boolean addSpecial) {
        return loaded.tokenizer().encode(text, addSpecial, true);
    }

    @Override
    public String detokenize(int[] ids) {
        return loaded.tokenizer().decode(ids);
    }

    @Override
    public int[] textOffsets(int[] ids, boolean skipSpecial, int limit) {
        IncrementalDetokenizer text = new IncrementalDetokenizer(loaded.tokenizer(), skipSpecial);
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
        return loaded.tokenizer().tokenBytes(id);
    }

    @Override
    public io.nereid.engine.api.EmbeddingSpec embedding() {
        return embedding;
    }

    @Override
    public int hiddenSize() {
        return loaded.info().dim();
    }

    @Override
    public int vocabSize() {
        return loaded.tokenizer().vocabSize();
    }

    @Override
    public int blockSize() {
        return loaded.kvCache().blockSize();
    }

    @Override
    public int numKvBlocks() {
        return loaded.kvCache().blocks();
    }

    /** The KV cache's bytes, and {@code release} to run once this model is closed (a repository's memory accounting). */
    long kvCacheBytes() {
        return loaded.kvCache().bytes();
    }

    /** Memory the backend took for weight copies beyond the files (repacked K-quants on the CPU). */
    long weightCopyBytes() {
        return loaded.weightCopyBytes();
    }

    void onClose(Runnable release) {
        this.onClose = release;
    }

    /** Stops the engine and frees the model (once; later calls do nothing). */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                loaded.close();
            } finally {
                onClose.run();
            }
        }
    }
}
