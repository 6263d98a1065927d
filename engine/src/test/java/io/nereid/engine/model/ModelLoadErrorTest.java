package io.nereid.engine.model;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.gguf.GgufWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bad-model table: each case is a {@link ModelLoadException} naming the file and, where there is one, the tensor. */
class ModelLoadErrorTest {

    @TempDir
    static Path dir;
    static Path good;

    @BeforeAll
    static void writeGoodModel() throws IOException {
        good = dir.resolve("good.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 32, 1, 2, 2, 48, 300, 64, GgmlType.F32, false, 1), good);
        try (CpuModel ok = CpuModel.open(good)) {
            assertTrue(ok.config().layers() == 1);
        }
    }

    private static ModelLoadException fails(Path p) {
        return assertThrows(ModelLoadException.class, () -> CpuModel.open(p).close());
    }

    private static void says(ModelLoadException e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
        }
    }

    /** Copies the good model, optionally dropping a tensor and overriding one metadata string. */
    private static Path rewrite(String name, String dropTensor, String key, String value) throws IOException {
        Path out = dir.resolve(name);
        try (GgufFile f = GgufFile.open(good)) {
            GgufWriter w = new GgufWriter().putAll(f.metadata());
            if (key != null) {
                w.putString(key, value);
            }
            for (GgufTensorInfo t : f.tensors()) {
                if (!t.name().equals(dropTensor)) {
                    w.addTensor(t.name(), t.type(), t.dims(), f.tensorData(t));
                }
            }
            w.write(out);
        }
        return out;
    }

    @Test
    void truncatedFile() throws IOException {
        byte[] bytes = Files.readAllBytes(good);
        Path p = dir.resolve("truncated.gguf");
        Files.write(p, Arrays.copyOf(bytes, bytes.length - 100));
        says(fails(p), p.toString());
    }

    @Test
    void wrongMagic() throws IOException {
        byte[] bytes = Files.readAllBytes(good);
        bytes[0] = 'X';
        Path p = dir.resolve("magic.gguf");
        Files.write(p, bytes);
        says(fails(p), p.toString(), "magic");
    }

    @Test
    void unknownTensorType() throws IOException {
        byte[] bytes = Files.readAllBytes(good);
        // The type field follows the name, rank and dims of the tensor's info in the header.
        byte[] name = "output_norm.weight".getBytes(StandardCharsets.US_ASCII);
        int at = indexOf(bytes, name) + name.length + 4 + 8; // rank u32 = 1, one u64 dim
        bytes[at] = 99;
        Path p = dir.resolve("type.gguf");
        Files.write(p, bytes);
        says(fails(p), p.toString(), "output_norm.weight");
    }

    @Test
    void unknownArchitecture() throws IOException {
        Path p = rewrite("arch.gguf", null, "general.architecture", "gpt-neox");
        says(fails(p), p.toString(), "architecture 'gpt-neox'");
    }

    @Test
    void missingTensor() throws IOException {
        Path p = rewrite("missing.gguf", "blk.0.attn_k.weight", null, null);
        says(fails(p), p.toString(), "blk.0.attn_k.weight", "missing");
    }

    @Test
    void unsupportedTensorTypeForAWeight() throws IOException {
        Path p = dir.resolve("q41.gguf");
        try (GgufFile f = GgufFile.open(good)) {
            GgufWriter w = new GgufWriter().putAll(f.metadata());
            for (GgufTensorInfo t : f.tensors()) {
                if (t.name().equals("blk.0.ffn_up.weight")) {
                    // Q4_1 is a valid GGML type (blocks of 32) that the CPU backend does not implement.
                    w.addTensor(t.name(), GgmlType.Q4_1, t.dims(), new byte[(int) GgmlType.Q4_1.byteSize(t.dims())]);
                } else {
                    w.addTensor(t.name(), t.type(), t.dims(), f.tensorData(t));
                }
            }
            w.write(p);
        }
        says(fails(p), p.toString(), "blk.0.ffn_up.weight", "Q4_1");
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new IllegalStateException("not found");
    }
}
