package io.nereid.engine.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.safetensors.SafetensorsException.Reason;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The safetensors reader against its writer, and the corrupt-file table: each a typed error naming the problem. */
class SafetensorsFileTest {

    @TempDir
    Path dir;

    private Path write(String name, byte[] bytes) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, bytes);
        return p;
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    @ParameterizedTest
    @EnumSource(SafetensorsDtype.class)
    void everyDtypeRoundTrips(SafetensorsDtype dtype) throws IOException {
        byte[] a = pattern(3 * 5 * dtype.bytes(), 1);
        byte[] b = pattern(7 * dtype.bytes(), 2);
        SafetensorsWriter w = new SafetensorsWriter().putMetadata("format", "pt")
                .add("a.weight", dtype, new long[] {3, 5}, MemorySegment.ofArray(a))
                .add("scalar-free \"name\"", dtype, new long[] {7}, MemorySegment.ofArray(b))
                .add("empty", dtype, new long[] {0, 4}, MemorySegment.ofArray(new byte[0]));
        Path p = dir.resolve("m.safetensors");
        w.write(p);
        assertArrayEquals(w.toByteArray(), Files.readAllBytes(p));
        long headerLength = MemorySegment.ofArray(Files.readAllBytes(p))
                .get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        assertEquals(0, headerLength % 8, "header padded to 8 bytes");
        assertEquals(8 + headerLength + a.length + b.length, Files.size(p), "tensors back to back");
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertEquals(List.of("a.weight", "scalar-free \"name\"", "empty"), f.tensors().stream().map(SafetensorsTensorInfo::name).toList());
            SafetensorsTensorInfo t = f.findTensor("a.weight").orElseThrow();
            assertEquals(dtype, t.dtype());
            assertArrayEquals(new long[] {3, 5}, t.shape());
            assertArrayEquals(new long[] {5, 3}, t.ggufDims());
            assertArrayEquals(a, f.tensorData(t).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(b, f.tensorData(f.findTensor("scalar-free \"name\"").orElseThrow()).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0, f.tensorData(f.findTensor("empty").orElseThrow()).byteSize());
        }
        assertEquals(dtype == SafetensorsDtype.F32 || dtype == SafetensorsDtype.F16 || dtype == SafetensorsDtype.BF16,
                dtype.ggmlType().isPresent());
    }

    @Test
    void closedFileDataCannotBeRead() throws IOException {
        Path p = dir.resolve("c.safetensors");
        new SafetensorsWriter().add("x", SafetensorsDtype.F32, new long[] {2}, MemorySegment.ofArray(new byte[8])).write(p);
        SafetensorsFile f = SafetensorsFile.open(p);
        MemorySegment data = f.tensorData(f.findTensor("x").orElseThrow());
        f.close();
        f.close();
        assertThrows(IllegalStateException.class, () -> data.get(ValueLayout.JAVA_BYTE, 0));
    }

    /** A file of the given header JSON (padded with spaces as writers do) and {@code dataBytes} zero bytes. */
    private Path file(String name, String header, int dataBytes) throws IOException {
        byte[] json = header.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[8 + json.length + dataBytes];
        MemorySegment.ofArray(out).set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, json.length);
        System.arraycopy(json, 0, out, 8, json.length);
        return write(name, out);
    }

    private static void fails(Path p, Reason reason, String... parts) {
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsFile.open(p).close());
        assertEquals(reason, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains(p.toString()), e.getMessage());
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
        }
    }

    private static String entry(String name, String dtype, String shape, long begin, long end) {
        return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" + begin + "," + end + "]}";
    }

    @Test
    void metadataIsIgnoredAndAnEmptyFileOfTensorsIsValid() throws IOException {
        try (SafetensorsFile f = SafetensorsFile.open(file("meta.safetensors", "{\"__metadata__\":{\"a\":\"b\"}}  ", 0))) {
            assertTrue(f.tensors().isEmpty());
        }
    }

    @Test
    void truncatedAndMalformedHeaders() throws IOException {
        fails(write("tiny", new byte[5]), Reason.TRUNCATED, "too short");
        byte[] good = new SafetensorsWriter().add("x", SafetensorsDtype.F32, new long[] {4}, MemorySegment.ofArray(new byte[16]))
                .toByteArray();
        fails(write("cut-header", Arrays.copyOf(good, 20)), Reason.TRUNCATED, "announces");
        byte[] huge = good.clone();
        huge[7] = 0x7f;
        fails(write("huge-length", huge), Reason.BAD_HEADER, "header length");
        fails(file("not-json.safetensors", "{\"x\": [1,", 0), Reason.BAD_HEADER, "JSON");
        fails(file("array.safetensors", "[1, 2]", 0), Reason.BAD_HEADER, "JSON object");
        byte[] latin1 = good.clone();
        latin1[10] = (byte) 0xff;
        fails(write("not-utf8", latin1), Reason.BAD_HEADER, "UTF-8");
        fails(file("no-dtype.safetensors", "{\"x\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4), Reason.BAD_HEADER, "x", "dtype");
        fails(file("bad-shape.safetensors", "{" + entry("x", "F32", "[-1]", 0, 4) + "}", 4), Reason.BAD_HEADER, "x", "shape");
        fails(file("bad-offsets.safetensors", "{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4),
                Reason.BAD_HEADER, "x", "data_offsets");
    }

    @Test
    void unknownDtypeIsNamed() throws IOException {
        fails(file("dtype.safetensors", "{" + entry("w", "Q4", "[2]", 0, 2) + "}", 2), Reason.UNKNOWN_DTYPE, "w", "'Q4'");
    }

    @Test
    void offsetsAreCheckedAgainstTheFileAndEachOther() throws IOException {
        fails(file("past-end.safetensors", "{" + entry("w", "F32", "[4]", 0, 16) + "}", 8), Reason.OUT_OF_BOUNDS, "w", "[0, 16]");
        fails(file("reversed.safetensors", "{" + entry("w", "F32", "[0]", 8, 4) + "}", 8), Reason.OUT_OF_BOUNDS, "w");
        fails(file("size.safetensors", "{" + entry("w", "F32", "[3]", 0, 8) + "}", 8), Reason.BAD_SHAPE, "w", "12 bytes");
        fails(file("overflow.safetensors", "{" + entry("w", "F64", "[4294967296,4294967296]", 0, 8) + "}", 8),
                Reason.BAD_SHAPE, "w", "overflows");
        fails(file("overlap.safetensors", "{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", 12),
                Reason.OVERLAP, "a", "b");
        fails(file("gap.safetensors", "{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[1]", 8, 12) + "}", 12),
                Reason.GAP, "4..8");
        fails(file("tail.safetensors", "{" + entry("a", "F32", "[1]", 0, 4) + "}", 12), Reason.GAP, "4..12");
    }

    @Test
    void missingFileIsAnIoError() {
        fails(dir.resolve("absent.safetensors"), Reason.IO, "cannot be read");
    }
}
