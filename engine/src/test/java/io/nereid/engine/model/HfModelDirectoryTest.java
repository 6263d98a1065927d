package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.core.Generator;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.GeneratedModelsTest;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.cpu.kernel.ScalarKernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.json.Json;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerFixtureTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hugging Face model directories against the same models as GGUF files: the real stories260K
 * converted back to Hugging Face layout (Q/K rows unpermuted, NeoX RoPE) reproduces llama.cpp's
 * greedy ids, and generated models of every architecture and weight type give the GGUF logits.
 */
class HfModelDirectoryTest {

    @TempDir
    Path dir;

    private static final Path STORIES = Fixtures.path("models/stories260K.gguf");

    private static Tokenizer storiesTokenizer() {
        return GgufTokenizerLoader.fromMetadata(GgufFile.readMetadata(STORIES));
    }

    private static Map<String, Object> reference() {
        return Json.parseObject(Fixtures.read("models/stories260K.json"));
    }

    /** The greedy continuation of the reference prompt, as many tokens as the reference has. */
    private static int[] greedy(CpuModel m) {
        Map<String, Object> reference = reference();
        int[] prompt = TokenizerFixtureTest.ints(reference.get("prompt_ids"));
        return greedy(m, prompt, TokenizerFixtureTest.ints(reference.get("greedy_ids")).length);
    }

    private static int[] greedy(CpuModel m, int[] prompt, int n) {
        List<SampledToken> out = new ArrayList<>();
        Generator g = new Generator(m.backend(ScalarKernels.INSTANCE, RangeRunner.SERIAL, KvPrecision.F32), 512, 16, 512);
        SamplingParams greedy = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 0);
        g.generate(prompt, n, new SamplingChain(greedy, m.config().vocabSize(), prompt, 1), new int[0], out::add);
        return out.stream().mapToInt(SampledToken::id).toArray();
    }

    @Test
    void storiesInHuggingFaceLayoutMatchesLlamaCppGreedyIds() throws IOException {
        int[] expected = TokenizerFixtureTest.ints(reference().get("greedy_ids"));
        GgufToHf.convert(STORIES, dir, 3, true);
        assertTrue(Files.exists(dir.resolve("model-00003-of-00003.safetensors")));
        try (CpuModel m = CpuModel.of(ModelSource.openHf(dir, storiesTokenizer()))) {
            assertTrue(m.config().neoxRope(), "a llama from a Hugging Face directory uses NeoX RoPE");
            assertEquals(Architecture.LLAMA, m.config().architecture());
            assertArrayEquals(expected, greedy(m));
        }
    }

    /** The control: GGUF-ordered Q/K rows under NeoX RoPE are a different model. */
    @Test
    void storiesWithGgufOrderedQkRowsDoesNotMatch() throws IOException {
        int[] expected = TokenizerFixtureTest.ints(reference().get("greedy_ids"));
        GgufToHf.convert(STORIES, dir, 1, false);
        try (CpuModel m = CpuModel.of(ModelSource.openHf(dir, storiesTokenizer()))) {
            assertFalse(java.util.Arrays.equals(expected, greedy(m)));
        }
    }

    static List<Arguments> architecturesAndTypes() {
        List<Arguments> out = new ArrayList<>();
        for (Architecture a : Architecture.values()) {
            for (GgmlType t : new GgmlType[] {GgmlType.F32, GgmlType.F16, GgmlType.BF16}) {
                out.add(Arguments.of(a, t));
            }
        }
        return out;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("architecturesAndTypes")
    void generatedModelGivesTheGgufLogits(Architecture a, GgmlType type) throws IOException {
        Path gguf = dir.resolve("model.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(a, 64, 2, 4, 2, 96, 320, 256, type, a == Architecture.QWEN3, 11),
                gguf);
        Path hf = dir.resolve("hf");
        GgufToHf.convert(gguf, hf, 2, true);
        try (CpuModel g = CpuModel.open(gguf);
                CpuModel h = CpuModel.of(ModelSource.openHf(hf, GgufTokenizerLoader.fromMetadata(GgufFile.readMetadata(gguf))))) {
            assertEquals(g.config().qDim(), h.config().qDim());
            for (int length : new int[] {1, 37}) {
                int[] tokens = GeneratedModelsTest.prompt(length, length);
                float[] expected = GeneratedModelsTest.prefill(g.forward(Kernels.provider(), RangeRunner.SERIAL, 256),
                        tokens, 16, 16, KvPrecision.F32);
                float[] actual = GeneratedModelsTest.prefill(h.forward(Kernels.provider(), RangeRunner.SERIAL, 256),
                        tokens, 16, 16, KvPrecision.F32);
                GeneratedModelsTest.assertClose(expected, actual, 1e-4f, a + " " + type + " length " + length);
            }
        }
    }
}
