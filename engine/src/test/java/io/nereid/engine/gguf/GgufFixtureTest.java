package io.nereid.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.json.Json;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The seven llama.cpp vocabulary GGUFs against their {@code meta.json}, written by the fixture
 * pack from an independent reader: every scalar key/value, every array's type and length, the
 * token-type counts and the text of every non-NORMAL token.
 */
class GgufFixtureTest {

    /** llama.cpp {@code llama_token_type}: the value stored in {@code tokenizer.ggml.token_type}. */
    private static final List<String> TOKEN_TYPES =
            List.of("UNDEFINED", "NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "UNUSED", "BYTE");

    @ParameterizedTest
    @ValueSource(strings = {"llama-spm", "phi-3", "gpt-2", "deepseek-coder", "falcon", "starcoder", "mpt"})
    void vocabularyMatchesItsMetaJson(String name) {
        Map<String, Object> meta = Json.parseObject(Fixtures.read("tokenizers/" + name + "/meta.json"));
        try (GgufFile file = GgufFile.open(Fixtures.path("tokenizers/" + name + "/vocab.gguf"))) {
            GgufMetadata md = file.metadata();
            assertEquals(((Number) meta.get("bytes")).longValue(), file.fileSize());
            assertEquals(List.of(), file.tensors(), "vocab-only file");

            @SuppressWarnings("unchecked")
            Map<String, Object> kv = (Map<String, Object>) meta.get("gguf_kv");
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> arrays = (Map<String, Map<String, Object>>) meta.get("gguf_arrays");
            Set<String> listed = new HashSet<>(kv.keySet());
            listed.addAll(arrays.keySet());
            assertEquals(listed, md.keys(), "keys of " + name);

            kv.forEach((key, expected) -> assertScalar(md, key, expected));
            arrays.forEach((key, expected) -> {
                GgufArray a = md.getArray(key);
                assertEquals(expected.get("type"), a.elementType().name(), key);
                assertEquals(((Number) expected.get("length")).intValue(), a.size(), key);
            });
            assertEquals(md.getString("general.architecture"), md.architecture().orElseThrow());
            assertTokenTypes(md, meta);
        }
    }

    private static void assertScalar(GgufMetadata md, String key, Object expected) {
        switch (expected) {
            case String s -> assertEquals(s, md.getString(key), key);
            case Boolean b -> assertEquals(b, md.getBool(key), key);
            case Long l -> {
                assertTrue(md.type(key).isInteger(), key + " is " + md.type(key));
                assertEquals(l, md.getLong(key), key);
            }
            case Double d -> {
                assertTrue(md.type(key).isFloat(), key + " is " + md.type(key));
                assertEquals(d, md.getDouble(key), key); // meta.json holds the float32 widened exactly
            }
            default -> throw new AssertionError(key + ": unexpected JSON value " + expected);
        }
    }

    private static void assertTokenTypes(GgufMetadata md, Map<String, Object> meta) {
        List<String> tokens = md.getStringArray("tokenizer.ggml.tokens");
        int[] types = md.getIntArray("tokenizer.ggml.token_type");
        assertEquals(tokens.size(), types.length);
        Map<String, Long> counts = new TreeMap<>();
        for (int t : types) {
            counts.merge(TOKEN_TYPES.get(t), 1L, Long::sum);
        }
        assertEquals(new TreeMap<>(castMap(meta.get("token_type_counts"))), counts);
        for (Object o : (List<?>) meta.get("non_normal_tokens")) {
            Map<String, Object> token = castMap(o);
            int id = ((Long) token.get("id")).intValue();
            assertEquals(token.get("text"), tokens.get(id), "token " + id);
            assertEquals(token.get("type"), TOKEN_TYPES.get(types[id]), "type of token " + id);
        }
    }

    @SuppressWarnings("unchecked")
    private static <V> Map<String, V> castMap(Object o) {
        return (Map<String, V>) o;
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama-spm", "phi-3"})
    void sentencePieceScoresAreOnePerToken(String name) {
        GgufMetadata md = GgufFile.readMetadata(Fixtures.path("tokenizers/" + name + "/vocab.gguf"));
        float[] scores = md.getFloatArray("tokenizer.ggml.scores");
        assertEquals(md.getStringArray("tokenizer.ggml.tokens").size(), scores.length);
        assertEquals(List.of("<unk>", "<s>", "</s>"), md.getStringArray("tokenizer.ggml.tokens").subList(0, 3));
    }

    @ParameterizedTest
    @ValueSource(strings = {"gpt-2"})
    void mergesAreSpaceSeparatedPairs(String name) {
        List<String> merges = GgufFile.readMetadata(Fixtures.path("tokenizers/" + name + "/vocab.gguf"))
                .getStringArray("tokenizer.ggml.merges");
        assertEquals("Ġ t", merges.get(0));
        assertTrue(merges.stream().allMatch(m -> m.indexOf(' ') > 0), "every merge is 'left right'");
    }

    @org.junit.jupiter.api.Test
    void stories260KHasFortyEightF32TensorsInGgufDimOrder() {
        try (GgufFile file = GgufFile.open(Fixtures.path("models/stories260K.gguf"))) {
            GgufMetadata md = file.metadata();
            assertEquals("llama", md.architecture().orElseThrow());
            assertEquals(128, md.getInt("llama.context_length")); // the converter's default, see README
            assertEquals(64, md.getInt("llama.embedding_length"));
            assertEquals(5, md.getInt("llama.block_count"));
            assertEquals(4294967295L, md.getLong("tokenizer.ggml.seperator_token_id"));
            assertEquals(512, md.getStringArray("tokenizer.ggml.tokens").size());
            assertEquals("<0x00>", md.getStringArray("tokenizer.ggml.tokens").get(3));

            List<GgufTensorInfo> tensors = file.tensors();
            assertEquals(48, tensors.size());
            assertTrue(tensors.stream().allMatch(t -> t.type() == GgmlType.F32));
            assertEquals(3 + 5 * 9, new HashSet<>(tensors.stream().map(GgufTensorInfo::name).toList()).size());
            assertArrayEquals(new long[] {64, 512}, file.tensor("token_embd.weight").dims());
            assertArrayEquals(new long[] {64, 512}, file.tensor("output.weight").dims());
            assertArrayEquals(new long[] {64}, file.tensor("output_norm.weight").dims());
            for (int layer = 0; layer < 5; layer++) {
                String blk = "blk." + layer + ".";
                assertArrayEquals(new long[] {64, 64}, file.tensor(blk + "attn_q.weight").dims());
                assertArrayEquals(new long[] {64, 32}, file.tensor(blk + "attn_k.weight").dims()); // 4 kv heads × 8
                assertArrayEquals(new long[] {64, 32}, file.tensor(blk + "attn_v.weight").dims());
                assertArrayEquals(new long[] {64, 64}, file.tensor(blk + "attn_output.weight").dims());
                assertArrayEquals(new long[] {64, 172}, file.tensor(blk + "ffn_gate.weight").dims());
                assertArrayEquals(new long[] {172, 64}, file.tensor(blk + "ffn_down.weight").dims());
                assertArrayEquals(new long[] {64, 172}, file.tensor(blk + "ffn_up.weight").dims());
                assertArrayEquals(new long[] {64}, file.tensor(blk + "attn_norm.weight").dims());
                assertArrayEquals(new long[] {64}, file.tensor(blk + "ffn_norm.weight").dims());
            }
            long parameters = 0;
            for (GgufTensorInfo t : tensors) {
                assertEquals(t.elementCount() * 4, t.byteSize(), t.name());
                assertEquals(0, (file.dataOffset() + t.offset()) % file.alignment(), t.name());
                parameters += t.elementCount();
            }
            assertEquals(64 * 512 * 2 + 64 + 5 * (64 * 64 * 2 + 64 * 32 * 2 + 64 * 172 * 3 + 64 * 2), parameters);

            // The converter wrote output.weight as a copy of the tied embedding.
            MemorySegment embedding = file.tensorData("token_embd.weight");
            MemorySegment output = file.tensorData("output.weight");
            assertEquals(64 * 512 * 4, embedding.byteSize());
            assertEquals(-1, embedding.mismatch(output));
            assertTrue(embedding.isReadOnly());
        }
    }
}
