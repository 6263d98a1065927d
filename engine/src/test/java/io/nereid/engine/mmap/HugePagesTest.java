package io.nereid.engine.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    /**
     * A copy of a slice of a file mapping (not page aligned, over 2 MiB) has its bytes; the
     * mapping, whose whole pages the copy drops from the process, still reads the file's bytes
     * afterwards, and so does a copy of native memory that is no mapping (which nothing drops).
     */
    @Test
    void copiesHaveTheBytesAndLeaveTheSourceReadable(@TempDir Path dir) throws IOException {
        byte[] bytes = new byte[(3 << 20) + 5000];
        new Random(7).nextBytes(bytes);
        Path file = Files.write(dir.resolve("weights.bin"), bytes);
        try (FileChannel ch = FileChannel.open(file); Arena arena = Arena.ofShared()) {
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes.length, arena);
            MemorySegment slice = mapped.asSlice(1234, bytes.length - 2000);
            MemorySegment copy = HugePages.copyOf(slice);
            assertEquals(slice.byteSize(), copy.byteSize());
            assertEquals(-1, copy.mismatch(slice), "the copy has the slice's bytes");
            for (long i = 0; i < slice.byteSize(); i += 4099) {
                assertEquals(bytes[(int) (1234 + i)], slice.get(ValueLayout.JAVA_BYTE, i), "the mapping at " + i);
            }
            MemorySegment own = arena.allocate(bytes.length);
            own.copyFrom(MemorySegment.ofArray(bytes));
            MemorySegment copy2 = HugePages.copyOf(own);
            assertEquals(-1, copy2.mismatch(MemorySegment.ofArray(bytes)));
            assertEquals(-1, own.mismatch(MemorySegment.ofArray(bytes)), "native memory that is no mapping is left as it was");
        }
    }
}
