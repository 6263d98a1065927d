package io.nereid.engine.safetensors;

import io.nereid.engine.mmap.MappedFile;
import io.nereid.engine.safetensors.SafetensorsException.Reason;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An open safetensors file: its tensor entries and their data, memory-mapped read-only through a
 * {@link MappedFile}; tensor data is never copied. {@link #open} validates the whole header
 * (see {@link SafetensorsParser} for the layout), so every tensor of a file that opens lies
 * inside it, with a size that matches its shape. Tensor data is only byte-aligned: readers use
 * unaligned access.
 *
 * <p>Thread-safety and lifecycle: immutable after {@code open}, safe to share. {@link #close()}
 * (idempotent) unmaps the file; segments from {@link #tensorData} are invalid afterwards.
 */
public final class SafetensorsFile implements AutoCloseable {

    private final MappedFile file;
    private final SafetensorsParser.Header header;
    private final Map<String, SafetensorsTensorInfo> byName;

    private SafetensorsFile(MappedFile file, SafetensorsParser.Header header) {
        this.file = file;
        this.header = header;
        Map<String, SafetensorsTensorInfo> names = LinkedHashMap.newLinkedHashMap(header.tensors().size());
        for (SafetensorsTensorInfo t : header.tensors()) {
            names.put(t.name(), t);
        }
        this.byName = Map.copyOf(names);
    }

    /**
     * Maps and validates {@code path}.
     *
     * @throws SafetensorsException if it cannot be read ({@link Reason#IO}) or is not a valid file
     */
    public static SafetensorsFile open(Path path) {
        try {
            return MappedFile.open(path, f -> new SafetensorsFile(f, SafetensorsParser.parse(f.segment(), path.toString())));
        } catch (IOException e) {
            throw new SafetensorsException(Reason.IO, path.toString(), "cannot be read: " + e, e);
        }
    }

    public Path path() {
        return file.path();
    }

    /** Every tensor, in header order (unmodifiable). */
    public List<SafetensorsTensorInfo> tensors() {
        return header.tensors();
    }

    public Optional<SafetensorsTensorInfo> findTensor(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** The tensor's bytes: a read-only slice of the mapping, valid until {@link #close()}. */
    public MemorySegment tensorData(SafetensorsTensorInfo tensor) {
        if (!tensor.equals(byName.get(tensor.name()))) {
            throw new IllegalArgumentException(tensor + " is not a tensor of " + file.path());
        }
        return file.segment().asSlice(header.dataStart() + tensor.begin(), tensor.byteSize());
    }

    /** Unmaps the file; idempotent. */
    @Override
    public void close() {
        file.close();
    }

    @Override
    public String toString() {
        return "SafetensorsFile[" + file.path() + ", " + tensors().size() + " tensors]";
    }
}
