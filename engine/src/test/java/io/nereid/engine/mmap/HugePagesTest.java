package io.nereid.engine.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import org.junit.jupiter.api.Test;

class HugePagesTest {

    /**
     * Below and above 2 MiB, the segment has the size asked for (at least one byte), starts
     * zeroed, keeps what is written at both ends, and is aligned as promised (2 MiB where it is
     * mapped for huge pages, which Linux does by default).
     */
    @Test
    void allocatesZeroedWritableSegmentsOfTheSizeAsked() {
        for (long bytes : new long[] {0, 1, 4096, (2L << 20) - 1, 2L << 20, (5L << 20) + 12345}) {
            MemorySegment s = HugePages.allocate(bytes);
            long size = Math.max(1, bytes);
            assertEquals(size, s.byteSize(), "size for " + bytes);
            long step = Math.max(1, size / 97);
            for (long i = 0; i < size; i += step) {
                assertEquals(0, s.get(ValueLayout.JAVA_BYTE, i), "zeroed at " + i + " of " + size);
            }
            s.set(ValueLayout.JAVA_BYTE, 0, (byte) 7);
            s.set(ValueLayout.JAVA_BYTE, size - 1, (byte) (size == 1 ? 7 : 9));
            assertEquals(7, s.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(size == 1 ? 7 : 9, s.get(ValueLayout.JAVA_BYTE, size - 1));
            long alignment = bytes >= 2L << 20 && HugePages.mapped() ? 2L << 20 : 64;
            assertEquals(0, s.address() % alignment, bytes + " bytes aligned to " + alignment);
        }
        if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
            assertTrue(HugePages.mapped(), "Linux maps the copies for huge pages by default");
        }
        assertThrows(IllegalArgumentException.class, () -> HugePages.allocate(-1));
    }
}
