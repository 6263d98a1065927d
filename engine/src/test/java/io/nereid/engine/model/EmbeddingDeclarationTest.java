package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.EmbeddingSpec;
import io.nereid.engine.api.Pooling;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a sentence-transformers directory declares its pooling and normalisation (modules.json). */
class EmbeddingDeclarationTest {

    private static Path model(Path dir, String pooling, boolean normalize) throws Exception {
        Files.createDirectories(dir.resolve("1_Pooling"));
        Files.writeString(dir.resolve("1_Pooling/config.json"), "{\"word_embedding_dimension\": 1024, " + pooling + "}");
        Files.writeString(dir.resolve("modules.json"), "[{\"idx\": 0, \"name\": \"0\", \"path\": \"\", \"type\":"
                + " \"sentence_transformers.models.Transformer\"}, {\"idx\": 1, \"name\": \"1\", \"path\": \"1_Pooling\","
                + " \"type\": \"sentence_transformers.models.Pooling\"}" + (normalize ? ", {\"idx\": 2, \"name\": \"2\","
                + " \"path\": \"2_Normalize\", \"type\": \"sentence_transformers.models.Normalize\"}" : "") + "]");
        return dir;
    }

    @Test
    void poolingModesAndNormalizeAreReadFromTheModules(@TempDir Path dir) throws Exception {
        // Qwen3-Embedding's files: last-token pooling, then Normalize
        assertEquals(new EmbeddingSpec(Pooling.LAST, true), HfModelLoader.embedding(model(dir.resolve("a"),
                "\"pooling_mode_cls_token\": false, \"pooling_mode_mean_tokens\": false, \"pooling_mode_lasttoken\": true",
                true)).orElseThrow());
        assertEquals(new EmbeddingSpec(Pooling.MEAN, false), HfModelLoader.embedding(model(dir.resolve("b"),
                "\"pooling_mode_mean_tokens\": true", false)).orElseThrow());
        assertEquals(new EmbeddingSpec(Pooling.CLS, true), HfModelLoader.embedding(model(dir.resolve("c"),
                "\"pooling_mode_cls_token\": true", true)).orElseThrow());
        assertTrue(HfModelLoader.embedding(Files.createDirectories(dir.resolve("plain"))).isEmpty(), "no modules.json");
        // Matryoshka sizes from config.json, as vLLM reads them
        Path mrl = model(dir.resolve("mrl"), "\"pooling_mode_lasttoken\": true", true);
        Files.writeString(mrl.resolve("config.json"), "{\"matryoshka_dimensions\": [32, 64, 128]}");
        EmbeddingSpec spec = HfModelLoader.embedding(mrl).orElseThrow();
        assertEquals(java.util.List.of(32, 64, 128), spec.matryoshka());
        assertTrue(spec.truncatesTo(64, 256) && spec.truncatesTo(256, 256) && !spec.truncatesTo(100, 256));
        Files.writeString(mrl.resolve("config.json"), "{\"is_matryoshka\": true}");
        assertTrue(HfModelLoader.embedding(mrl).orElseThrow().truncatesTo(100, 256));
        assertTrue(!new EmbeddingSpec(Pooling.LAST, true).truncatesTo(64, 256), "no declaration: full size only");
        Path broken = Files.createDirectories(dir.resolve("broken"));
        Files.writeString(broken.resolve("modules.json"), "[{\"type\": \"sentence_transformers.models.Pooling\","
                + " \"path\": \"missing\"}]");
        assertThrows(ModelLoadException.class, () -> HfModelLoader.embedding(broken));
    }
}
