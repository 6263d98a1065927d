package io.nereid.engine.gguf;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes test GGUF bytes to a file, opens it, and patches little-endian fields of the bytes. */
final class GgufTestFiles {

    private GgufTestFiles() {
    }

    static Path write(Path dir, byte[] bytes) {
        try {
            return Files.write(dir.resolve("test.gguf"), bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static GgufFile open(Path dir, byte[] bytes) {
        return GgufFile.open(write(dir, bytes));
    }

    /** The metadata of {@code bytes}, read through a file that is closed again. */
    static GgufMetadata metadata(Path dir, byte[] bytes) {
        return GgufFile.readMetadata(write(dir, bytes));
    }

    /** Asserts that opening {@code bytes} fails with a {@link GgufException} naming the file and {@code reason}. */
    static GgufException rejected(Path dir, byte[] bytes, GgufException.Reason reason) {
        Path file = write(dir, bytes);
        GgufException e = assertThrows(GgufException.class, () -> GgufFile.open(file).close());
        assertTrue(e.reason() == reason, "expected " + reason + ", got " + e.reason() + ": " + e.getMessage());
        assertTrue(e.getMessage().contains(file.toString()), "message names the file: " + e.getMessage());
        return e;
    }

    static byte[] withU8(byte[] bytes, int offset, int value) {
        byte[] copy = bytes.clone();
        copy[offset] = (byte) value;
        return copy;
    }

    static byte[] withU32(byte[] bytes, int offset, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN).putInt(offset, value);
        return copy;
    }

    static byte[] withU64(byte[] bytes, int offset, long value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN).putLong(offset, value);
        return copy;
    }

    static int u32(byte[] bytes, int offset) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(offset);
    }

    static long u64(byte[] bytes, int offset) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(offset);
    }
}
