package io.nereid.engine.gguf;

import static io.nereid.engine.gguf.GgufTestFiles.rejected;
import static io.nereid.engine.gguf.GgufTestFiles.withU32;
import static io.nereid.engine.gguf.GgufTestFiles.withU64;
import static io.nereid.engine.gguf.GgufTestFiles.withU8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.gguf.GgufException.Reason;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Truncated, corrupt and unsupported files are rejected with a {@link GgufException} that names
 * the file and the reason, never another exception. Offsets below follow the layout: 24-byte
 * preamble (magic, version, tensor count, kv count), then for a one-character key: its u64
 * length at 24, the character at 32, the value type at 33 and the value at 37.
 */
class GgufCorruptFileTest {

    private static final int KEY_TYPE = 33;
    private static final int VALUE = 37;

    @TempDir
    Path dir;

    /** Metadata of every type and two tensors, the last one ending on the alignment. */
    private static byte[] smallModel() {
        return GgufWriterTest.everyValueType()
                .addTensor("a", new long[] {3}, new float[] {1, 2, 3})
                .addTensor("b", new long[] {8}, new float[8])
                .toByteArray();
    }

    /** No metadata, one F32 tensor "t" of dims [8, 1]: offsets of its info fields. */
    private static final int T_NDIMS = 33;
    private static final int T_DIM0 = 37;
    private static final int T_DIM1 = 45;
    private static final int T_TYPE = 53;
    private static final int T_OFFSET = 57;

    private static byte[] oneTensor() {
        byte[] bytes = new GgufWriter().addTensor("t", new long[] {8, 1}, new float[8]).toByteArray();
        assertEquals(GgmlType.F32.id(), GgufTestFiles.u32(bytes, T_TYPE));
        assertEquals(128, bytes.length); // 65 header bytes padded to 96, 32 bytes of data
        return bytes;
    }

    @Test
    void theUntouchedFilesOpen() {
        try (GgufFile file = GgufTestFiles.open(dir, smallModel())) {
            assertEquals(2, file.tensors().size());
        }
        try (GgufFile file = GgufTestFiles.open(dir, oneTensor())) {
            assertEquals(96, file.dataOffset());
        }
    }

    @Test
    void truncatingAtEveryByteIsAGgufException() throws IOException {
        byte[] full = smallModel();
        Set<Reason> seen = EnumSet.noneOf(Reason.class);
        Path path = dir.resolve("cut.gguf");
        for (int length = 0; length < full.length; length++) {
            Files.write(path, Arrays.copyOf(full, length));
            int cut = length;
            GgufException e = assertThrows(GgufException.class, () -> GgufFile.open(path).close(), () -> "cut at " + cut);
            assertTrue(e.getMessage().contains(path.toString()), e.getMessage());
            seen.add(e.reason());
        }
        assertEquals(EnumSet.of(Reason.TRUNCATED, Reason.BAD_LENGTH, Reason.TENSOR_OUT_OF_BOUNDS), seen);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tokenizers/gpt-2/vocab.gguf", "tokenizers/llama-spm/vocab.gguf", "models/stories260K.gguf"})
    void truncatedRealFilesAreGgufExceptions(String fixture) throws IOException {
        byte[] full = Files.readAllBytes(Fixtures.path(fixture));
        for (int k = 0; k < 64; k++) {
            int length = (int) ((long) full.length * k / 64) + k; // spread over the file, odd offsets too
            byte[] cut = Arrays.copyOf(full, length);
            Path path = GgufTestFiles.write(dir, cut);
            assertThrows(GgufException.class, () -> GgufFile.open(path).close(), () -> fixture + " cut at " + length);
        }
    }

    @Test
    void randomByteCorruptionGivesAFileOrAGgufException() {
        byte[] full = smallModel();
        Random random = new Random(20250220);
        int opened = 0;
        for (int i = 0; i < 2000; i++) {
            byte[] bytes = full.clone();
            for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
                bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
            }
            try (GgufFile file = GgufTestFiles.open(dir, bytes)) {
                for (GgufTensorInfo t : file.tensors()) {
                    MemorySegment data = file.tensorData(t);
                    data.get(ValueLayout.JAVA_BYTE, data.byteSize() - 1); // readable to the last byte
                }
                opened++;
            } catch (GgufException expected) {
                // the reason is checked by the targeted tests below
            }
        }
        assertTrue(opened > 0, "some corruptions only touch values");
    }

    @Test
    void badMagic() {
        byte[] bytes = withU8(smallModel(), 0, 'X');
        assertTrue(rejected(dir, bytes, Reason.BAD_MAGIC).getMessage().contains("'XGUF'"));
        rejected(dir, new byte[] {0, 1, 2, 3, 4, 5, 6, 7}, Reason.BAD_MAGIC);
    }

    @Test
    void emptyAndTinyFilesAreTruncated() {
        assertTrue(rejected(dir, new byte[0], Reason.TRUNCATED).getMessage().contains("magic"));
        rejected(dir, "GGU".getBytes(), Reason.TRUNCATED);
    }

    @Test
    void versionOneAndUnknownVersionsAreUnsupported() {
        assertTrue(rejected(dir, withU32(smallModel(), 4, 1), Reason.UNSUPPORTED_VERSION).getMessage()
                .contains("version 1"));
        assertTrue(rejected(dir, withU32(smallModel(), 4, 4), Reason.UNSUPPORTED_VERSION).getMessage()
                .contains("version 4"));
        assertTrue(rejected(dir, withU32(smallModel(), 4, Integer.reverseBytes(3)), Reason.UNSUPPORTED_VERSION)
                .getMessage().contains("big-endian"));
    }

    @Test
    void versionTwoReadsLikeVersionThree() {
        try (GgufFile file = GgufTestFiles.open(dir, withU32(smallModel(), 4, 2))) {
            assertEquals(2, file.version());
            assertEquals(255, file.metadata().getInt("u8"));
        }
    }

    @Test
    void unknownValueTypeNamesTheKey() {
        byte[] bytes = new GgufWriter().putUInt32("k", 7).toByteArray();
        String message = rejected(dir, withU32(bytes, KEY_TYPE, 13), Reason.UNKNOWN_VALUE_TYPE).getMessage();
        assertTrue(message.contains("'k'") && message.contains("unknown value type 13"), message);
        rejected(dir, withU32(bytes, KEY_TYPE, -1), Reason.UNKNOWN_VALUE_TYPE);
    }

    @Test
    void unknownArrayElementTypeNamesTheKey() {
        byte[] bytes = new GgufWriter().putArray("k", GgufArray.ofInt32(new int[] {1, 2})).toByteArray();
        String message = rejected(dir, withU32(bytes, VALUE, 99), Reason.UNKNOWN_VALUE_TYPE).getMessage();
        assertTrue(message.contains("'k'") && message.contains("99"), message);
    }

    @ParameterizedTest
    @ValueSource(longs = {Long.MAX_VALUE, -1L, 1L << 40, 0}) // 0: one byte more than the file holds
    void hugeStringLengthIsBadLength(long length) {
        byte[] bytes = new GgufWriter().putString("k", "hello").toByteArray();
        assertEquals(5, GgufTestFiles.u64(bytes, VALUE));
        if (length == 0) {
            length = bytes.length - (VALUE + 8) + 1; // the header is padded, so more than the 5 string bytes are left
        }
        String message = rejected(dir, withU64(bytes, VALUE, length), Reason.BAD_LENGTH).getMessage();
        assertTrue(message.contains("'k'") && message.contains("string length " + Long.toUnsignedString(length)),
                message);
    }

    @Test
    void hugeKeyLengthIsBadLength() {
        byte[] bytes = new GgufWriter().putString("k", "v").toByteArray();
        String message = rejected(dir, withU64(bytes, 24, -2L), Reason.BAD_LENGTH).getMessage();
        assertTrue(message.contains("key of metadata entry 0"), message);
    }

    @ParameterizedTest
    @ValueSource(longs = {Long.MAX_VALUE, -1L, 1L << 31, 0}) // 0: one int32 more than the file holds
    void hugeArrayCountIsBadLength(long count) {
        byte[] bytes = new GgufWriter().putArray("k", GgufArray.ofInt32(new int[] {1, 2})).toByteArray();
        int countAt = VALUE + 4;
        assertEquals(2, GgufTestFiles.u64(bytes, countAt));
        if (count == 0) {
            count = (bytes.length - (countAt + 8)) / 4 + 1;
        }
        String message = rejected(dir, withU64(bytes, countAt, count), Reason.BAD_LENGTH).getMessage();
        assertTrue(message.contains("'k'") && message.contains("array count"), message);
    }

    @Test
    void hugeStringArrayCountIsBadLengthBeforeAnyAllocation() {
        byte[] bytes = new GgufWriter().putStringArray("k", List.of("a", "b")).toByteArray();
        rejected(dir, withU64(bytes, VALUE + 4, Integer.MAX_VALUE), Reason.BAD_LENGTH);
    }

    @Test
    void hugeTensorAndKeyCountsAreBadLength() {
        assertTrue(rejected(dir, withU64(smallModel(), 8, -1L), Reason.BAD_LENGTH).getMessage().contains("tensor count"));
        assertTrue(rejected(dir, withU64(smallModel(), 16, 1L << 50), Reason.BAD_LENGTH).getMessage()
                .contains("key/value count"));
    }

    @Test
    void boolOtherThanZeroOrOneIsBadValue() {
        byte[] bytes = new GgufWriter().putBool("k", true).toByteArray();
        assertTrue(rejected(dir, withU8(bytes, VALUE, 2), Reason.BAD_VALUE).getMessage().contains("'k'"));
        byte[] array = new GgufWriter().putArray("k", GgufArray.ofBools(new boolean[] {true, false})).toByteArray();
        rejected(dir, withU8(array, VALUE + 12 + 1, 7), Reason.BAD_VALUE);
    }

    @Test
    void deeplyNestedArraysAreBadValueNotAStackOverflow() {
        // 10,000 arrays each holding one array: a small file that would recurse 10,000 deep.
        GgufWriter w = new GgufWriter().putArray("k", GgufArray.ofInt32(new int[0]));
        byte[] bytes = w.toByteArray();
        byte[] deep = new byte[VALUE + 12 * 10_000];
        System.arraycopy(bytes, 0, deep, 0, VALUE);
        ByteBuffer out = ByteBuffer.wrap(deep).order(ByteOrder.LITTLE_ENDIAN).position(VALUE);
        for (int i = 0; i < 10_000; i++) {
            boolean last = i == 9_999;
            out.putInt(last ? GgufValueType.INT32.id() : GgufValueType.ARRAY.id()).putLong(last ? 0 : 1);
        }
        assertTrue(rejected(dir, deep, Reason.BAD_VALUE).getMessage().contains("nested deeper"));
    }

    @Test
    void duplicateKeyIsRejected() {
        byte[] bytes = new GgufWriter().putInt32("ka", 1).putInt32("kb", 2).toByteArray();
        int secondKey = 24 + 8 + 2 + 4 + 4 + 8; // first entry, then the second key's length
        assertEquals('b', bytes[secondKey + 1]);
        assertTrue(rejected(dir, withU8(bytes, secondKey + 1, 'a'), Reason.DUPLICATE_KEY).getMessage().contains("'ka'"));
    }

    @Test
    void alignmentMustBeAUInt32PowerOfTwo() {
        byte[] bytes = new GgufWriter().putUInt32("general.alignment", 64).toByteArray();
        int valueAt = 24 + 8 + "general.alignment".length() + 4;
        assertEquals(64, GgufTestFiles.u32(bytes, valueAt));
        rejected(dir, withU32(bytes, valueAt, 48), Reason.BAD_ALIGNMENT);
        rejected(dir, withU32(bytes, valueAt, 0), Reason.BAD_ALIGNMENT);
        String message = rejected(dir, withU32(bytes, valueAt - 4, GgufValueType.INT32.id()), Reason.BAD_ALIGNMENT)
                .getMessage();
        assertTrue(message.contains("general.alignment") && message.contains("INT32"), message);
    }

    @Test
    void misalignedTensorOffsetNamesTheTensor() {
        String message = rejected(dir, withU64(oneTensor(), T_OFFSET, 4), Reason.MISALIGNED_TENSOR).getMessage();
        assertTrue(message.contains("'t'") && message.contains("alignment 32"), message);
    }

    @ParameterizedTest
    @ValueSource(longs = {32, 1L << 40, Long.MAX_VALUE - 31, -32L})
    void tensorDataPastTheEndNamesTheTensor(long offset) {
        String message = rejected(dir, withU64(oneTensor(), T_OFFSET, offset), Reason.TENSOR_OUT_OF_BOUNDS)
                .getMessage();
        assertTrue(message.contains("'t'") && message.contains("past the end"), message);
    }

    @Test
    void tensorLargerThanTheFileIsOutOfBounds() {
        rejected(dir, withU64(oneTensor(), T_DIM1, 2), Reason.TENSOR_OUT_OF_BOUNDS);
    }

    @ParameterizedTest
    @ValueSource(ints = {4, 5, 31, 40, 99, -1})
    void unknownGgmlTypeNamesTheTensor(int type) {
        String message = rejected(dir, withU32(oneTensor(), T_TYPE, type), Reason.UNKNOWN_GGML_TYPE).getMessage();
        assertTrue(message.contains("'t'") && message.contains("unknown ggml type " + Integer.toUnsignedString(type)),
                message);
    }

    @Test
    void dimsThatOverflowAreBadDims() {
        byte[] bytes = withU64(withU64(oneTensor(), T_DIM0, 1L << 32), T_DIM1, 1L << 32);
        assertTrue(rejected(dir, bytes, Reason.BAD_DIMS).getMessage().contains("overflows"));
        // 2^62 F32 elements fit a long but their byte size does not
        rejected(dir, withU64(withU64(oneTensor(), T_DIM0, 1L << 31), T_DIM1, 1L << 31), Reason.BAD_DIMS);
    }

    @Test
    void negativeDimensionsAndBadRanksAreBadDims() {
        rejected(dir, withU64(oneTensor(), T_DIM1, -1L), Reason.BAD_DIMS);
        rejected(dir, withU32(oneTensor(), T_NDIMS, 5), Reason.BAD_DIMS);
        rejected(dir, withU32(oneTensor(), T_NDIMS, 0), Reason.BAD_DIMS);
    }

    @Test
    void rowNotAMultipleOfTheBlockSizeIsBadDims() {
        String message = rejected(dir, withU32(oneTensor(), T_TYPE, GgmlType.Q8_0.id()), Reason.BAD_DIMS).getMessage();
        assertTrue(message.contains("'t'") && message.contains("block size 32"), message);
    }

    @Test
    void duplicateTensorNameIsRejected() {
        byte[] bytes = new GgufWriter().addTensor("a", new long[] {1}, new float[1])
                .addTensor("b", new long[] {1}, new float[1]).toByteArray();
        int secondName = 24 + (8 + 1 + 4 + 8 + 4 + 8) + 8;
        assertEquals('b', bytes[secondName]);
        rejected(dir, withU8(bytes, secondName, 'a'), Reason.DUPLICATE_TENSOR);
    }

    @Test
    void missingFileIsAnIoError() {
        GgufException e = assertThrows(GgufException.class, () -> GgufFile.open(dir.resolve("absent.gguf")));
        assertEquals(Reason.IO, e.reason());
        assertTrue(e.getMessage().contains("absent.gguf"), e.getMessage());
    }
}
