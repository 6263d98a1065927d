package io.nereid.engine.model;

import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import io.nereid.engine.safetensors.SafetensorsException;
import io.nereid.engine.safetensors.SafetensorsFile;
import io.nereid.engine.safetensors.SafetensorsTensorInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The weights of a Hugging Face model directory: {@code model.safetensors}, or the shards that
 * {@code model.safetensors.index.json} names, memory-mapped, and offered under the GGUF names
 * {@link ModelWeights} asks for ({@code blk.3.attn_q.weight} is
 * {@code model.layers.3.self_attn.q_proj.weight}). Tensors are used as stored, unpermuted: a llama
 * from here runs with NeoX RoPE ({@link ModelConfig#neoxRope}).
 *
 * <p>Immutable after {@link #open}; {@link #close()} unmaps every shard.
 */
final class HfTensors implements TensorSource, AutoCloseable {

    static final String SINGLE = "model.safetensors";
    static final String INDEX = "model.safetensors.index.json";

    private static final Pattern LAYER = Pattern.compile("blk\\.(\\d+)\\.(.+)");
    /** GGUF per-layer suffix → Hugging Face suffix under {@code model.layers.N.}. */
    private static final Map<String, String> LAYER_NAMES = Map.ofEntries(
            Map.entry("attn_norm.weight", "input_layernorm.weight"),
            Map.entry("attn_q.weight", "self_attn.q_proj.weight"),
            Map.entry("attn_k.weight", "self_attn.k_proj.weight"),
            Map.entry("attn_v.weight", "self_attn.v_proj.weight"),
            Map.entry("attn_q.bias", "self_attn.q_proj.bias"),
            Map.entry("attn_k.bias", "self_attn.k_proj.bias"),
            Map.entry("attn_v.bias", "self_attn.v_proj.bias"),
            Map.entry("attn_output.weight", "self_attn.o_proj.weight"),
            Map.entry("attn_q_norm.weight", "self_attn.q_norm.weight"),
            Map.entry("attn_k_norm.weight", "self_attn.k_norm.weight"),
            Map.entry("ffn_norm.weight", "post_attention_layernorm.weight"),
            Map.entry("ffn_gate.weight", "mlp.gate_proj.weight"),
            Map.entry("ffn_up.weight", "mlp.up_proj.weight"),
            Map.entry("ffn_down.weight", "mlp.down_proj.weight"));
    private static final Map<String, String> TOP_NAMES = Map.of(
            "token_embd.weight", "model.embed_tokens.weight",
            "output_norm.weight", "model.norm.weight",
            "output.weight", "lm_head.weight");

    private final Path listing;   // what says which tensors exist: model.safetensors or the index
    private final List<SafetensorsFile> files;
    private final Map<String, SafetensorsFile> byName;   // HF tensor name → its shard
    private final boolean tiedEmbeddings;

    private HfTensors(Path listing, List<SafetensorsFile> files, Map<String, SafetensorsFile> byName,
            boolean tiedEmbeddings) {
        this.listing = listing;
        this.files = files;
        this.byName = byName;
        this.tiedEmbeddings = tiedEmbeddings;
    }

    /**
     * Opens the weights of {@code dir}.
     *
     * @param tiedEmbeddings {@code tie_word_embeddings}: {@code lm_head.weight} is not used (the
     *                       output projection is the embedding), and required when false
     * @throws ModelLoadException if there are no weights, the index is malformed or names a shard
     *                            or tensor that is not there, or a shard is not valid safetensors
     */
    static HfTensors open(Path dir, boolean tiedEmbeddings) {
        Optional<Map<String, String>> index = readIndex(dir);
        Map<String, SafetensorsFile> opened = new LinkedHashMap<>(); // shard file name → open file
        Map<String, SafetensorsFile> byName = new HashMap<>();
        try {
            if (index.isEmpty()) {
                SafetensorsFile f = SafetensorsFile.open(dir.resolve(SINGLE));
                opened.put(SINGLE, f);
                f.tensors().forEach(t -> byName.put(t.name(), f));
            } else {
                for (Map.Entry<String, String> e : index.get().entrySet()) {
                    SafetensorsFile f = opened.get(e.getValue());
                    if (f == null) {
                        f = SafetensorsFile.open(dir.resolve(e.getValue()));
                        opened.put(e.getValue(), f);
                    }
                    if (f.findTensor(e.getKey()).isEmpty()) {
                        throw new ModelLoadException(dir.resolve(INDEX) + ": names " + e.getValue() + " for tensor "
                                + e.getKey() + ", which that file does not hold");
                    }
                    byName.put(e.getKey(), f);
                }
            }
            HfTensors tensors = new HfTensors(dir.resolve(index.isEmpty() ? SINGLE : INDEX), List.copyOf(opened.values()),
                    Map.copyOf(byName), tiedEmbeddings);
            if (!tiedEmbeddings && !byName.containsKey("lm_head.weight")) {
                throw new ModelLoadException(tensors.describe("output.weight")
                        + " is missing (config.json tie_word_embeddings is false)");
            }
            return tensors;
        } catch (SafetensorsException e) {
            opened.values().forEach(SafetensorsFile::close);
            throw new ModelLoadException(e.getMessage(), e);
        } catch (RuntimeException e) {
            opened.values().forEach(SafetensorsFile::close);
            throw e;
        }
    }

    /**
     * Tensor name → shard file name from {@code model.safetensors.index.json}, or empty when the
     * directory has a single {@code model.safetensors} instead.
     */
    private static Optional<Map<String, String>> readIndex(Path dir) {
        Path index = dir.resolve(INDEX);
        if (!Files.isRegularFile(index)) {
            if (Files.isRegularFile(dir.resolve(SINGLE))) {
                return Optional.empty();
            }
            boolean pytorch = Files.exists(dir.resolve("pytorch_model.bin"))
                    || Files.exists(dir.resolve("pytorch_model.bin.index.json"));
            throw new ModelLoadException(dir + ": no " + SINGLE + " or " + INDEX
                    + (pytorch ? " (PyTorch .bin weights are not supported: convert them to safetensors)" : ""));
        }
        Map<String, Object> json;
        try {
            json = Json.parseObject(Files.readString(index, StandardCharsets.UTF_8));
        } catch (IOException | JsonException e) {
            throw new ModelLoadException(index + ": cannot be read: " + e.getMessage(), e);
        }
        if (!(json.get("weight_map") instanceof Map<?, ?> map) || map.isEmpty()) {
            throw new ModelLoadException(index + ": no \"weight_map\" object");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            // A shard is a plain file name in the directory: the index may not point elsewhere.
            if (!(e.getValue() instanceof String shard) || shard.isEmpty() || shard.contains("/") || shard.contains("\\")
                    || shard.equals("..") || !Files.isRegularFile(dir.resolve(shard))) {
                throw new ModelLoadException(index + ": tensor " + e.getKey() + " is in '" + e.getValue()
                        + "', which is not a file of " + dir);
            }
            out.put((String) e.getKey(), shard);
        }
        return Optional.of(out);
    }

    /**
     * The Hugging Face name of a GGUF tensor name ({@code blk.3.ffn_up.weight} is
     * {@code model.layers.3.mlp.up_proj.weight}), or empty if such a directory never stores it
     * ({@code rope_freqs.weight}: computed from config.json instead).
     */
    static Optional<String> hfName(String ggufName) {
        Matcher m = LAYER.matcher(ggufName);
        if (m.matches()) {
            return Optional.ofNullable(LAYER_NAMES.get(m.group(2))).map(s -> "model.layers." + m.group(1) + "." + s);
        }
        return Optional.ofNullable(TOP_NAMES.get(ggufName));
    }

    /** {@link #hfName}, except that a tied model has no output projection of its own. */
    private Optional<String> storedName(String ggufName) {
        return ggufName.equals("output.weight") && tiedEmbeddings ? Optional.empty() : hfName(ggufName);
    }

    @Override
    public Optional<Tensor> find(String ggufName) {
        Optional<String> name = storedName(ggufName);
        if (name.isEmpty() || !byName.containsKey(name.get())) {
            return Optional.empty();
        }
        SafetensorsFile f = byName.get(name.get());
        SafetensorsTensorInfo t = f.findTensor(name.get()).orElseThrow();
        var type = t.dtype().ggmlType().orElseThrow(() -> new ModelLoadException(f.path() + ": tensor " + t.name()
                + " has dtype " + t.dtype() + ", which the CPU backend does not compute with (supported: F32, F16, BF16)"));
        return Optional.of(new Tensor(type, t.ggufDims(), f.tensorData(t), Arrays.toString(t.shape())));
    }

    @Override
    public String describe(String ggufName) {
        String name = storedName(ggufName).orElse(ggufName);
        SafetensorsFile f = byName.get(name);
        return (f != null ? f.path() : listing) + ": tensor " + name;
    }

    @Override
    public String shape(long[] ggufDims) {
        long[] shape = new long[ggufDims.length];
        for (int i = 0; i < shape.length; i++) {
            shape[i] = ggufDims[ggufDims.length - 1 - i];
        }
        return Arrays.toString(shape);
    }

    @Override
    public void close() {
        files.forEach(SafetensorsFile::close);
    }
}
