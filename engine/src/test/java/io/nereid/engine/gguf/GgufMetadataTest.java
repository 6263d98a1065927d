package io.nereid.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.gguf.GgufException.Reason;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Typed getters: conversions between integer widths, and errors that name the key. */
class GgufMetadataTest {

    @TempDir
    Path dir;

    private GgufMetadata md;

    @BeforeEach
    void write() {
        md = GgufTestFiles.metadata(dir, GgufWriterTest.everyValueType().toByteArray());
    }

    @Test
    void integerGettersAcceptEveryIntegerType() {
        assertEquals(255, md.getInt("u8"));
        assertEquals(255L, md.getUnsigned("u8"));
        assertEquals(OptionalLong.of(-128), md.findLong("i8"));
        assertEquals(OptionalInt.of(65535), md.findInt("u16"));
        assertEquals(4294967295L, md.getUnsigned("u32"));
    }

    @Test
    void valuesOutsideTheRequestedRangeNameTheKey() {
        assertFails(() -> md.getInt("u32"), Reason.OUT_OF_RANGE, "u32");
        assertFails(() -> md.getLong("u64"), Reason.OUT_OF_RANGE, "u64"); // 2^64-1
        assertFails(() -> md.getUnsigned("i8"), Reason.OUT_OF_RANGE, "i8"); // -128
        assertFails(() -> md.getIntArray("a.u32"), Reason.OUT_OF_RANGE, "a.u32"); // 4294967295
        assertFails(() -> md.getIntArray("a.i64"), Reason.OUT_OF_RANGE, "a.i64");
    }

    @Test
    void missingKeysNameTheKeyAndFindersReturnEmpty() {
        assertFails(() -> md.getString("no.such.key"), Reason.MISSING_KEY, "no.such.key");
        assertFails(() -> md.getIntArray("no.such.array"), Reason.MISSING_KEY, "no.such.array");
        assertFails(() -> md.type("nothing"), Reason.MISSING_KEY, "nothing");
        assertEquals(Optional.empty(), md.findString("x"));
        assertEquals(OptionalLong.empty(), md.findLong("x"));
        assertEquals(OptionalInt.empty(), md.findInt("x"));
        assertEquals(Optional.empty(), md.findBool("x"));
        assertEquals(Optional.empty(), md.findFloat("x"));
        assertTrue(md.findDouble("x").isEmpty());
        assertEquals(Optional.empty(), md.findArray("x"));
        assertEquals(Optional.empty(), md.architecture());
        assertTrue(md.contains("u8"));
        assertTrue(!md.contains("x"));
    }

    @Test
    void wrongTypesNameTheKeyAndBothTypes() {
        GgufException e = assertFails(() -> md.getString("u8"), Reason.WRONG_TYPE, "u8");
        assertTrue(e.getMessage().contains("UINT8") && e.getMessage().contains("STRING"), e.getMessage());
        assertFails(() -> md.findString("u8"), Reason.WRONG_TYPE, "u8"); // present but wrong: not empty
        assertFails(() -> md.getLong("f32"), Reason.WRONG_TYPE, "f32");
        assertFails(() -> md.getFloat("i32"), Reason.WRONG_TYPE, "i32");
        assertFails(() -> md.getBool("u8"), Reason.WRONG_TYPE, "u8");
        assertFails(() -> md.getStringArray("a.i32"), Reason.WRONG_TYPE, "a.i32");
        assertFails(() -> md.getFloatArray("a.i32"), Reason.WRONG_TYPE, "a.i32");
        assertFails(() -> md.getIntArray("a.f32"), Reason.WRONG_TYPE, "a.f32");
        assertFails(() -> md.getArray("s"), Reason.WRONG_TYPE, "s");
    }

    @Test
    void arraysAreCopiesOrUnmodifiableViews() {
        int[] ints = md.getIntArray("a.i32");
        ints[0] = 42;
        assertEquals(Integer.MIN_VALUE, md.getIntArray("a.i32")[0]);
        List<String> strings = md.getStringArray("a.str");
        assertThrows(UnsupportedOperationException.class, () -> strings.set(0, "x"));
        assertThrows(UnsupportedOperationException.class, () -> md.keys().remove("u8"));
        assertArrayEquals(new int[] {0, 1, 255}, md.getIntArray("a.u8"));
    }

    @Test
    void arrayElementTypeMismatchIsAnIllegalStateOnTheArrayItself() {
        GgufArray strings = md.getArray("a.str");
        assertThrows(IllegalStateException.class, () -> strings.getLong(0));
        assertThrows(IndexOutOfBoundsException.class, () -> strings.getString(4));
    }

    @Test
    void metadataOutlivesTheFileButTensorDataDoesNot() {
        GgufFile file = GgufTestFiles.open(dir, new GgufWriter().putString("general.architecture", "llama")
                .addTensor("t", new long[] {4}, new float[] {1, 2, 3, 4}).toByteArray());
        MemorySegment data = file.tensorData("t");
        file.close();
        file.close(); // idempotent
        assertEquals("llama", file.metadata().architecture().orElseThrow());
        assertEquals(1, file.tensors().size());
        assertThrows(IllegalStateException.class, () -> data.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void unknownTensorNameIsNamed() {
        try (GgufFile file = GgufTestFiles.open(dir, new GgufWriter().addTensor("t", new long[] {1}, new float[1])
                .toByteArray())) {
            GgufException e = assertThrows(GgufException.class, () -> file.tensorData("blk.0.attn_q.weight"));
            assertEquals(Reason.NO_SUCH_TENSOR, e.reason());
            assertTrue(e.getMessage().contains("blk.0.attn_q.weight"));
            assertEquals(Optional.empty(), file.findTensor("u"));
        }
    }

    private static GgufException assertFails(Executable call, Reason reason, String key) {
        GgufException e = assertThrows(GgufException.class, call);
        assertEquals(reason, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains("'" + key + "'"), e.getMessage());
        return e;
    }
}
