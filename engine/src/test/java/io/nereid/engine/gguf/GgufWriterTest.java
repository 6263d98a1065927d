package io.nereid.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Write → read gives back the same metadata (every value type) and the same tensor bytes. */
class GgufWriterTest {

    @TempDir
    Path dir;

    /** One key of every scalar type at its extremes, and arrays of every element type. */
    static GgufWriter everyValueType() {
        return new GgufWriter()
                .putUInt8("u8", 255).putInt8("i8", -128)
                .putUInt16("u16", 65535).putInt16("i16", -32768)
                .putUInt32("u32", 4294967295L).putInt32("i32", Integer.MIN_VALUE)
                .putUInt64("u64", -1L).putInt64("i64", Long.MIN_VALUE)
                .putFloat32("f32", -0.0f).putFloat32("f32.nan", Float.NaN).putFloat64("f64", Math.PI)
                .putBool("yes", true).putBool("no", false)
                .putString("s", "héllo ▁wörld 😀").putString("empty", "")
                .putArray("a.u8", GgufArray.ofUInt8(new byte[] {0, 1, (byte) 255}))
                .putArray("a.i8", GgufArray.ofInt8(new byte[] {-128, 0, 127}))
                .putArray("a.u16", GgufArray.ofUInt16(new short[] {0, (short) 65535}))
                .putArray("a.i16", GgufArray.ofInt16(new short[] {-32768, 32767}))
                .putArray("a.u32", GgufArray.ofUInt32(new int[] {0, -1}))
                .putArray("a.i32", GgufArray.ofInt32(new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE}))
                .putArray("a.u64", GgufArray.ofUInt64(new long[] {-1L, 0}))
                .putArray("a.i64", GgufArray.ofInt64(new long[] {Long.MIN_VALUE, Long.MAX_VALUE}))
                .putArray("a.f32", GgufArray.ofFloat32(new float[] {1.5f, Float.NaN, Float.NEGATIVE_INFINITY}))
                .putArray("a.f64", GgufArray.ofFloat64(new double[] {-2.25, Double.MIN_VALUE}))
                .putArray("a.bool", GgufArray.ofBools(new boolean[] {true, false, true}))
                .putStringArray("a.str", List.of("<s>", "", "▁the", "日本語"))
                .putArray("a.empty", GgufArray.ofInt32(new int[0]))
                .putArray("a.nested", GgufArray.ofArrays(List.of(
                        GgufArray.ofStrings(List.of("x", "y")),
                        GgufArray.ofArrays(List.of(GgufArray.ofFloat32(new float[] {3f}))),
                        GgufArray.ofUInt8(new byte[0]))));
    }

    @Test
    void everyValueTypeRoundTrips() throws IOException {
        GgufWriter writer = everyValueType();
        Path path = dir.resolve("all.gguf");
        writer.write(path);
        assertArrayEquals(writer.toByteArray(), Files.readAllBytes(path), "write(Path) and toByteArray() agree");

        GgufMetadata md = GgufFile.readMetadata(path);
        List<String> expectedKeys = List.of("u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f32.nan",
                "f64", "yes", "no", "s", "empty", "a.u8", "a.i8", "a.u16", "a.i16", "a.u32", "a.i32", "a.u64",
                "a.i64", "a.f32", "a.f64", "a.bool", "a.str", "a.empty", "a.nested");
        assertEquals(expectedKeys, List.copyOf(md.keys()), "file order");
        assertEquals(GgufValueType.UINT8, md.type("u8"));
        assertEquals(255L, md.raw("u8"));
        assertEquals(-128, md.getInt("i8"));
        assertEquals(65535, md.getInt("u16"));
        assertEquals(-32768, md.getInt("i16"));
        assertEquals(4294967295L, md.getLong("u32"));
        assertEquals(Integer.MIN_VALUE, md.getInt("i32"));
        assertEquals(-1L, md.getUnsigned("u64"));
        assertEquals(Long.MIN_VALUE, md.getLong("i64"));
        assertEquals(Float.floatToRawIntBits(-0.0f), Float.floatToRawIntBits(md.getFloat("f32")));
        assertTrue(Float.isNaN(md.getFloat("f32.nan")));
        assertEquals(Math.PI, md.getDouble("f64"));
        assertEquals(GgufValueType.FLOAT64, md.type("f64"));
        assertTrue(md.getBool("yes"));
        assertEquals(false, md.raw("no"));
        assertEquals("héllo ▁wörld 😀", md.getString("s"));
        assertEquals("", md.getString("empty"));
        assertArrayEquals(new int[] {0, 1, 255}, md.getIntArray("a.u8"));
        assertArrayEquals(new int[] {-128, 0, 127}, md.getIntArray("a.i8"));
        assertArrayEquals(new int[] {0, 65535}, md.getIntArray("a.u16"));
        assertArrayEquals(new int[] {-32768, 32767}, md.getIntArray("a.i16"));
        assertArrayEquals(new long[] {0, 4294967295L}, md.getLongArray("a.u32"));
        assertArrayEquals(new int[] {Integer.MIN_VALUE, 0, Integer.MAX_VALUE}, md.getIntArray("a.i32"));
        assertArrayEquals(new long[] {-1L, 0}, md.getLongArray("a.u64"));
        assertArrayEquals(new long[] {Long.MIN_VALUE, Long.MAX_VALUE}, md.getLongArray("a.i64"));
        assertArrayEquals(new float[] {1.5f, Float.NaN, Float.NEGATIVE_INFINITY}, md.getFloatArray("a.f32"));
        assertArrayEquals(new double[] {-2.25, Double.MIN_VALUE}, md.getArray("a.f64").toDoubleArray());
        assertArrayEquals(new float[] {-2.25f, 0f}, md.getFloatArray("a.f64"));
        GgufArray bools = md.getArray("a.bool");
        assertEquals(List.of(true, false, true), List.of(bools.getBool(0), bools.getBool(1), bools.getBool(2)));
        assertEquals(List.of("<s>", "", "▁the", "日本語"), md.getStringArray("a.str"));
        assertEquals(0, md.getIntArray("a.empty").length);
        GgufArray nested = md.getArray("a.nested");
        assertEquals(GgufValueType.ARRAY, nested.elementType());
        assertEquals(List.of("x", "y"), nested.getArray(0).asStringList());
        assertEquals(3.0, nested.getArray(1).getArray(0).getDouble(0));
        assertEquals(GgufValueType.UINT8, nested.getArray(2).elementType());

        // And as a whole: the raw values of every key are equal, so a copy writes the same bytes.
        GgufWriter copy = new GgufWriter().putAll(md);
        assertEquals(md, GgufTestFiles.metadata(dir, copy.toByteArray()));
        assertArrayEquals(writer.toByteArray(), copy.toByteArray());
    }

    @Test
    void tensorsRoundTripWithAlignedData() throws IOException {
        float[] weights = new float[3 * 5];
        for (int i = 0; i < weights.length; i++) {
            weights[i] = i * 0.5f - 3f;
        }
        byte[] q8 = new byte[2 * 34]; // two Q8_0 blocks: one row of 64
        for (int i = 0; i < q8.length; i++) {
            q8[i] = (byte) (i * 7);
        }
        byte[] f16 = {1, 2, 3, 4, 5, 6};
        GgufWriter writer = new GgufWriter().putString("general.architecture", "test")
                .addTensor("w", new long[] {3, 5}, weights)
                .addTensor("q", GgmlType.Q8_0, new long[] {64}, q8)
                .addTensor("h", GgmlType.F16, new long[] {1, 1, 3}, f16);
        Path path = dir.resolve("t.gguf");
        writer.write(path);
        try (GgufFile file = GgufFile.open(path)) {
            assertEquals(3, file.version());
            assertEquals(32, file.alignment());
            assertEquals("test", file.metadata().architecture().orElseThrow());
            assertEquals(List.of(
                    new GgufTensorInfo("w", new long[] {3, 5}, GgmlType.F32, 0, 60),
                    new GgufTensorInfo("q", new long[] {64}, GgmlType.Q8_0, 64, 68),
                    new GgufTensorInfo("h", new long[] {1, 1, 3}, GgmlType.F16, 160, 6)), file.tensors());
            MemorySegment w = file.tensorData("w");
            float[] read = w.toArray(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN));
            assertArrayEquals(weights, read);
            assertArrayEquals(q8, file.tensorData("q").toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(f16, file.tensorData("h").toArray(ValueLayout.JAVA_BYTE));
            for (GgufTensorInfo t : file.tensors()) {
                assertEquals(0, (file.dataOffset() + t.offset()) % 32, t.name());
            }
            assertEquals(file.dataOffset() + 160 + 32, file.fileSize(), "last tensor padded like llama.cpp");
        }
    }

    @Test
    void customAlignmentIsUsedForTheDataSection() {
        GgufWriter writer = new GgufWriter().putUInt32("general.alignment", 256)
                .addTensor("a", new long[] {3}, new float[] {1, 2, 3})
                .addTensor("b", new long[] {1}, new float[] {4});
        try (GgufFile file = GgufTestFiles.open(dir, writer.toByteArray())) {
            assertEquals(256, file.alignment());
            assertEquals(0, file.dataOffset() % 256);
            assertEquals(256, file.tensor("b").offset());
            assertEquals(4f, file.tensorData("b").get(ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0));
        }
    }

    @Test
    void rewritingStories260KGivesTheSameMetadataAndTensors() throws IOException {
        Path copy = dir.resolve("copy.gguf");
        try (GgufFile original = GgufFile.open(Fixtures.path("models/stories260K.gguf"))) {
            GgufWriter writer = new GgufWriter().putAll(original.metadata());
            for (GgufTensorInfo t : original.tensors()) {
                writer.addTensor(t.name(), t.type(), t.dims(), original.tensorData(t));
            }
            writer.write(copy);
            try (GgufFile rewritten = GgufFile.open(copy)) {
                assertEquals(original.metadata(), rewritten.metadata());
                assertEquals(List.copyOf(original.metadata().keys()), List.copyOf(rewritten.metadata().keys()));
                assertEquals(original.tensors(), rewritten.tensors());
                for (GgufTensorInfo t : original.tensors()) {
                    assertEquals(-1, original.tensorData(t).mismatch(rewritten.tensorData(t.name())), t.name());
                }
            }
        }
        // llama.cpp lays the file out the same way, so the copy is byte-identical.
        assertEquals(-1, Files.mismatch(Fixtures.path("models/stories260K.gguf"), copy));
    }

    @Test
    void invalidInputIsRejectedNamingTheKeyOrTensor() {
        GgufWriter w = new GgufWriter();
        assertMessage(() -> w.putUInt8("k8", 256), "k8");
        assertMessage(() -> w.putUInt32("k32", -1), "k32");
        assertMessage(() -> w.putInt8("ki8", 128), "ki8");
        assertMessage(() -> w.put("kf", GgufValueType.FLOAT32, "1.0"), "kf");
        assertMessage(() -> w.put("ks", GgufValueType.STRING, 1L), "ks");
        assertMessage(() -> w.put("kb", GgufValueType.BOOL, 1L), "kb");
        assertMessage(() -> w.put("ki", GgufValueType.INT32, 1.5), "ki");
        assertMessage(() -> w.addTensor("t0", new long[] {4}, new float[3]), "t0");
        assertMessage(() -> w.addTensor("t1", GgmlType.Q4_0, new long[] {16}, new byte[9]), "t1");
        assertMessage(() -> w.addTensor("t2", new long[] {1, 1, 1, 1, 1}, new float[1]), "t2");
        w.addTensor("t3", new long[] {1}, new float[1]);
        assertMessage(() -> w.addTensor("t3", new long[] {1}, new float[1]), "t3");
        GgufArray deep = GgufArray.ofInt32(new int[] {1});
        for (int i = 1; i < GgufParser.MAX_ARRAY_DEPTH; i++) {
            deep = GgufArray.ofArrays(List.of(deep));
        }
        w.putArray("deep.ok", deep); // MAX_ARRAY_DEPTH levels: still readable
        GgufArray tooDeep = GgufArray.ofArrays(List.of(deep));
        assertMessage(() -> w.putArray("deep.no", tooDeep), "deep.no");
        assertEquals(GgufParser.MAX_ARRAY_DEPTH, depthOf(GgufTestFiles.metadata(dir, w.toByteArray()).getArray("deep.ok")));
    }

    private static int depthOf(GgufArray a) {
        return a.elementType() == GgufValueType.ARRAY ? 1 + depthOf(a.getArray(0)) : 1;
    }

    @Test
    void settingAKeyAgainReplacesItInPlace() {
        GgufMetadata md = GgufTestFiles.metadata(dir, new GgufWriter().putInt32("a", 1).putInt32("b", 2)
                .putString("a", "x").toByteArray());
        assertEquals(List.of("a", "b"), List.copyOf(md.keys()));
        assertEquals("x", md.getString("a"));
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable call, String name) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
    }

    @Test
    void largeStringArraysRoundTrip() {
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < 150_000; i++) {
            tokens.add("tok" + i);
        }
        byte[] bytes = new GgufWriter().putStringArray("tokenizer.ggml.tokens", tokens).toByteArray();
        Path path = GgufTestFiles.write(dir, bytes);
        // Speed is a benchmark's business (never a timed assertion); this checks content only.
        assertEquals(tokens, GgufFile.readMetadata(path).getStringArray("tokenizer.ggml.tokens"));
    }
}
