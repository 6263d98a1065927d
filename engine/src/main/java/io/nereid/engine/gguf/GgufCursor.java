package io.nereid.engine.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked little-endian read position in a GGUF file's segment. Every read checks the
 * bytes left first and throws {@link GgufException} ({@code TRUNCATED}, or {@code BAD_LENGTH}
 * for a string length the file cannot hold) naming what was being read and where; nothing
 * reaches the segment's own bounds check. Confined to the thread that parses the header.
 */
final class GgufCursor {

    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Longest Java array the reader will allocate (the VM's practical limit). */
    static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

    private final MemorySegment segment;
    private final long size;
    private final String source;
    private long position;
    private byte[] scratch = new byte[256]; // reused for string bytes: one copy, one String per string

    GgufCursor(MemorySegment segment, String source) {
        this.segment = segment;
        this.size = segment.byteSize();
        this.source = source;
    }

    long position() {
        return position;
    }

    long remaining() {
        return size - position;
    }

    String source() {
        return source;
    }

    GgufException error(GgufException.Reason reason, String detail) {
        return new GgufException(reason, source, detail);
    }

    /** Reserves {@code n} bytes and returns their offset. */
    long take(long n, String what) {
        if (n < 0 || n > size - position) {
            throw error(GgufException.Reason.TRUNCATED, "file ends while reading " + what + " at offset " + position
                    + ": needs " + n + " bytes, " + (size - position) + " left (file size " + size + ")");
        }
        long at = position;
        position += n;
        return at;
    }

    byte u8(String what) {
        return segment.get(ValueLayout.JAVA_BYTE, take(1, what));
    }

    short u16(String what) {
        return segment.get(U16, take(2, what));
    }

    int u32(String what) {
        return segment.get(U32, take(4, what));
    }

    long u64(String what) {
        return segment.get(U64, take(8, what));
    }

    float f32(String what) {
        return segment.get(F32, take(4, what));
    }

    double f64(String what) {
        return segment.get(F64, take(8, what));
    }

    /**
     * A u64 count of items each at least {@code minItemSize} bytes long, checked against the
     * bytes left so that no absurd count is ever allocated.
     */
    int count(String what, long minItemSize) {
        long at = position;
        long n = u64(what);
        if (n < 0 || n > remaining() / minItemSize || n > MAX_ARRAY) {
            throw error(GgufException.Reason.BAD_LENGTH, what + " " + Long.toUnsignedString(n) + " at offset " + at
                    + " is impossible: " + remaining() + " bytes are left and each item takes at least "
                    + minItemSize);
        }
        return (int) n;
    }

    /** A u64 length + UTF-8 bytes. Malformed UTF-8 is replaced with U+FFFD, as {@link String#String(byte[], java.nio.charset.Charset)} does. */
    String string(String what) {
        long at = position;
        long n = u64(what + " length");
        if (n < 0 || n > remaining() || n > MAX_ARRAY) {
            throw error(GgufException.Reason.BAD_LENGTH, what + ": string length " + Long.toUnsignedString(n)
                    + " at offset " + at + " exceeds the " + remaining() + " bytes left in the file");
        }
        int len = (int) n;
        long from = take(len, what);
        if (scratch.length < len) {
            scratch = new byte[(int) Math.min(MAX_ARRAY, Math.max(len, 2L * scratch.length))];
        }
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, from, scratch, 0, len);
        return new String(scratch, 0, len, StandardCharsets.UTF_8);
    }

    /** Copies {@code count} elements of {@code layout} into {@code array} (a primitive array of that element). */
    void copy(ValueLayout layout, Object array, int count, String what) {
        long from = take(count * layout.byteSize(), what); // count <= MAX_ARRAY, so no overflow
        MemorySegment.copy(segment, layout, from, array, 0, count);
    }
}
