package io.nereid.engine.gguf;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Builds a GGUF version 3 file: metadata of every value type and tensors with their raw bytes,
 * laid out as llama.cpp does (tensor data at offsets that are multiples of the alignment, each
 * tensor padded to it, {@code general.alignment} if set, else 32). Used to write models and, in
 * tests, files to corrupt.
 *
 * <p>Setting a key again replaces its value and keeps its position. Invalid input (a value that
 * does not fit its type, data whose size does not match the dims) is an
 * {@link IllegalArgumentException} naming the key or tensor.
 *
 * <p>Not thread-safe: a mutable builder for one thread. {@link #write} and {@link #toByteArray}
 * may be called more than once; tensor data given as a segment must stay valid until then.
 */
public final class GgufWriter {

    private record Tensor(String name, long[] dims, GgmlType type, MemorySegment data) {
    }

    private final Map<String, GgufMetadata.Value> metadata = new LinkedHashMap<>();
    private final Map<String, Tensor> tensors = new LinkedHashMap<>();

    // ---- metadata ----

    /**
     * Sets {@code key} to {@code value} of {@code type}, given as {@link GgufMetadata#raw} returns
     * it: any {@code Number} for integer types (range-checked; UINT64 as a bit pattern), a
     * {@code Number} for the float types, {@code Boolean}, {@code String} or {@link GgufArray}.
     * {@code put(k, md.type(k), md.raw(k))} copies a key from a file.
     */
    public GgufWriter put(String key, GgufValueType type, Object value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(type, "type");
        metadata.put(key, new GgufMetadata.Value(type, normalize(key, type, value)));
        return this;
    }

    /** Copies every key of {@code source}. */
    public GgufWriter putAll(GgufMetadata source) {
        for (String key : source.keys()) {
            put(key, source.type(key), source.raw(key));
        }
        return this;
    }

    public GgufWriter putString(String key, String value) {
        return put(key, GgufValueType.STRING, value);
    }

    public GgufWriter putBool(String key, boolean value) {
        return put(key, GgufValueType.BOOL, value);
    }

    public GgufWriter putUInt8(String key, int value) {
        return put(key, GgufValueType.UINT8, value);
    }

    public GgufWriter putInt8(String key, int value) {
        return put(key, GgufValueType.INT8, value);
    }

    public GgufWriter putUInt16(String key, int value) {
        return put(key, GgufValueType.UINT16, value);
    }

    public GgufWriter putInt16(String key, int value) {
        return put(key, GgufValueType.INT16, value);
    }

    /** A UINT32 in 0..4294967295. */
    public GgufWriter putUInt32(String key, long value) {
        return put(key, GgufValueType.UINT32, value);
    }

    public GgufWriter putInt32(String key, int value) {
        return put(key, GgufValueType.INT32, value);
    }

    /** A UINT64 given as its bit pattern. */
    public GgufWriter putUInt64(String key, long value) {
        return put(key, GgufValueType.UINT64, value);
    }

    public GgufWriter putInt64(String key, long value) {
        return put(key, GgufValueType.INT64, value);
    }

    public GgufWriter putFloat32(String key, float value) {
        return put(key, GgufValueType.FLOAT32, value);
    }

    public GgufWriter putFloat64(String key, double value) {
        return put(key, GgufValueType.FLOAT64, value);
    }

    public GgufWriter putArray(String key, GgufArray value) {
        return put(key, GgufValueType.ARRAY, value);
    }

    public GgufWriter putStringArray(String key, List<String> value) {
        return putArray(key, GgufArray.ofStrings(value));
    }

    // ---- tensors ----

    /** A tensor of any type; {@code data} must be exactly {@code type.byteSize(dims)} bytes. */
    public GgufWriter addTensor(String name, GgmlType type, long[] dims, byte[] data) {
        return addTensor(name, type, dims, MemorySegment.ofArray(data.clone()));
    }

    /** An F32 tensor; {@code data} holds the elements in GGUF order (row-major, {@code dims[0]} fastest). */
    public GgufWriter addTensor(String name, long[] dims, float[] data) {
        byte[] bytes = new byte[Math.multiplyExact(data.length, Float.BYTES)];
        MemorySegment.copy(data, 0, MemorySegment.ofArray(bytes), GgufCursor.F32, 0, data.length);
        return addTensor(name, GgmlType.F32, dims, MemorySegment.ofArray(bytes));
    }

    /**
     * A tensor whose bytes are read from {@code data} (for example another file's
     * {@link GgufFile#tensorData}) when the file is written; not copied now.
     */
    public GgufWriter addTensor(String name, GgmlType type, long[] dims, MemorySegment data) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        long[] d = dims.clone();
        if (d.length < 1 || d.length > GgufParser.MAX_DIMS) {
            throw new IllegalArgumentException("tensor '" + name + "': " + d.length + " dimensions, expected 1 to "
                    + GgufParser.MAX_DIMS);
        }
        long size;
        try {
            size = type.byteSize(d);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new IllegalArgumentException("tensor '" + name + "' " + Arrays.toString(d) + " " + type + ": "
                    + e.getMessage(), e);
        }
        if (data.byteSize() != size) {
            throw new IllegalArgumentException("tensor '" + name + "' " + Arrays.toString(d) + " " + type + " takes "
                    + size + " bytes, data has " + data.byteSize());
        }
        if (tensors.putIfAbsent(name, new Tensor(name, d, type, data)) != null) {
            throw new IllegalArgumentException("tensor '" + name + "' added twice");
        }
        return this;
    }

    // ---- output ----

    /** Writes the file, replacing {@code path} if it exists. */
    public void write(Path path) throws IOException {
        byte[] header = header();
        try (FileChannel out = FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            writeFully(out, ByteBuffer.wrap(header));
            int alignment = alignment();
            for (Tensor t : tensors.values()) {
                writeFully(out, t.data().asByteBuffer());
                int pad = (int) (GgufParser.alignUp(t.data().byteSize(), alignment) - t.data().byteSize());
                writeFully(out, ByteBuffer.allocate(pad));
            }
        }
    }

    /** The whole file in memory (small files: tests, fixtures). */
    public byte[] toByteArray() {
        byte[] header = header();
        int alignment = alignment();
        long total = header.length;
        for (Tensor t : tensors.values()) {
            total += GgufParser.alignUp(t.data().byteSize(), alignment);
        }
        if (total > GgufCursor.MAX_ARRAY) {
            throw new IllegalStateException("GGUF file of " + total + " bytes does not fit in a byte array; use write(Path)");
        }
        byte[] out = Arrays.copyOf(header, (int) total);
        long at = header.length;
        for (Tensor t : tensors.values()) {
            MemorySegment.copy(t.data(), 0, MemorySegment.ofArray(out), at, t.data().byteSize());
            at += GgufParser.alignUp(t.data().byteSize(), alignment);
        }
        return out;
    }

    /** Everything before the first tensor's data, padded to the alignment. */
    private byte[] header() {
        int alignment = alignment();
        LittleEndianBuffer out = new LittleEndianBuffer();
        out.u32(GgufParser.MAGIC);
        out.u32(3);
        out.u64(tensors.size());
        out.u64(metadata.size());
        metadata.forEach((key, value) -> {
            out.string(key);
            out.u32(value.type().id());
            encode(out, value.type(), value.raw());
        });
        long offset = 0;
        for (Tensor t : tensors.values()) {
            out.string(t.name());
            out.u32(t.dims().length);
            for (long d : t.dims()) {
                out.u64(d);
            }
            out.u32(t.type().id());
            out.u64(offset);
            offset += GgufParser.alignUp(t.data().byteSize(), alignment);
        }
        out.zeros((int) (GgufParser.alignUp(out.size(), alignment) - out.size()));
        return out.toByteArray();
    }

    private int alignment() {
        GgufMetadata.Value v = metadata.get(GgufParser.ALIGNMENT_KEY);
        if (v == null) {
            return GgufParser.DEFAULT_ALIGNMENT;
        }
        long a = v.raw() instanceof Long l ? l : 0;
        if (v.type() != GgufValueType.UINT32 || a == 0 || Long.bitCount(a) != 1 || a > (1 << 30)) {
            throw new IllegalStateException(GgufParser.ALIGNMENT_KEY + " must be a UINT32 power of two up to 2^30, is "
                    + v.type() + " " + v.raw());
        }
        return (int) a;
    }

    private static void encode(LittleEndianBuffer out, GgufValueType type, Object raw) {
        switch (type) {
            case UINT8, INT8, BOOL -> out.u8(raw instanceof Boolean b ? (b ? 1 : 0) : (int) (long) (Long) raw);
            case UINT16, INT16 -> out.u16((int) (long) (Long) raw);
            case UINT32, INT32 -> out.u32((int) (long) (Long) raw);
            case UINT64, INT64 -> out.u64((Long) raw);
            case FLOAT32 -> out.f32((Float) raw);
            case FLOAT64 -> out.f64((Double) raw);
            case STRING -> out.string((String) raw);
            case ARRAY -> encodeArray(out, (GgufArray) raw);
        }
    }

    private static void encodeArray(LittleEndianBuffer out, GgufArray a) {
        out.u32(a.elementType().id());
        out.u64(a.size());
        Object values = a.backingArray();
        switch (a.elementType()) {
            case UINT8, INT8, BOOL -> out.array(values, ValueLayout.JAVA_BYTE, a.size());
            case UINT16, INT16 -> out.array(values, GgufCursor.U16, a.size());
            case UINT32, INT32 -> out.array(values, GgufCursor.U32, a.size());
            case UINT64, INT64 -> out.array(values, GgufCursor.U64, a.size());
            case FLOAT32 -> out.array(values, GgufCursor.F32, a.size());
            case FLOAT64 -> out.array(values, GgufCursor.F64, a.size());
            case STRING -> {
                for (String s : (String[]) values) {
                    out.string(s);
                }
            }
            case ARRAY -> {
                for (GgufArray inner : (GgufArray[]) values) {
                    encodeArray(out, inner);
                }
            }
        }
    }

    /** The raw representation of {@code value} as {@link GgufMetadata#raw} gives it, or an error naming the key. */
    private static Object normalize(String key, GgufValueType type, Object value) {
        Objects.requireNonNull(value, () -> "metadata key '" + key + "': null value");
        String bad = "metadata key '" + key + "': " + value.getClass().getSimpleName() + " " + value
                + " is not a valid " + type;
        return switch (type) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> {
                if (!(value instanceof Long || value instanceof Integer || value instanceof Short
                        || value instanceof Byte)) {
                    throw new IllegalArgumentException(bad);
                }
                long v = ((Number) value).longValue();
                if (!fits(type, v)) {
                    throw new IllegalArgumentException(bad + " (out of range)");
                }
                yield v;
            }
            case FLOAT32 -> value instanceof Number n ? (Object) n.floatValue() : fail(bad);
            case FLOAT64 -> value instanceof Number n ? (Object) n.doubleValue() : fail(bad);
            case BOOL -> value instanceof Boolean ? value : fail(bad);
            case STRING -> value instanceof String ? value : fail(bad);
            case ARRAY -> {
                if (!(value instanceof GgufArray a)) {
                    throw new IllegalArgumentException(bad);
                }
                if (depth(a) > GgufParser.MAX_ARRAY_DEPTH) {
                    throw new IllegalArgumentException("metadata key '" + key + "': arrays nested deeper than "
                            + GgufParser.MAX_ARRAY_DEPTH + " cannot be read back");
                }
                yield a;
            }
        };
    }

    private static Object fail(String message) {
        throw new IllegalArgumentException(message);
    }

    private static boolean fits(GgufValueType type, long v) {
        return switch (type) {
            case UINT8 -> v >= 0 && v <= 0xFF;
            case INT8 -> v == (byte) v;
            case UINT16 -> v >= 0 && v <= 0xFFFF;
            case INT16 -> v == (short) v;
            case UINT32 -> v >= 0 && v <= 0xFFFF_FFFFL;
            case INT32 -> v == (int) v;
            default -> true; // 64-bit: every long is a value (UINT64 as its bit pattern)
        };
    }

    private static int depth(GgufArray a) {
        int inner = 0;
        if (a.elementType() == GgufValueType.ARRAY) {
            for (GgufArray x : a.asArrayList()) {
                inner = Math.max(inner, depth(x));
            }
        }
        return 1 + inner;
    }

    private static void writeFully(FileChannel out, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
    }
}
