package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.core.Generator;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.ScalarKernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.safetensors.SafetensorsDtype;
import io.nereid.engine.safetensors.SafetensorsFile;
import io.nereid.engine.safetensors.SafetensorsTensorInfo;
import io.nereid.engine.safetensors.SafetensorsWriter;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.engine.tokenizer.TokenizerFixtureTest;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hugging Face directories end to end through {@link CpuModel#open} with a real tokenizer.json,
 * and the bad-directory table: each a {@link ModelLoadException} naming the file and the problem.
 */
class HfModelLoadErrorTest {

    @TempDir
    static Path tmp;
    static Path good;
    static Tokenizer tokenizer;

    @BeforeAll
    static void writeGoodDirectory() throws IOException {
        Path gguf = tmp.resolve("good.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 32, 1, 2, 2, 48, 300, 64, GgmlType.F32, false, 1),
                gguf);
        tokenizer = GgufTokenizerLoader.fromMetadata(GgufFile.readMetadata(gguf));
        good = tmp.resolve("good");
        GgufToHf.convert(gguf, good, 1, true);
        CpuModel.of(ModelSource.openHf(good, tokenizer)).close();
    }

    /** A copy of the good directory, with {@code config.json} and the weights edited. */
    private static Path copy(String name, Map<String, String> configEdits, Predicate<String> keepTensor,
            SafetensorsDtype replaceDtype) throws IOException {
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir);
        String config = Files.readString(good.resolve("config.json"));
        for (Map.Entry<String, String> e : configEdits.entrySet()) {
            config = config.replaceAll(",?\"" + e.getKey() + "\":[^,}]*", "");
            config = e.getValue() == null ? config.replace("{,", "{")
                    : config.replaceFirst("\\{,?", "{\"" + e.getKey() + "\":" + java.util.regex.Matcher.quoteReplacement(e.getValue()) + ",");
        }
        Files.writeString(dir.resolve("config.json"), config);
        try (SafetensorsFile f = SafetensorsFile.open(good.resolve(HfTensors.SINGLE))) {
            SafetensorsWriter w = new SafetensorsWriter();
            for (SafetensorsTensorInfo t : f.tensors()) {
                if (!keepTensor.test(t.name())) {
                    continue;
                }
                boolean replace = replaceDtype != null && t.name().equals("model.layers.0.mlp.up_proj.weight");
                w.add(t.name(), replace ? replaceDtype : t.dtype(), t.shape(), replace
                        ? MemorySegment.ofArray(new byte[(int) (t.byteSize() / 4 * replaceDtype.bytes())]) : f.tensorData(t));
            }
            w.write(dir.resolve(HfTensors.SINGLE));
        }
        return dir;
    }

    private static Path config(String name, String key, String value) throws IOException {
        return copy(name, java.util.Collections.singletonMap(key, value), t -> true, null);
    }

    private static ModelLoadException fails(Path dir) {
        return assertThrows(ModelLoadException.class, () -> CpuModel.of(ModelSource.openHf(dir, tokenizer)).close());
    }

    private static void says(ModelLoadException e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
        }
    }

    @Test
    void directoryWithoutConfig() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("empty"));
        says(assertThrows(ModelLoadException.class, () -> CpuModel.open(dir)), dir.toString(), "config.json is missing");
    }

    @Test
    void configProblemsNameTheKey() throws IOException {
        says(fails(config("arch", "model_type", "\"gpt_neox\"")), "config.json", "model_type 'gpt_neox'", "llama, qwen2, qwen3");
        says(fails(config("nodim", "hidden_size", null)), "config.json", "hidden_size is missing");
        says(fails(config("strdim", "hidden_size", "\"32\"")), "hidden_size", "integer");
        says(fails(config("yarn", "rope_scaling", "{\"rope_type\":\"yarn\",\"factor\":4.0}")), "rope_scaling type 'yarn'");
        says(fails(config("bias", "attention_bias", "true")), "attention_bias", "not support");
        says(fails(config("act", "hidden_act", "\"gelu\"")), "hidden_act 'gelu'");
        says(fails(config("heads", "num_key_value_heads", "3")), "bad hyper-parameters", "head_count_kv 3");
        says(fails(config("noheads", "num_attention_heads", "0")), "config.json", "num_attention_heads (0) must be positive");
        Path broken = Files.createDirectories(tmp.resolve("badjson"));
        Files.writeString(broken.resolve("config.json"), "{\"model_type\": ");
        says(fails(broken), "config.json", "cannot be read");
    }

    @Test
    void tensorProblemsNameTheTensor() throws IOException {
        says(fails(copy("missing", Map.of(), t -> !t.equals("model.layers.0.self_attn.k_proj.weight"), null)),
                "model.safetensors", "model.layers.0.self_attn.k_proj.weight", "missing");
        says(fails(copy("nohead", Map.of(), t -> !t.equals("lm_head.weight"), null)), "lm_head.weight", "tie_word_embeddings");
        says(fails(copy("shape", Map.of("intermediate_size", "64"), t -> true, null)),
                "model.layers.0.mlp.gate_proj.weight", "has shape [48, 32], expected [64, 32]");
        says(fails(copy("dtype", Map.of(), t -> true, SafetensorsDtype.I8)), "model.layers.0.mlp.up_proj.weight",
                "dtype I8", "F32, F16, BF16");
    }

    @Test
    void ropeScalingAndStopIdsComeFromTheConfigFiles() throws IOException {
        Path llama3 = config("llama3", "rope_scaling", "{\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1,"
                + "\"high_freq_factor\":4.0,\"original_max_position_embeddings\":8192}");
        Files.writeString(llama3.resolve("generation_config.json"), "{\"eos_token_id\": 7}");
        HfModelConfig c = HfModelConfig.read(llama3);
        assertEquals(new RopeScaling.Llama3(8, 1, 4, 8192), c.model().ropeScaling());
        assertArrayEquals(new int[] {2, 7}, c.stopIds());
        assertEquals(new RopeScaling.Linear(2), HfModelConfig.read(config("linear", "rope_scaling",
                "{\"type\":\"linear\",\"factor\":2}")).model().ropeScaling());
        assertEquals(new RopeScaling.None(), HfModelConfig.read(config("nulled", "rope_scaling", "null")).model().ropeScaling());
    }

    /** transformers 5 saves {@code rope_parameters} in place of {@code rope_theta} and {@code rope_scaling}. */
    @Test
    void ropeParametersAsTransformersFiveWritesThem() throws IOException {
        HfModelConfig plain = HfModelConfig.read(v5("v5",
                "{\"rope_theta\":500000.0,\"rope_type\":\"default\"}"));
        assertEquals(500000f, plain.model().ropeTheta());
        assertEquals(new RopeScaling.None(), plain.model().ropeScaling());
        HfModelConfig llama3 = HfModelConfig.read(v5("v5llama3", "{\"rope_theta\":500000.0,"
                + "\"rope_type\":\"llama3\",\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
                + "\"original_max_position_embeddings\":8192}"));
        assertEquals(500000f, llama3.model().ropeTheta());
        assertEquals(new RopeScaling.Llama3(8, 1, 4, 8192), llama3.model().ropeScaling());
        says(fails(v5("v5yarn", "{\"rope_theta\":1e6,\"rope_type\":\"yarn\",\"factor\":4.0}")),
                "rope_parameters type 'yarn'");
        says(fails(v5("v5partial", "{\"rope_theta\":1e4,\"partial_rotary_factor\":0.5}")),
                "partial_rotary_factor");
        says(fails(v5("v5layers", "{\"full_attention\":{\"rope_theta\":1e6},"
                + "\"sliding_attention\":{\"rope_theta\":1e4}}")), "per layer type");
        says(fails(v5("v5bad", "7")), "rope_parameters");
    }

    /** A config as transformers 5 writes it: no top-level rope_theta, the given rope_parameters. */
    private static Path v5(String name, String ropeParameters) throws IOException {
        return copy(name, ordered("rope_theta", null, "rope_parameters", ropeParameters), t -> true, null);
    }

    /** Config edits applied in the order given (a later object value must not be cut by an earlier key's removal). */
    private static Map<String, String> ordered(String... keysAndValues) {
        Map<String, String> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    @Test
    void ropeParametersAndLegacyKeysThatDisagreeAreRefused() throws IOException {
        Path both = copy("v5both", ordered("rope_theta", "10000.0", "rope_parameters",
                "{\"rope_theta\":500000.0,\"rope_type\":\"default\"}"), t -> true, null);
        says(fails(both), "rope_theta 10000.0 and rope_parameters.rope_theta 500000.0 disagree");
        Path scaling = copy("v5scaling", ordered("rope_scaling", "{\"type\":\"linear\",\"factor\":2}", "rope_parameters",
                "{\"rope_theta\":10000.0,\"rope_type\":\"linear\",\"factor\":4.0}"), t -> true, null);
        says(fails(scaling), "rope_scaling", "disagree");
        Path agree = copy("v5agree", ordered("rope_theta", "500000", "rope_scaling", "{\"type\":\"linear\",\"factor\":2}",
                "rope_parameters", "{\"rope_theta\":500000.0,\"rope_type\":\"linear\",\"factor\":2.0}"), t -> true, null);
        assertEquals(new RopeScaling.Linear(2), HfModelConfig.read(agree).model().ropeScaling());
    }

    @Test
    void tiedEmbeddingsIgnoreLmHead() throws IOException {
        Path dir = copy("tied", Map.of("tie_word_embeddings", "true"), t -> !t.equals("lm_head.weight"), null);
        try (CpuModel m = CpuModel.of(ModelSource.openHf(dir, tokenizer))) {
            assertTrue(m.weights().output() == m.weights().tokenEmbedding());
        }
    }

    @Test
    void weightFileProblems() throws IOException {
        Path none = copy("noweights", Map.of(), t -> true, null);
        Files.delete(none.resolve(HfTensors.SINGLE));
        Files.writeString(none.resolve("pytorch_model.bin"), "");
        says(fails(none), "no model.safetensors", "PyTorch .bin");

        Path corrupt = copy("corrupt", Map.of(), t -> true, null);
        byte[] bytes = Files.readAllBytes(corrupt.resolve(HfTensors.SINGLE));
        bytes[9] = '[';
        Files.write(corrupt.resolve(HfTensors.SINGLE), bytes);
        says(fails(corrupt), corrupt.resolve(HfTensors.SINGLE).toString(), "header");

        Path index = copy("index", Map.of(), t -> true, null);
        Files.writeString(index.resolve(HfTensors.INDEX), "{\"weight_map\":{\"model.norm.weight\":\"../good/model.safetensors\"}}");
        says(fails(index), HfTensors.INDEX, "model.norm.weight", "not a file of");
        Files.writeString(index.resolve(HfTensors.INDEX), "{\"weight_map\":{\"model.absent\":\"model.safetensors\"}}");
        says(fails(index), HfTensors.INDEX, "model.absent", "does not hold");
    }

    @Test
    void missingTokenizer() {
        says(assertThrows(ModelLoadException.class, () -> CpuModel.open(good)), "tokenizer.json is missing");
    }

    /**
     * A Qwen3-shaped directory with the real Qwen3 tokenizer files, a padded 151,936-row embedding
     * (the tokenizer defines 151,669 ids) and a generation_config.json: tokenization equals the
     * fixture, every eos id stops, the padding ids decode to nothing, the chat template renders,
     * and greedy decoding runs.
     */
    @Test
    void qwen3DirectoryWithItsTokenizerWorksEndToEnd() throws IOException {
        Path gguf = tmp.resolve("qwen3.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.QWEN3, 16, 1, 2, 1, 32, 151936, 256, GgmlType.BF16,
                true, 3), gguf);
        Path dir = tmp.resolve("qwen3");
        GgufToHf.convert(gguf, dir, 2, true);
        for (String f : new String[] {"tokenizer.json", "tokenizer_config.json"}) {
            Files.copy(Fixtures.path("tokenizers/qwen3/" + f), dir.resolve(f));
        }
        Files.writeString(dir.resolve("generation_config.json"), "{\"eos_token_id\": [151645, 151643], \"do_sample\": true}");
        try (CpuModel m = CpuModel.open(dir)) {
            Tokenizer t = m.tokenizer();
            Map<String, Object> first = Fixtures.jsonLines("tokenizers/qwen3/cases.jsonl").get(0);
            assertArrayEquals(TokenizerFixtureTest.ints(first.get("ids")), t.encode((String) first.get("text")));
            assertEquals(151936, t.vocabSize());
            assertEquals("", t.decode(new int[] {151900}));
            assertTrue(t.isSpecial(151900));
            List<Integer> stops = java.util.Arrays.stream(t.specialTokens().stopIds()).boxed().toList();
            assertTrue(stops.containsAll(List.of(151645, 151643, 2)), stops.toString());
            String chat = m.chatTemplate().orElseThrow().render(new io.nereid.engine.template.ChatRequestContext(
                    List.of(Map.of("role", "user", "content", "Hi")), null, true, null, null, Map.of(), null));
            assertTrue(chat.endsWith("<|im_start|>assistant\n"), chat);
            int[] prompt = t.encode(chat);
            Generator g = new Generator(m.backend(ScalarKernels.INSTANCE, RangeRunner.SERIAL, KvPrecision.F32), 64, 16, 64);
            List<Integer> out = new ArrayList<>();
            SamplingParams greedy = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 0);
            g.generate(prompt, 4, new SamplingChain(greedy, m.config().vocabSize(), prompt, 1), new int[0], s -> out.add(s.id()));
            assertEquals(4, out.size());
        }
    }
}
