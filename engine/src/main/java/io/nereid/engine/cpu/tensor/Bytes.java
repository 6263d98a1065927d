package io.nereid.engine.cpu.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Little-endian, unaligned reads and writes of the fields of ggml blocks. GGUF tensor data is
 * only aligned as a whole; blocks of 18, 34, 144, 176 or 210 bytes put their fp16 fields at any
 * address, so every layout here is the unaligned one.
 */
final class Bytes {

    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Bytes() {
    }

    /** The fp16 value at {@code offset}, as a float. */
    static float f16(MemorySegment s, long offset) {
        return Float.float16ToFloat(s.get(SHORT, offset));
    }

    static void putF16(MemorySegment s, long offset, float value) {
        s.set(SHORT, offset, Float.floatToFloat16(value));
    }

    /** The unsigned byte at {@code offset}, 0..255. */
    static int u8(MemorySegment s, long offset) {
        return s.get(ValueLayout.JAVA_BYTE, offset) & 0xFF;
    }

    /** The signed byte at {@code offset}, -128..127. */
    static int s8(MemorySegment s, long offset) {
        return s.get(ValueLayout.JAVA_BYTE, offset);
    }

    static void putByte(MemorySegment s, long offset, int value) {
        s.set(ValueLayout.JAVA_BYTE, offset, (byte) value);
    }
}
