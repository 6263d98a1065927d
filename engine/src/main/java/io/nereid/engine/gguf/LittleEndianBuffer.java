package io.nereid.engine.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A growable little-endian byte buffer for the GGUF header the writer builds. Each write reserves
 * its bytes with {@link #at} before touching {@code bytes}/{@code view}, which growing replaces.
 * Not thread-safe.
 */
final class LittleEndianBuffer {

    private byte[] bytes = new byte[1024];
    private MemorySegment view = MemorySegment.ofArray(bytes);
    private int size;

    int size() {
        return size;
    }

    byte[] toByteArray() {
        return Arrays.copyOf(bytes, size);
    }

    void u8(int v) {
        int i = (int) at(1); // reserve first: at() may replace the array
        bytes[i] = (byte) v;
    }

    void u16(int v) {
        long i = at(2);
        view.set(GgufCursor.U16, i, (short) v);
    }

    void u32(int v) {
        long i = at(4);
        view.set(GgufCursor.U32, i, v);
    }

    void u64(long v) {
        long i = at(8);
        view.set(GgufCursor.U64, i, v);
    }

    void f32(float v) {
        long i = at(4);
        view.set(GgufCursor.F32, i, v);
    }

    void f64(double v) {
        long i = at(8);
        view.set(GgufCursor.F64, i, v);
    }

    /** u64 byte length + UTF-8 bytes. */
    void string(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        u64(utf8.length);
        int i = (int) at(utf8.length);
        System.arraycopy(utf8, 0, bytes, i, utf8.length);
    }

    /** {@code count} elements of a primitive array, each written as {@code layout} (little-endian). */
    void array(Object array, ValueLayout layout, int count) {
        long from = at(Math.multiplyExact(count, (int) layout.byteSize()));
        MemorySegment.copy(array, 0, view, layout, from, count);
    }

    void zeros(int n) {
        at(n); // new capacity is zero-filled and never reused
    }

    /** Reserves {@code n} bytes at the end and returns their offset. */
    private long at(int n) {
        if (n > bytes.length - size) {
            long wanted = Math.max((long) size + n, 2L * bytes.length);
            if (wanted > GgufCursor.MAX_ARRAY) {
                throw new IllegalStateException("GGUF header larger than " + GgufCursor.MAX_ARRAY + " bytes");
            }
            bytes = Arrays.copyOf(bytes, (int) wanted);
            view = MemorySegment.ofArray(bytes);
        }
        int from = size;
        size += n;
        return from;
    }
}
