package io.nereid.engine.model;

import io.nereid.engine.cpu.tensor.Quantizer;
import io.nereid.engine.cpu.tensor.WeightMatrix;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.safetensors.SafetensorsDtype;
import io.nereid.engine.safetensors.SafetensorsWriter;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Test tool: writes a GGUF model (F32 / F16 / BF16 tensors) as a Hugging Face directory —
 * {@code config.json} from its metadata and safetensors shards under Hugging Face names, each
 * tensor in its own type. For a llama, the rows of Q and K are put back in Hugging Face order:
 * the inverse of llama.cpp {@code convert_hf_to_gguf.py}'s {@code LlamaModel.permute}
 * ({@code w.reshape(n_head, 2, dim // n_head // 2, *rest).swapaxes(1, 2).reshape(shape)}), which
 * maps Hugging Face row {@code (head, half s, pair j)} to GGUF row {@code (head, j, s)}.
 */
public final class GgufToHf {

    private GgufToHf() {
    }

    /**
     * @param shards    1 for {@code model.safetensors}, more for numbered shards and an index
     * @param unpermute false writes llama Q/K rows as the GGUF has them (for the negative control)
     */
    public static void convert(Path gguf, Path dir, int shards, boolean unpermute) throws IOException {
        Files.createDirectories(dir);
        try (GgufFile file = GgufFile.open(gguf)) {
            long vocab = file.tensor("token_embd.weight").dim(1);
            ModelConfig c = ModelConfig.fromGguf(file.metadata(), (int) vocab);
            boolean tied = file.findTensor("output.weight").isEmpty();
            Files.writeString(dir.resolve("config.json"), configJson(c, tied));
            List<SafetensorsWriter> writers = new ArrayList<>();
            for (int i = 0; i < shards; i++) {
                writers.add(new SafetensorsWriter().putMetadata("format", "pt"));
            }
            StringJoiner weightMap = new StringJoiner(",", "{\"metadata\":{},\"weight_map\":{", "}}");
            int n = 0;
            for (GgufTensorInfo t : file.tensors()) {
                String name = HfTensors.hfName(t.name()).orElse(null);
                if (name == null) {
                    continue;
                }
                boolean permuted = unpermute && c.architecture() == Architecture.LLAMA
                        && (t.name().endsWith("attn_q.weight") || t.name().endsWith("attn_k.weight"));
                int heads = t.name().endsWith("attn_q.weight") ? c.heads() : c.kvHeads();
                MemorySegment data = permuted ? unpermute(file, t, heads) : file.tensorData(t);
                int shard = n++ % shards;
                writers.get(shard).add(name, dtype(t.type()), hfShape(t.dims()), data);
                weightMap.add("\"" + name + "\":\"" + shardName(shard, shards) + "\"");
            }
            for (int i = 0; i < shards; i++) {
                writers.get(i).write(dir.resolve(shardName(i, shards)));
            }
            if (shards > 1) {
                Files.writeString(dir.resolve(HfTensors.INDEX), weightMap.toString());
            }
        }
    }

    static String shardName(int i, int shards) {
        return shards == 1 ? HfTensors.SINGLE : String.format("model-%05d-of-%05d.safetensors", i + 1, shards);
    }

    static String configJson(ModelConfig c, boolean tied) {
        return Map.ofEntries(
                Map.entry("model_type", "\"" + c.architecture().ggufName() + "\""),
                Map.entry("hidden_size", c.dim()), Map.entry("intermediate_size", c.ffnDim()),
                Map.entry("num_hidden_layers", c.layers()), Map.entry("num_attention_heads", c.heads()),
                Map.entry("num_key_value_heads", c.kvHeads()), Map.entry("head_dim", c.headDim()),
                Map.entry("rms_norm_eps", c.rmsEps()), Map.entry("rope_theta", c.ropeTheta()),
                Map.entry("max_position_embeddings", c.contextLength()), Map.entry("vocab_size", c.vocabSize()),
                Map.entry("tie_word_embeddings", tied), Map.entry("hidden_act", "\"silu\""),
                Map.entry("bos_token_id", 1), Map.entry("eos_token_id", 2))
                .entrySet().stream().map(e -> "\"" + e.getKey() + "\":" + e.getValue())
                .collect(java.util.stream.Collectors.joining(",", "{", "}"));
    }

    /** Hugging Face row {@code h*hd + s*hd/2 + j} is GGUF row {@code h*hd + 2j + s}. */
    private static MemorySegment unpermute(GgufFile file, GgufTensorInfo t, int heads) {
        WeightMatrix w = WeightMatrix.of(t.type(), t.dims(), file.tensorData(t));
        int headDim = w.rows() / heads;
        float[] out = new float[w.rows() * w.cols()];
        for (int h = 0; h < heads; h++) {
            for (int s = 0; s < 2; s++) {
                for (int j = 0; j < headDim / 2; j++) {
                    w.getRowInto(h * headDim + 2 * j + s, out, (h * headDim + s * headDim / 2 + j) * w.cols());
                }
            }
        }
        return MemorySegment.ofArray(Quantizer.quantize(t.type(), out));
    }

    private static SafetensorsDtype dtype(GgmlType type) {
        return switch (type) {
            case F32 -> SafetensorsDtype.F32;
            case F16 -> SafetensorsDtype.F16;
            case BF16 -> SafetensorsDtype.BF16;
            default -> throw new IllegalArgumentException(type + " has no safetensors dtype");
        };
    }

    private static long[] hfShape(long[] ggufDims) {
        long[] shape = new long[ggufDims.length];
        for (int i = 0; i < shape.length; i++) {
            shape[i] = ggufDims[ggufDims.length - 1 - i];
        }
        return shape;
    }
}
