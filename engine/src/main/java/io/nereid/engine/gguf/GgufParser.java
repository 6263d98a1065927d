package io.nereid.engine.gguf;

import io.nereid.engine.gguf.GgufException.Reason;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;

/**
 * Parses and validates a GGUF header (everything before the data section) from a segment.
 * Stateless; each call uses its own {@link GgufCursor}.
 *
 * <pre>
 * u32 magic "GGUF" | u32 version (2, 3) | u64 tensor_count | u64 kv_count
 * kv_count × ( string key | u32 value_type | value )
 * tensor_count × ( string name | u32 n_dims | n_dims × u64 dim | u32 ggml_type | u64 offset )
 * padding to general.alignment (default 32) | data section: tensor data at aligned offsets
 * string = u64 length + UTF-8 bytes; array = u32 element_type + u64 count + elements
 * </pre>
 */
final class GgufParser {

    /** A parsed header. {@code dataOffset} is the file offset of the data section. */
    record Header(int version, GgufMetadata metadata, List<GgufTensorInfo> tensors, int alignment, long dataOffset) {
    }

    static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
    static final int DEFAULT_ALIGNMENT = 32;
    static final String ALIGNMENT_KEY = "general.alignment";
    static final int MAX_DIMS = 4;
    /** Arrays of arrays deeper than this are rejected rather than risking the stack. */
    static final int MAX_ARRAY_DEPTH = 8;

    /** name (u64 length) + n_dims + at least one dim + type + offset. */
    private static final int MIN_TENSOR_INFO = 8 + 4 + 8 + 4 + 8;
    /** key (u64 length) + type + the smallest value. */
    private static final int MIN_KV = 8 + 4 + 1;

    private GgufParser() {
    }

    static Header parse(MemorySegment segment, String source) {
        GgufCursor in = new GgufCursor(segment, source);
        int version = readPreamble(in);
        int tensorCount = in.count("tensor count", MIN_TENSOR_INFO);
        int kvCount = in.count("metadata key/value count", MIN_KV);
        GgufMetadata metadata = readMetadata(in, kvCount);
        int alignment = alignment(metadata, in);
        List<GgufTensorInfo> tensors = readTensorInfos(in, tensorCount);
        long dataOffset = alignUp(in.position(), alignment);
        checkTensorData(in, tensors, alignment, dataOffset, segment.byteSize());
        return new Header(version, metadata, List.copyOf(tensors), alignment, dataOffset);
    }

    private static int readPreamble(GgufCursor in) {
        int magic = in.u32("magic");
        if (magic != MAGIC) {
            throw in.error(Reason.BAD_MAGIC, "not a GGUF file: magic is " + describeMagic(magic) + ", expected 'GGUF'");
        }
        int version = in.u32("version");
        if (version == 2 || version == 3) {
            return version;
        }
        if (Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3) {
            throw in.error(Reason.UNSUPPORTED_VERSION, "version " + Integer.toUnsignedString(version)
                    + " is a big-endian GGUF file (version " + Integer.reverseBytes(version) + "), which is not supported");
        }
        String why = version == 1 ? " (GGUF v1 used 32-bit counts and lengths)" : "";
        throw in.error(Reason.UNSUPPORTED_VERSION, "unsupported version " + Integer.toUnsignedString(version) + why
                + "; supported versions are 2 and 3");
    }

    private static String describeMagic(int magic) {
        StringBuilder s = new StringBuilder("'");
        for (int i = 0; i < 4; i++) {
            int b = (magic >>> (8 * i)) & 0xFF;
            s.append(b >= 0x20 && b < 0x7F ? Character.toString(b) : String.format("\\x%02x", b));
        }
        return s.append('\'').toString();
    }

    private static GgufMetadata readMetadata(GgufCursor in, int kvCount) {
        LinkedHashMap<String, GgufMetadata.Value> values = LinkedHashMap.newLinkedHashMap(kvCount);
        for (int i = 0; i < kvCount; i++) {
            long at = in.position();
            String key = in.string("key of metadata entry " + i);
            String what = "metadata key '" + key + "'";
            GgufValueType type = valueType(in, what);
            Object raw = readValue(in, type, what, 0);
            if (values.putIfAbsent(key, new GgufMetadata.Value(type, raw)) != null) {
                throw in.error(Reason.DUPLICATE_KEY, "metadata key '" + key + "' appears twice (again at offset " + at + ")");
            }
        }
        return new GgufMetadata(in.source(), values);
    }

    private static GgufValueType valueType(GgufCursor in, String what) {
        long at = in.position();
        int id = in.u32(what + " value type");
        return GgufValueType.byId(id).orElseThrow(() -> in.error(Reason.UNKNOWN_VALUE_TYPE,
                what + ": unknown value type " + Integer.toUnsignedString(id) + " at offset " + at + " (known: 0..12)"));
    }

    private static Object readValue(GgufCursor in, GgufValueType type, String what, int depth) {
        return switch (type) {
            case UINT8 -> (long) (in.u8(what) & 0xFF);
            case INT8 -> (long) in.u8(what);
            case UINT16 -> (long) (in.u16(what) & 0xFFFF);
            case INT16 -> (long) in.u16(what);
            case UINT32 -> in.u32(what) & 0xFFFF_FFFFL;
            case INT32 -> (long) in.u32(what);
            case UINT64, INT64 -> in.u64(what);
            case FLOAT32 -> in.f32(what);
            case FLOAT64 -> in.f64(what);
            case BOOL -> bool(in, in.u8(what), what);
            case STRING -> in.string(what);
            case ARRAY -> readArray(in, what, depth);
        };
    }

    private static boolean bool(GgufCursor in, byte b, String what) {
        if (b != 0 && b != 1) {
            throw in.error(Reason.BAD_VALUE, what + ": bool value " + (b & 0xFF) + " at offset " + (in.position() - 1)
                    + " is neither 0 nor 1");
        }
        return b == 1;
    }

    private static GgufArray readArray(GgufCursor in, String what, int depth) {
        if (depth >= MAX_ARRAY_DEPTH) {
            throw in.error(Reason.BAD_VALUE, what + ": arrays nested deeper than " + MAX_ARRAY_DEPTH
                    + " at offset " + in.position());
        }
        GgufValueType element = valueType(in, what + " array element");
        int n = in.count(what + ": array count of " + element, element.minEncodedSize());
        Object values = switch (element) {
            case UINT8, INT8 -> copied(in, new byte[n], ValueLayout.JAVA_BYTE, n, what);
            case BOOL -> bools(in, n, what);
            case UINT16, INT16 -> copied(in, new short[n], GgufCursor.U16, n, what);
            case UINT32, INT32 -> copied(in, new int[n], GgufCursor.U32, n, what);
            case UINT64, INT64 -> copied(in, new long[n], GgufCursor.U64, n, what);
            case FLOAT32 -> copied(in, new float[n], GgufCursor.F32, n, what);
            case FLOAT64 -> copied(in, new double[n], GgufCursor.F64, n, what);
            case STRING -> {
                String[] s = new String[n];
                for (int i = 0; i < n; i++) {
                    s[i] = in.string(what);
                }
                yield s;
            }
            case ARRAY -> {
                GgufArray[] a = new GgufArray[n];
                for (int i = 0; i < n; i++) {
                    a[i] = readArray(in, what, depth + 1);
                }
                yield a;
            }
        };
        return new GgufArray(element, values, n);
    }

    private static Object copied(GgufCursor in, Object array, ValueLayout layout, int n, String what) {
        in.copy(layout, array, n, what);
        return array;
    }

    private static byte[] bools(GgufCursor in, int n, String what) {
        long start = in.position();
        byte[] b = new byte[n];
        in.copy(ValueLayout.JAVA_BYTE, b, n, what);
        for (int i = 0; i < n; i++) {
            if (b[i] != 0 && b[i] != 1) {
                throw in.error(Reason.BAD_VALUE, what + ": bool element " + i + " is " + (b[i] & 0xFF)
                        + " at offset " + (start + i) + ", neither 0 nor 1");
            }
        }
        return b;
    }

    private static int alignment(GgufMetadata metadata, GgufCursor in) {
        if (!metadata.contains(ALIGNMENT_KEY)) {
            return DEFAULT_ALIGNMENT;
        }
        if (metadata.type(ALIGNMENT_KEY) != GgufValueType.UINT32) {
            throw in.error(Reason.BAD_ALIGNMENT, ALIGNMENT_KEY + " has type " + metadata.type(ALIGNMENT_KEY)
                    + ", expected UINT32");
        }
        long a = metadata.getLong(ALIGNMENT_KEY);
        if (a == 0 || Long.bitCount(a) != 1 || a > (1 << 30)) {
            throw in.error(Reason.BAD_ALIGNMENT, ALIGNMENT_KEY + " is " + a + ", expected a power of two up to 2^30");
        }
        return (int) a;
    }

    private static List<GgufTensorInfo> readTensorInfos(GgufCursor in, int count) {
        List<GgufTensorInfo> tensors = new ArrayList<>(count);
        Set<String> names = new HashSet<>();
        for (int i = 0; i < count; i++) {
            String name = in.string("name of tensor " + i);
            String what = "tensor '" + name + "'";
            int rank = in.u32(what + " n_dims");
            if (rank < 1 || rank > MAX_DIMS) {
                throw in.error(Reason.BAD_DIMS, what + " has " + Integer.toUnsignedString(rank)
                        + " dimensions, expected 1 to " + MAX_DIMS);
            }
            long[] dims = new long[rank];
            for (int d = 0; d < rank; d++) {
                dims[d] = in.u64(what + " dimension " + d);
                if (dims[d] < 0) {
                    throw in.error(Reason.BAD_DIMS, what + " dimension " + d + " is " + Long.toUnsignedString(dims[d])
                            + ", larger than 2^63-1");
                }
            }
            long typeAt = in.position();
            int typeId = in.u32(what + " type");
            GgmlType type = GgmlType.byId(typeId).orElseThrow(() -> in.error(Reason.UNKNOWN_GGML_TYPE,
                    what + " has unknown ggml type " + Integer.toUnsignedString(typeId) + " at offset " + typeAt));
            long offset = in.u64(what + " offset");
            long byteSize = byteSize(in, what, type, dims);
            if (!names.add(name)) {
                throw in.error(Reason.DUPLICATE_TENSOR, what + " appears twice");
            }
            tensors.add(new GgufTensorInfo(name, dims, type, offset, byteSize));
        }
        return tensors;
    }

    private static long byteSize(GgufCursor in, String what, GgmlType type, long[] dims) {
        try {
            return type.byteSize(dims);
        } catch (IllegalArgumentException e) {
            throw in.error(Reason.BAD_DIMS, what + " " + java.util.Arrays.toString(dims) + " " + type + ": " + e.getMessage());
        } catch (ArithmeticException e) {
            throw in.error(Reason.BAD_DIMS, what + " " + java.util.Arrays.toString(dims) + " " + type
                    + ": size overflows 64 bits");
        }
    }

    private static void checkTensorData(GgufCursor in, List<GgufTensorInfo> tensors, int alignment, long dataOffset,
            long fileSize) {
        long available = fileSize - dataOffset; // negative when the header's padding is cut off
        for (GgufTensorInfo t : tensors) {
            String what = "tensor '" + t.name() + "'";
            if (Long.remainderUnsigned(t.offset(), alignment) != 0) {
                throw in.error(Reason.MISALIGNED_TENSOR, what + " offset " + Long.toUnsignedString(t.offset())
                        + " is not a multiple of the alignment " + alignment);
            }
            if (t.offset() < 0 || available < 0 || t.offset() > available || t.byteSize() > available - t.offset()) {
                throw in.error(Reason.TENSOR_OUT_OF_BOUNDS, what + " data (" + t.byteSize() + " bytes at data offset "
                        + Long.toUnsignedString(t.offset()) + ", data section at file offset " + dataOffset
                        + ") ends past the end of the file (" + fileSize + " bytes)");
            }
        }
    }

    static long alignUp(long offset, int alignment) {
        return (offset + alignment - 1) & -(long) alignment;
    }
}
