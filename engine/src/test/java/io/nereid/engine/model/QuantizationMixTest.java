package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** llama.cpp b4748's per-tensor type choice ({@code llama_tensor_get_type}) on synthetic models. */
class QuantizationMixTest {

    private static final long[] MATRIX = {4096, 4096};

    @TempDir
    Path dir;

    @Test
    void useMoreBitsPicksTheFirstAndLastEighthAndEveryThirdLayerBetween() {
        List<Integer> picked = IntStream.range(0, 32).filter(i -> QuantizationMix.useMoreBits(i, 32)).boxed().toList();
        assertEquals(List.of(0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31), picked);
        assertEquals(List.of(2), IntStream.range(0, 3).filter(i -> QuantizationMix.useMoreBits(i, 3)).boxed().toList());
    }

    @Test
    void q4_K_MGivesQ6_KToOutputAndToAttnVAndFfnDownOfTheChosenLayers() throws IOException {
        Map<String, GgmlType> types = types(LlamaFileType.Q4_K_M, false, llama(32, 32, 8), true);
        assertEquals(GgmlType.Q6_K, types.get("output.weight"));
        assertEquals(GgmlType.Q4_K, types.get("token_embd.weight"));
        assertEquals(GgmlType.F32, types.get("output_norm.weight"));
        for (int i = 0; i < 32; i++) {
            GgmlType more = QuantizationMix.useMoreBits(i, 32) ? GgmlType.Q6_K : GgmlType.Q4_K;
            assertEquals(more, types.get("blk." + i + ".attn_v.weight"), "layer " + i);
            assertEquals(more, types.get("blk." + i + ".ffn_down.weight"), "layer " + i);
            for (String other : List.of("attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up")) {
                assertEquals(GgmlType.Q4_K, types.get("blk." + i + "." + other + ".weight"), other + " " + i);
            }
            assertEquals(GgmlType.F32, types.get("blk." + i + ".attn_norm.weight"));
        }
    }

    @Test
    void theSmallTypesAndPureFollowTheirOwnRules() throws IOException {
        Map<String, Object> md = llama(8, 32, 8);
        Map<String, GgmlType> q4ks = types(LlamaFileType.Q4_K_S, false, md, true);
        assertEquals(GgmlType.Q5_K, q4ks.get("blk.3.attn_v.weight"));
        assertEquals(GgmlType.Q4_K, q4ks.get("blk.4.attn_v.weight"), "only the first four attn_v");
        assertEquals(GgmlType.Q5_K, q4ks.get("blk.0.ffn_down.weight"), "the first eighth of ffn_down");
        assertEquals(GgmlType.Q4_K, q4ks.get("blk.1.ffn_down.weight"));
        Map<String, GgmlType> q5ks = types(LlamaFileType.Q5_K_S, false, md, true);
        assertEquals(GgmlType.Q6_K, q5ks.get("output.weight"));
        assertEquals(GgmlType.Q5_K, q5ks.get("blk.0.attn_v.weight"));
        assertEquals(GgmlType.Q6_K, types(LlamaFileType.Q4_0, false, md, true).get("output.weight"), "as llama.cpp");
        assertEquals(GgmlType.Q8_0, types(LlamaFileType.Q8_0, false, md, true).get("output.weight"));
        Map<String, GgmlType> pure = types(LlamaFileType.Q4_K_M, true, md, true);
        assertEquals(GgmlType.Q4_K, pure.get("output.weight"));
        assertEquals(GgmlType.Q4_K, pure.get("blk.0.attn_v.weight"));
        assertEquals(GgmlType.F32, pure.get("blk.0.ffn_norm.weight"));
        assertEquals(GgmlType.F16, types(LlamaFileType.F16, false, md, true).get("output.weight"));
    }

    @Test
    void withoutAnOutputMatrixTheTokenEmbeddingTakesTheOutputType() throws IOException {
        Map<String, GgmlType> tied = types(LlamaFileType.Q4_K_M, false, llama(4, 32, 8), false);
        assertFalse(tied.containsKey("output.weight"));
        assertEquals(GgmlType.Q6_K, tied.get("token_embd.weight"));
        assertEquals(GgmlType.Q8_0, types(LlamaFileType.Q8_0, false, llama(4, 32, 8), false).get("token_embd.weight"));
    }

    @Test
    void mixturesOfEightExpertsAnd70BModelsGetMoreBitsInAttention() throws IOException {
        Map<String, Object> moe = llama(32, 32, 8);
        moe.put("llama.expert_count", 8);
        Map<String, GgmlType> m = types(LlamaFileType.Q4_K_M, false, moe, true);
        assertEquals(GgmlType.Q8_0, m.get("blk.4.attn_v.weight"));
        assertEquals(GgmlType.Q8_0, m.get("blk.4.attn_k.weight"));
        assertEquals(GgmlType.Q5_K, m.get("blk.4.attn_output.weight"));
        Map<String, GgmlType> large = types(LlamaFileType.Q4_K_M, false, llama(80, 64, 8), true);
        assertEquals(GgmlType.Q5_K, large.get("blk.11.attn_v.weight"), "70B: Q4_K attn_v becomes Q5_K");
        assertEquals(GgmlType.Q6_K, large.get("blk.12.attn_v.weight"), "use_more_bits(12, 80)");
        assertEquals(GgmlType.Q4_K, types(LlamaFileType.Q4_K_M, false, llama(80, 64, 64), true)
                .get("blk.11.attn_v.weight"), "80 layers without GQA is llama's 65B");
    }

    @Test
    void expertTensorsTakeTheirLayerFromTheirName() throws IOException {
        Map<String, Object> moe = llama(8, 32, 8);
        moe.put("llama.expert_count", 4);
        QuantizationMix mix = new QuantizationMix(LlamaFileType.Q4_K_M, false, metadata(moe),
                List.of("blk.2.ffn_down_exps.weight", "blk.7.ffn_down_exps.weight"));
        long[] experts = {4096, 14336, 4};
        // a counter would say layer 0 (more bits) and then layer 1 (not)
        assertEquals(GgmlType.Q4_K, mix.typeOf("blk.2.ffn_down_exps.weight", experts, GgmlType.F16));
        assertEquals(GgmlType.Q6_K, mix.typeOf("blk.7.ffn_down_exps.weight", experts, GgmlType.F16), "last eighth");
    }

    @Test
    void rowsThatAreNotWholeBlocksFallBackAsInLlamaCppOrAreNamed() throws IOException {
        QuantizationMix q6 = mix(LlamaFileType.Q6_K, false);
        assertEquals(GgmlType.Q8_0, q6.typeOf("output.weight", new long[] {64, 512}, GgmlType.F32));
        assertEquals(GgmlType.Q8_0, q6.typeOf("blk.0.attn_q.weight", new long[] {64, 64}, GgmlType.F32));
        assertEquals(GgmlType.F16, q6.typeOf("blk.0.ffn_down.weight", new long[] {172, 64}, GgmlType.F32));
        QuantizationMix q4km = mix(LlamaFileType.Q4_K_M, false);
        assertEquals(GgmlType.F16, q4km.typeOf("blk.0.ffn_up.weight", new long[] {172, 64}, GgmlType.F32),
                "Q5_0 does not divide 172 either");
        var e = assertThrows(IllegalArgumentException.class,
                () -> q4km.typeOf("blk.0.attn_q.weight", new long[] {64, 64}, GgmlType.F32));
        assertTrue(e.getMessage().contains("blk.0.attn_q.weight") && e.getMessage().contains("Q5_0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> mix(LlamaFileType.Q5_K_M, false).typeOf("blk.0.attn_q.weight", new long[] {64, 64}, GgmlType.F32));
        assertTrue(e.getMessage().contains("Q5_1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> mix(LlamaFileType.Q8_0, false).typeOf("blk.0.ffn_down.weight", new long[] {172, 64}, GgmlType.F32));
        assertTrue(e.getMessage().contains("blk.0.ffn_down.weight") && e.getMessage().contains("no fallback"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> mix(LlamaFileType.Q4_K_M, true).typeOf("blk.0.attn_q.weight", new long[] {64, 64}, GgmlType.F32));
        assertTrue(e.getMessage().contains("--pure"), e.getMessage());
    }

    @Test
    void normsVectorsAndTheExceptionsAreNeverQuantized() {
        assertFalse(QuantizationMix.quantized("blk.0.attn_q.bias", new long[] {4096}));
        assertFalse(QuantizationMix.quantized("blk.0.attn_norm.weight", new long[] {4096, 1}), "trailing 1s do not count");
        assertFalse(QuantizationMix.quantized("blk.0.ffn_gate_inp.weight", new long[] {4096, 8}));
        assertFalse(QuantizationMix.quantized("position_embd.weight", MATRIX));
        assertFalse(QuantizationMix.quantized("blk.0.attn_q_norm.weight", new long[] {128, 2}));
        assertTrue(QuantizationMix.quantized("blk.0.ffn_down_exps.weight", new long[] {4096, 14336, 8}));
    }

    @Test
    void fileOrderIsByLayerThenName() {
        List<String> names = new ArrayList<>(List.of("blk.10.attn_q.weight", "token_embd.weight", "blk.2.ffn_up.weight",
                "blk.2.attn_v.weight", "output.weight", "output_norm.weight"));
        names.sort(QuantizationMix.FILE_ORDER);
        assertEquals(List.of("output.weight", "output_norm.weight", "token_embd.weight", "blk.2.attn_v.weight",
                "blk.2.ffn_up.weight", "blk.10.attn_q.weight"), names);
    }

    /** Every tensor of a llama model with {@code layers}, in file order, as the mix types it. */
    private Map<String, GgmlType> types(LlamaFileType type, boolean pure, Map<String, Object> md, boolean output)
            throws IOException {
        int layers = ((Number) md.get("llama.block_count")).intValue();
        List<String> names = new ArrayList<>(List.of("token_embd.weight", "output_norm.weight"));
        if (output) {
            names.add("output.weight");
        }
        for (int i = 0; i < layers; i++) {
            for (String t : List.of("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate",
                    "ffn_down", "ffn_up")) {
                names.add("blk." + i + "." + t + ".weight");
            }
        }
        names.sort(QuantizationMix.FILE_ORDER);
        QuantizationMix mix = new QuantizationMix(type, pure, metadata(md), names);
        Map<String, GgmlType> types = new LinkedHashMap<>();
        for (String name : names) {
            long[] dims = name.contains("norm") ? new long[] {4096} : MATRIX;
            types.put(name, mix.typeOf(name, dims, GgmlType.F32));
        }
        return types;
    }

    private QuantizationMix mix(LlamaFileType type, boolean pure) throws IOException {
        return new QuantizationMix(type, pure, metadata(llama(8, 32, 8)), List.of("output.weight"));
    }

    private static Map<String, Object> llama(int layers, int heads, int kvHeads) {
        Map<String, Object> md = new LinkedHashMap<>();
        md.put("general.architecture", "llama");
        md.put("llama.block_count", layers);
        md.put("llama.attention.head_count", heads);
        md.put("llama.attention.head_count_kv", kvHeads);
        return md;
    }

    private io.nereid.engine.gguf.GgufMetadata metadata(Map<String, Object> md) throws IOException {
        GgufWriter w = new GgufWriter();
        md.forEach((k, v) -> {
            if (v instanceof String s) {
                w.putString(k, s);
            } else {
                w.putUInt32(k, ((Number) v).longValue());
            }
        });
        Path p = dir.resolve("md-" + System.nanoTime() + ".gguf");
        w.write(p);
        return GgufFile.readMetadata(p);
    }
}
