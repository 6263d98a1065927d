package io.nereid.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.engine.api.EngineSpec;
import io.nereid.engine.api.SpeculativeConfig;
import io.nereid.engine.api.ToolCallFormat;
import io.nereid.gateway.http.ApiException;
import io.nereid.gateway.http.ModelRepository;
import io.nereid.gateway.http.ModelService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The model repository of {@code bin/nereid serve --model-repository DIR}: one folder per model,
 * its name the served name, holding a GGUF file or a Hugging Face model directory (the folder
 * itself, or one folder in it) and optionally {@value #SETTINGS}, whose keys replace the server's
 * flags for that model:
 *
 * <pre>
 *   model                    the GGUF file or HF directory, relative to the folder (when it holds several)
 *   max_model_len            --max-model-len
 *   kv_cache_memory          --kv-cache-memory ("64MiB", or bytes)
 *   max_num_seqs, max_num_batched_tokens, max_waiting
 *   chat_template            a built-in name, or a .jinja file (relative to the folder)
 *   tool_call_parser, reasoning_parser
 *   speculative_config       --speculative-config (an object, or its JSON text)
 *   task                     --task (auto, generate, embed)
 * </pre>
 *
 * Each loaded model runs its own engine with its own KV cache; together they stay within the
 * memory limit: a model counts its files' bytes (the weights as mapped) plus its KV cache, a load
 * is refused before it starts when its files and asked-for KV cache would not fit, and after it
 * when the KV cache it got does not; closing the model gives its share back. Thread-safe.
 */
final class ModelCatalog implements ModelRepository {

    static final String SETTINGS = "nereid.json";
    static final Set<String> KEYS = Set.of("model", "max_model_len", "kv_cache_memory", "max_num_seqs",
            "max_num_batched_tokens", "max_waiting", "chat_template", "tool_call_parser", "reasoning_parser",
            "speculative_config", "task");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ServeConfig base;
    private final Path dir;
    private final UnaryOperator<EngineSpec> engineSpec;
    private final long limit;
    /** What each loaded (or loading) copy of a model takes, by copy: two copies of one name never share an entry. */
    private final Map<Reservation, Long> reserved = new LinkedHashMap<>();   // guarded by this

    private record Reservation(String name, long serial) {
    }

    private long serial;   // guarded by this

    /** @param engineSpec adjusts each model's engine spec (identity but in tests) */
    ModelCatalog(ServeConfig base, UnaryOperator<EngineSpec> engineSpec) {
        if (base.repository() == null) {
            throw new IllegalArgumentException("no --model-repository");
        }
        this.base = base;
        this.dir = base.repository().dir();
        this.engineSpec = engineSpec;
        this.limit = base.memoryLimit() > 0 ? base.memoryLimit() : defaultLimit();
    }

    /** 80 % of physical memory. */
    static long defaultLimit() {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        return os.getTotalMemorySize() / 10 * 8;
    }

    long limit() {
        return limit;
    }

    @Override
    public List<String> names() {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .filter(n -> NAME.matcher(n).matches()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the model repository " + dir + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean explicitControl() {
        return base.repository().explicit();
    }

    @Override
    public Duration drainTimeout() {
        return base.drainTimeout();
    }

    @Override
    public ModelService load(String name) {
        ServeConfig c = configFor(name);
        long weights = fileBytes(c.model());
        Reservation r = reserve(name, weights + c.kvCacheBytes(), weights, 0, c.kvCacheBytes(), null);
        ServingModel m;
        try {
            m = ServingModel.open(c, engineSpec);
        } catch (RuntimeException | Error e) {
            release(r);
            throw failed(name, String.valueOf(e.getMessage()));
        }
        try {
            // what it got, in its place: the files, the copies the backend made of weights, the KV cache
            reserve(name, weights + m.weightCopyBytes() + m.kvCacheBytes(), weights, m.weightCopyBytes(),
                    m.kvCacheBytes(), r);
        } catch (ApiException e) {
            m.close();
            release(r);
            throw e;
        }
        m.onClose(() -> release(r));
        return m;
    }

    private static ApiException failed(String name, String why) {
        return new ApiException(400, "invalid_request_error", "model", "model_load_failed", "model '" + name
                + "' did not load: " + why, 0);
    }

    /**
     * Reserves {@code bytes} for a copy of {@code name} ({@code replacing} its earlier reservation, or
     * null for a new copy).
     *
     * @throws ApiException 400 naming the figures when {@code bytes} more would pass the limit (the
     *                      earlier reservation, if any, stays)
     */
    private synchronized Reservation reserve(String name, long bytes, long weights, long copies, long kv,
            Reservation replacing) {
        long used = reserved.entrySet().stream().filter(e -> !e.getKey().equals(replacing))
                .mapToLong(Map.Entry::getValue).sum();
        if (used + bytes > limit) {
            List<String> others = new ArrayList<>();
            reserved.forEach((n, b) -> {
                if (!n.equals(replacing)) {
                    others.add(n.name() + " " + mib(b));
                }
            });
            throw new ApiException(400, "invalid_request_error", "model", "model_does_not_fit", String.format(Locale.ROOT,
                    "model '%s' does not fit the memory limit: it needs %s (weights %s as its files hold them%s, KV"
                            + " cache %s) and %s of the %s limit (--memory-limit) %s", name, mib(bytes), mib(weights),
                    copies > 0 ? " plus " + mib(copies) + " repacked for the CPU kernels" : "",
                    kv > 0 ? mib(kv) : "not yet sized", mib(used), mib(limit),
                    others.isEmpty() ? "are in use" : "are taken by " + String.join(", ", others)), 0);
        }
        Reservation r = replacing != null ? replacing : new Reservation(name, ++serial);
        reserved.put(r, bytes);
        return r;
    }

    private synchronized void release(Reservation r) {
        reserved.remove(r);
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
    }

    /** A GGUF file's size, or the sum of an HF directory's safetensors. */
    static long fileBytes(Path model) {
        try {
            if (Files.isDirectory(model)) {
                try (Stream<Path> files = Files.list(model)) {
                    long sum = 0;
                    for (Path p : files.filter(p -> p.getFileName().toString().endsWith(".safetensors")).toList()) {
                        sum += Files.size(p);
                    }
                    return sum;
                }
            }
            return Files.size(model);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Model {@code name}'s configuration: the server's, with its folder's model and settings. */
    ServeConfig configFor(String name) {
        Path folder = NAME.matcher(name).matches() ? dir.resolve(name) : null;
        if (folder == null || !Files.isDirectory(folder)) {
            throw new ApiException(404, "not_found", "model", "model_not_found", "the model repository has no model '"
                    + name + "'", 0);
        }
        JsonNode settings = settings(name, folder);
        try {
            Path model = settings.hasNonNull("model") ? inside(folder, settings.get("model").asText(), "model")
                    : findModel(folder);
            String template = text(settings, "chat_template");
            if (template != null && Files.isRegularFile(folder.resolve(template))) {
                template = inside(folder, template, "chat_template").toString();
            }
            JsonNode spec = settings.get("speculative_config");
            SpeculativeConfig speculative = spec == null || spec.isNull() ? base.speculative()
                    : ServeConfig.adaptive(ServeConfig.speculative(spec.isTextual() ? spec.asText() : spec.toString()),
                            base.speculativeAdaptive());
            String tools = text(settings, "tool_call_parser");
            ToolCallFormat toolFormat = tools == null ? base.toolCallParser() : ServeConfig.toolCallParser(tools);
            String reasoning = text(settings, "reasoning_parser");
            JsonNode kv = settings.get("kv_cache_memory");
            long kvBytes = kv == null ? base.kvCacheBytes()
                    : kv.isIntegralNumber() ? kv.asLong() : ServeConfig.bytes(kv.asText(), "kv_cache_memory");
            if (kvBytes < 0) {
                throw new IllegalArgumentException("'kv_cache_memory' must not be negative");
            }
            return base.forModel(model, name, integer(settings, "max_num_seqs", base.maxNumSeqs()),
                    integer(settings, "max_num_batched_tokens", base.maxNumBatchedTokens()),
                    integer(settings, "max_waiting", base.maxWaiting()), kvBytes,
                    template == null ? base.chatTemplate() : template, speculative, toolFormat,
                    reasoning == null ? base.reasoningParser() : ServeConfig.reasoningParser(reasoning),
                    integer(settings, "max_model_len", base.maxModelLen()),
                    text(settings, "task") == null ? base.task() : text(settings, "task"));
        } catch (IllegalArgumentException e) {
            throw failed(name, folder.resolve(SETTINGS) + ": " + e.getMessage());
        }
    }

    private static JsonNode settings(String name, Path folder) {
        Path file = folder.resolve(SETTINGS);
        if (!Files.exists(file)) {
            return JSON.createObjectNode();
        }
        JsonNode s;
        try {
            s = JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw failed(name, file + " is not valid JSON: " + e.getMessage());
        }
        if (s == null || !s.isObject()) {
            throw failed(name, file + " must hold a JSON object");
        }
        List<String> unknown = new ArrayList<>();
        s.fieldNames().forEachRemaining(k -> {
            if (!KEYS.contains(k)) {
                unknown.add(k);
            }
        });
        if (!unknown.isEmpty()) {
            throw failed(name, file + ": unknown key" + (unknown.size() > 1 ? "s " : " ") + String.join(", ", unknown)
                    + " (known: " + String.join(", ", KEYS.stream().sorted().toList()) + ")");
        }
        return s;
    }

    /** The one GGUF file in the folder, or the folder (or its one subfolder) as an HF model directory. */
    private static Path findModel(Path folder) {
        List<Path> entries;
        try (Stream<Path> list = Files.list(folder)) {
            entries = list.sorted().toList();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot list " + folder + ": " + e.getMessage());
        }
        List<Path> gguf = entries.stream().filter(p -> p.getFileName().toString().endsWith(".gguf")).toList();
        if (gguf.size() == 1) {
            return gguf.getFirst();
        }
        if (gguf.size() > 1) {
            throw new IllegalArgumentException(folder + " holds " + gguf.size() + " GGUF files; name one as 'model' in "
                    + SETTINGS);
        }
        if (isHf(folder)) {
            return folder;
        }
        List<Path> hf = entries.stream().filter(ModelCatalog::isHf).toList();
        if (hf.size() == 1) {
            return hf.getFirst();
        }
        throw new IllegalArgumentException(folder + " holds no GGUF file and no Hugging Face model directory"
                + " (config.json with *.safetensors)");
    }

    private static boolean isHf(Path p) {
        if (!Files.isDirectory(p) || !Files.isRegularFile(p.resolve("config.json"))) {
            return false;
        }
        try (Stream<Path> list = Files.list(p)) {
            return list.anyMatch(f -> f.getFileName().toString().endsWith(".safetensors"));
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code relative} resolved in {@code folder}; it must exist and stay inside it. */
    private static Path inside(Path folder, String relative, String key) {
        Path p = folder.resolve(relative).normalize();
        if (!p.startsWith(folder.normalize()) || !Files.exists(p)) {
            throw new IllegalArgumentException("'" + key + "' must name a file or folder inside " + folder + ", got '"
                    + relative + "'");
        }
        return p;
    }

    private static String text(JsonNode s, String key) {
        JsonNode v = s.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("'" + key + "' must be a string");
        }
        return v.asText();
    }

    private static int integer(JsonNode s, String key, int fallback) {
        JsonNode v = s.get(key);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber() || v.asInt() < 0) {
            throw new IllegalArgumentException("'" + key + "' must be a non-negative integer, got " + v);
        }
        return v.asInt();
    }
}
