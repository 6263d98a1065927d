package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.core.Generator;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.SamplingChain;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelQuantizerTest {

    @TempDir
    Path dir;

    @Test
    void q8_0CopyOfAModelKeepsItsGreedyOutputAndShrinksIt() throws IOException {
        Path f32 = dir.resolve("f32.gguf");
        Path q8 = dir.resolve("q8.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.QWEN2, 64, 2, 4, 2, 96, 320, 128, GgmlType.F32, false, 3), f32);
        ModelQuantizer.Result r = ModelQuantizer.quantize(f32, q8, LlamaFileType.Q8_0, false);
        assertEquals(2 + 2 * 7, r.converted(), "token_embd, output and 7 matrices per layer");
        assertTrue(r.bytesOut() < r.bytesIn() / 3, r.toString());
        try (CpuModel a = CpuModel.open(f32); CpuModel b = CpuModel.open(q8)) {
            assertEquals(GgmlType.Q8_0, b.weights().layer(1).wq().type());
            assertEquals(greedy(a), greedy(b), "Q8_0 error is far below these random logits' gaps");
        }
    }

    @Test
    void q4_K_MCopyOfATiedModelLoadsWithLlamaQuantizesMixAndGenerates() throws IOException {
        Path f32 = dir.resolve("f32.gguf");
        Path q4 = dir.resolve("q4km.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 256, 2, 4, 2, 256, 512, 128, GgmlType.F32, true, 5), f32);
        ModelQuantizer.Result r = ModelQuantizer.quantize(f32, q4, LlamaFileType.Q4_K_M, false);
        // 2 layers: use_more_bits picks layer 1 only; no output.weight, so token_embd takes its Q6_K
        assertEquals(Map.of(GgmlType.Q4_K, 12, GgmlType.Q6_K, 3, GgmlType.F32, 5), r.types(), r.toString());
        try (CpuModel m = CpuModel.open(q4)) {
            assertEquals(GgmlType.Q4_K, m.weights().layer(0).wv().type());
            assertEquals(GgmlType.Q6_K, m.weights().layer(1).wv().type());
            assertEquals(8, greedy(m).size());
        }
        try (GgufFile f = GgufFile.open(q4)) {
            assertEquals(LlamaFileType.Q4_K_M.id(), f.metadata().getInt("general.file_type"));
            assertEquals(GgmlType.Q6_K, f.tensor("token_embd.weight").type());
        }
    }

    @Test
    void pureQ4_0KeepsEveryMatrixInQ4_0() throws IOException {
        Path f32 = dir.resolve("f32.gguf");
        Path q4 = dir.resolve("q4.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.QWEN2, 64, 2, 4, 2, 96, 320, 128, GgmlType.F32, false, 3), f32);
        assertEquals(1, ModelQuantizer.quantize(f32, q4, LlamaFileType.Q4_0, false).types().get(GgmlType.Q8_0),
                "without --pure output.weight is Q6_K, which falls back to Q8_0 for rows of 64");
        ModelQuantizer.Result r = ModelQuantizer.quantize(f32, q4, LlamaFileType.Q4_0, true);
        assertEquals(2 + 2 * 7, r.types().get(GgmlType.Q4_0), r.toString());
        assertEquals(Set.of(GgmlType.Q4_0, GgmlType.F32), r.types().keySet());
    }

    private static List<Integer> greedy(CpuModel m) {
        Generator g = new Generator(m.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F32), 128, 16, 64);
        List<Integer> ids = new ArrayList<>();
        int[] prompt = {1, 50, 60, 70};
        g.generate(prompt, 8, new SamplingChain(SamplingParams.GREEDY, m.config().vocabSize(), prompt, 1), new int[0],
                (SampledToken t) -> ids.add(t.id()));
        return ids;
    }
}
