package io.nereid.engine.mmap;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * A whole file mapped read-only through a shared {@link Arena}: what the GGUF and safetensors
 * readers sit on. Thread-safe; {@link #close()} (idempotent) unmaps it, after which every segment
 * of it throws {@link IllegalStateException} on access.
 */
public final class MappedFile implements AutoCloseable {

    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final AtomicBoolean closed = new AtomicBoolean();

    private MappedFile(Path path, Arena arena, MemorySegment segment) {
        this.path = path;
        this.arena = arena;
        this.segment = segment;
    }

    /**
     * Maps {@code path} and hands the mapping to {@code parse}; unmaps it again if {@code parse}
     * throws, so a reader that rejects a file leaks nothing.
     *
     * @throws IOException if the file cannot be opened or mapped
     */
    public static <T> T open(Path path, Function<MappedFile, T> parse) throws IOException {
        Objects.requireNonNull(path, "path");
        Arena arena = Arena.ofShared();
        MappedFile file;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            file = new MappedFile(path, arena, channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena));
        } catch (IOException | RuntimeException | Error e) {
            arena.close();
            throw e;
        }
        try {
            return parse.apply(file);
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    public Path path() {
        return path;
    }

    /** The whole file. */
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
