package io.nereid.engine.model;

import io.nereid.engine.cpu.tensor.Quantizer;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufMetadata;
import io.nereid.engine.gguf.GgufValueType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Which type each tensor of a model gets when llama.cpp b4748's {@code llama-quantize} writes it as
 * a {@link LlamaFileType}, without an importance matrix and without per-tensor overrides: a port of
 * {@code llama_model_quantize_impl}'s "is this tensor quantized?" test and of
 * {@code llama_tensor_get_type} ({@code src/llama-quant.cpp}), for the file types offered here.
 *
 * <p>What the mix does for them (unless {@code --pure}, which gives every quantized tensor the base
 * type): {@code output.weight}, or {@code token_embd.weight} when the model has no separate
 * output, becomes Q6_K (Q8_0 stays Q8_0; Q8_0 also for Falcon or rows that are not whole blocks
 * of the base type); for Q4_K_M / Q5_K_M, {@code attn_v} and {@code ffn_down} of the layers that
 * {@link #useMoreBits} picks (the first and last eighth and every third in between) become Q6_K;
 * Q4_K_S gives the first four {@code attn_v} and the first eighth of {@code ffn_down} Q5_K; fused
 * {@code attn_qkv} moves up one K type for the _M types; 8-expert models get Q8_0 {@code attn_v} /
 * {@code attn_k}; the 70B llama / qwen2 get Q5_K {@code attn_v} for Q4_K. A K type whose block
 * does not divide the rows falls back to Q5_0 (Q4_K), Q5_1 (Q5_K) or Q8_0 (Q6_K), then F16.
 *
 * <p>Not thread-safe, and stateful as the original: {@code attn_v} and {@code ffn_down} tensors are
 * counted as they are met, so one instance serves one file and {@link #typeOf} must be called
 * once per tensor, in {@link #FILE_ORDER}.
 */
final class QuantizationMix {

    /**
     * The order llama-quantize writes tensors in (its loader's {@code weight_name_comparer}): by
     * the layer number of {@code blk.N.}, tensors outside the blocks (-1) first, then by name
     * (bytes, unsigned).
     */
    static final Comparator<String> FILE_ORDER = Comparator.comparingInt(QuantizationMix::layerOf)
            .thenComparing((a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8),
                    b.getBytes(StandardCharsets.UTF_8)));

    /** Name fragments of 2-D weights llama-quantize never quantizes (Mamba, RWKV, T5, MoE gates). */
    private static final List<String> NEVER_QUANTIZED = List.of("_norm.weight", "ffn_gate_inp.weight",
            "ssm_conv1d.weight", "time_mix_first.weight", "time_mix_w1.weight", "time_mix_w2.weight",
            "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
            "attn_rel_b.weight");

    /** Whole names never quantized: BERT's positional embeddings and token types. */
    private static final Set<String> NEVER_QUANTIZED_NAMES = Set.of("position_embd.weight", "token_types.weight");

    private final LlamaFileType ftype;
    private final boolean pure;
    private final String architecture;
    private final int nLayer;
    private final int nExpert;
    private final boolean is70B;
    private final boolean hasOutput;
    private final int nAttentionWv;
    private int iAttentionWv;
    private int iFfnDown;
    private int iFfnGate;
    private int iFfnUp;

    /**
     * @param metadata the input file's metadata ({@code general.architecture} and its
     *     {@code block_count}, {@code attention.head_count[_kv]}, {@code expert_count})
     * @param tensorNames every tensor of the file
     */
    QuantizationMix(LlamaFileType ftype, boolean pure, GgufMetadata metadata, List<String> tensorNames) {
        this.ftype = ftype;
        this.pure = pure;
        this.architecture = metadata.findString("general.architecture").orElse("");
        String a = architecture + ".";
        this.nLayer = (int) first(metadata, a + "block_count");
        if (nLayer <= 0 && !pure && ftype.baseType().isQuantized()) {
            throw new IllegalArgumentException("metadata has no " + a + "block_count, which the " + ftype
                    + " type mix needs (--pure does without)");
        }
        this.nExpert = (int) first(metadata, a + "expert_count");
        long nHead = first(metadata, a + "attention.head_count");
        long nHeadKv = metadata.contains(a + "attention.head_count_kv") ? first(metadata, a + "attention.head_count_kv")
                : nHead;
        // llama-model.cpp's LLM_TYPE_70B, for the architectures served here that have one
        this.is70B = nLayer == 80 && (architecture.equals("qwen2")
                || architecture.equals("llama") && nExpert != 8 && nHead != nHeadKv);
        this.hasOutput = tensorNames.contains("output.weight");
        this.nAttentionWv = (int) tensorNames.stream()
                .filter(n -> n.contains("attn_v.weight") || n.contains("attn_qkv.weight") || n.contains("attn_kv_b.weight"))
                .count();
    }

    /**
     * The type {@code name} is written in; {@code current} (its type in the input) when it is
     * copied unchanged.
     *
     * @param dims GGUF order, {@code dims[0]} the row length
     * @throws IllegalArgumentException naming the tensor, if its rows are not whole blocks of the
     *     chosen type and llama.cpp has no fallback for it, or the fallback cannot be written here
     */
    GgmlType typeOf(String name, long[] dims, GgmlType current) {
        if (!quantized(name, dims)) {
            return current;
        }
        GgmlType type = ftype.baseType();
        if (!pure && type.isQuantized()) {
            type = fallback(name, dims[0], mixed(name, dims[0], type));
        } else if (dims[0] % type.blockSize() != 0) {
            throw new IllegalArgumentException("tensor " + name + ": rows of " + dims[0] + " values are not a whole"
                    + " number of " + type + " blocks of " + type.blockSize() + " (llama.cpp has no fallback with --pure)");
        }
        return type;
    }

    /** llama-quantize's test: a weight of at least two dimensions that is not a norm or one of the exceptions. */
    static boolean quantized(String name, long[] dims) {
        return name.endsWith("weight") && nDims(dims) >= 2 && NEVER_QUANTIZED_NAMES.stream().noneMatch(name::equals)
                && NEVER_QUANTIZED.stream().noneMatch(name::contains);
    }

    /** llama_tensor_get_type's choice before the block-size check. */
    private GgmlType mixed(String name, long rowLength, GgmlType type) {
        boolean falcon = architecture.equals("falcon");
        boolean kM = ftype == LlamaFileType.Q4_K_M || ftype == LlamaFileType.Q5_K_M;
        if (name.equals("output.weight") || !hasOutput && name.equals("token_embd.weight")) {
            if (falcon || rowLength % type.blockSize() != 0) {
                return GgmlType.Q8_0;
            }
            return type != GgmlType.Q8_0 ? GgmlType.Q6_K : type;
        } else if (name.equals("token_embd.weight")) {
            return type; // only the IQ and TQ file types change it
        } else if (name.contains("attn_v.weight")) {
            if (kM && useMoreBits(iAttentionWv, nAttentionWv)) {
                type = GgmlType.Q6_K;
            } else if (ftype == LlamaFileType.Q4_K_S && iAttentionWv < 4) {
                type = GgmlType.Q5_K;
            }
            if (is70B && type == GgmlType.Q4_K) { // (or Q3_K, not offered here)
                type = GgmlType.Q5_K;
            }
            if (nExpert == 8) {
                type = GgmlType.Q8_0;
            }
            iAttentionWv++;
        } else if (name.contains("attn_k.weight")) {
            if (nExpert == 8) {
                type = GgmlType.Q8_0;
            }
        } else if (name.contains("attn_q.weight")) {
            return type; // only the IQ3 file types change it
        } else if (name.contains("ffn_down")) {
            int layer = layer(iFfnDown, name);
            if (ftype == LlamaFileType.Q4_K_M) {
                if (falcon) {
                    type = layer < nLayer / 16 ? GgmlType.Q6_K
                            : useMoreBits(layer, nLayer) ? GgmlType.Q5_K : GgmlType.Q4_K;
                } else if (useMoreBits(layer, nLayer)) {
                    type = GgmlType.Q6_K;
                }
            } else if (ftype == LlamaFileType.Q5_K_M && useMoreBits(layer, nLayer)) {
                type = GgmlType.Q6_K;
            } else if (ftype == LlamaFileType.Q4_K_S && !falcon && layer < nLayer / 8) {
                type = GgmlType.Q5_K;
            }
            iFfnDown++;
        } else if (name.contains("attn_output.weight")) {
            if (!falcon && nExpert == 8 && (ftype == LlamaFileType.Q4_K_S || ftype == LlamaFileType.Q4_K_M)) {
                type = GgmlType.Q5_K;
            }
        } else if (name.contains("attn_qkv.weight")) {
            if (ftype == LlamaFileType.Q4_K_M) {
                type = GgmlType.Q5_K;
            } else if (ftype == LlamaFileType.Q5_K_M) {
                type = GgmlType.Q6_K;
            }
        } else if (name.contains("ffn_gate")) {
            layer(iFfnGate++, name); // only the IQ3 file types use the layer; the check stays
        } else if (name.contains("ffn_up")) {
            layer(iFfnUp++, name);
        }
        return type;
    }

    /** llama_tensor_get_type's {@code convert_incompatible_tensor}. */
    private static GgmlType fallback(String name, long rowLength, GgmlType type) {
        if (rowLength % type.blockSize() == 0) {
            return type;
        }
        GgmlType fallback = switch (type) {
            case Q4_K -> GgmlType.Q5_0;
            case Q5_K -> GgmlType.Q5_1;
            case Q6_K -> GgmlType.Q8_0;
            default -> throw new IllegalArgumentException("tensor " + name + ": rows of " + rowLength
                    + " values are not a whole number of " + type + " blocks of " + type.blockSize()
                    + " (llama.cpp has no fallback for " + type + ")");
        };
        if (rowLength % fallback.blockSize() != 0) {
            fallback = GgmlType.F16;
        }
        if (!Quantizer.QUANTIZABLE.contains(fallback)) {
            throw new IllegalArgumentException("tensor " + name + ": rows of " + rowLength + " values are not a whole"
                    + " number of " + type + " blocks of " + type.blockSize() + "; llama.cpp falls back to " + fallback
                    + ", which cannot be written here (writable: " + Quantizer.QUANTIZABLE + ")");
        }
        return fallback;
    }

    /**
     * llama.cpp's {@code use_more_bits}: layer {@code i} of {@code n} is in the first or last
     * eighth, or every third layer in between.
     */
    static boolean useMoreBits(int i, int n) {
        return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
    }

    /**
     * {@code layer_info}: the counter for dense models; for mixtures of experts, whose expert
     * tensors are not in layer order, the {@code blk.N.} of the name.
     */
    private int layer(int counter, String name) {
        if (nExpert <= 1) {
            return counter;
        }
        int layer = layerOf(name);
        if (layer < 0 || layer >= nLayer) {
            throw new IllegalArgumentException("tensor " + name + ": no layer in [0, " + nLayer + ") in its name");
        }
        return layer;
    }

    /** N of a name {@code blk.N.…}, else -1 (as {@code sscanf(name, "blk.%d.")} leaves it). */
    static int layerOf(String name) {
        if (!name.startsWith("blk.")) {
            return -1;
        }
        int end = 4;
        while (end < name.length() && end < 13 && name.charAt(end) >= '0' && name.charAt(end) <= '9') {
            end++;
        }
        return end == 4 ? -1 : Integer.parseInt(name, 4, end, 10);
    }

    /** ggml_n_dims: dimensions up to the last one above 1, at least 1. */
    private static int nDims(long[] dims) {
        int n = dims.length;
        while (n > 1 && dims[n - 1] == 1) {
            n--;
        }
        return Math.max(n, 1);
    }

    /** An integer key, or the first element of a per-layer array; 0 when missing. */
    private static long first(GgufMetadata md, String key) {
        if (!md.contains(key)) {
            return 0;
        }
        if (md.type(key) == GgufValueType.ARRAY) {
            long[] values = md.getLongArray(key);
            return values.length == 0 ? 0 : values[0];
        }
        return md.getLong(key);
    }
}
