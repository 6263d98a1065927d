package io.nereid.engine.safetensors;

import io.nereid.engine.json.Json;
import io.nereid.engine.json.JsonException;
import io.nereid.engine.safetensors.SafetensorsException.Reason;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Reads and validates the header of a safetensors file:
 *
 * <pre>
 * +----------------+--------------------------------+------------------------------------+
 * | N: u64 LE      | N bytes of UTF-8 JSON          | data section: every tensor's bytes |
 * +----------------+--------------------------------+------------------------------------+
 *  {"name": {"dtype": "BF16", "shape": [rows, cols], "data_offsets": [begin, end]}, ...,
 *   "__metadata__": {"format": "pt"}}          offsets are relative to the data section
 * </pre>
 *
 * As the reference implementation requires, the tensors' byte ranges must tile the data section
 * exactly: no range past its end, no overlap, no uncovered byte; each range is as long as its
 * shape and dtype say. {@code __metadata__} is ignored. Stateless.
 */
final class SafetensorsParser {

    /** The reference implementation's limit; a larger header is a corrupt length, not a model. */
    static final long MAX_HEADER_BYTES = 100_000_000L;

    /** A parsed header: its tensors in header order, and where the data section starts in the file. */
    record Header(List<SafetensorsTensorInfo> tensors, long dataStart) {
    }

    private SafetensorsParser() {
    }

    static Header parse(MemorySegment file, String source) {
        long size = file.byteSize();
        if (size < 8) {
            throw new SafetensorsException(Reason.TRUNCATED, source, size + " bytes: too short for the 8-byte header length");
        }
        long n = file.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        if (n < 2 || n > MAX_HEADER_BYTES) {
            throw new SafetensorsException(Reason.BAD_HEADER, source, "header length " + Long.toUnsignedString(n)
                    + " is outside 2.." + MAX_HEADER_BYTES);
        }
        if (n > size - 8) {
            throw new SafetensorsException(Reason.TRUNCATED, source, "the header announces " + n + " bytes, the file has "
                    + (size - 8) + " after the length");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(file.asSlice(8, n).toArray(ValueLayout.JAVA_BYTE))).toString();
        } catch (CharacterCodingException e) {
            throw new SafetensorsException(Reason.BAD_HEADER, source, "the header is not UTF-8", e);
        }
        Map<String, Object> json;
        try {
            json = Json.parseObject(text);
        } catch (JsonException e) {
            throw new SafetensorsException(Reason.BAD_HEADER, source, "the header is not a JSON object: " + e.getMessage(), e);
        }
        long dataStart = 8 + n;
        long dataSize = size - dataStart;
        List<SafetensorsTensorInfo> tensors = new ArrayList<>(json.size());
        for (Map.Entry<String, Object> e : json.entrySet()) {
            if (!e.getKey().equals("__metadata__")) {
                tensors.add(tensor(e.getKey(), e.getValue(), dataSize, source));
            }
        }
        checkTiling(tensors, dataSize, source);
        return new Header(List.copyOf(tensors), dataStart);
    }

    private static SafetensorsTensorInfo tensor(String name, Object value, long dataSize, String source) {
        if (!(value instanceof Map<?, ?> entry)) {
            throw bad(source, name, "is not an object");
        }
        if (!(entry.get("dtype") instanceof String dtypeName)) {
            throw bad(source, name, "has no string \"dtype\"");
        }
        SafetensorsDtype dtype = SafetensorsDtype.fromName(dtypeName).orElseThrow(() -> new SafetensorsException(
                Reason.UNKNOWN_DTYPE, source, "tensor " + name + " has unknown dtype '" + dtypeName + "'"));
        long[] shape = longs(entry.get("shape"), -1, source, name, "shape");
        long[] offsets = longs(entry.get("data_offsets"), 2, source, name, "data_offsets");
        long begin = offsets[0];
        long end = offsets[1];
        if (begin > end || end > dataSize) {
            throw new SafetensorsException(Reason.OUT_OF_BOUNDS, source, "tensor " + name + " has data_offsets [" + begin
                    + ", " + end + "] outside the " + dataSize + "-byte data section");
        }
        long bytes = dtype.bytes();
        try {
            for (long d : shape) {
                bytes = Math.multiplyExact(bytes, d);
            }
        } catch (ArithmeticException overflow) {
            throw new SafetensorsException(Reason.BAD_SHAPE, source, "tensor " + name + ": the size of shape "
                    + java.util.Arrays.toString(shape) + " overflows");
        }
        if (bytes != end - begin) {
            throw new SafetensorsException(Reason.BAD_SHAPE, source, "tensor " + name + ": " + dtype + " "
                    + java.util.Arrays.toString(shape) + " takes " + bytes + " bytes, data_offsets give " + (end - begin));
        }
        return new SafetensorsTensorInfo(name, dtype, shape, begin, end);
    }

    /** A list of non-negative integers, of {@code length} elements unless it is -1. */
    private static long[] longs(Object value, int length, String source, String name, String field) {
        if (!(value instanceof List<?> list) || (length >= 0 && list.size() != length)) {
            throw bad(source, name, "has no \"" + field + "\" array" + (length >= 0 ? " of " + length + " integers" : ""));
        }
        long[] out = new long[list.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(list.get(i) instanceof Long l) || l < 0) {
                throw bad(source, name, "has \"" + field + "\" " + list + ": not non-negative integers");
            }
            out[i] = l;
        }
        return out;
    }

    private static void checkTiling(List<SafetensorsTensorInfo> tensors, long dataSize, String source) {
        List<SafetensorsTensorInfo> sorted = new ArrayList<>(tensors);
        sorted.sort(Comparator.comparingLong(SafetensorsTensorInfo::begin).thenComparingLong(SafetensorsTensorInfo::end));
        long covered = 0;
        SafetensorsTensorInfo previous = null;
        for (SafetensorsTensorInfo t : sorted) {
            if (t.begin() < covered) {
                throw new SafetensorsException(Reason.OVERLAP, source, "tensors " + previous.name() + " and " + t.name()
                        + " overlap at byte " + t.begin() + " of the data section");
            }
            if (t.begin() > covered) {
                throw new SafetensorsException(Reason.GAP, source, "bytes " + covered + ".." + t.begin()
                        + " of the data section belong to no tensor (before " + t.name() + ")");
            }
            covered = t.end();
            previous = t;
        }
        if (covered != dataSize) {
            throw new SafetensorsException(Reason.GAP, source, "bytes " + covered + ".." + dataSize
                    + " of the data section belong to no tensor");
        }
    }

    private static SafetensorsException bad(String source, String name, String what) {
        return new SafetensorsException(Reason.BAD_HEADER, source, "tensor " + name + " " + what);
    }
}
