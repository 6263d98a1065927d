package io.nereid.engine.gguf;

import io.nereid.engine.gguf.GgufException.Reason;
import io.nereid.engine.mmap.MappedFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * An open GGUF file (version 2 or 3, little-endian): its metadata, its tensor infos and its
 * tensor data, memory-mapped read-only ({@link MappedFile}); tensor data is never
 * copied to the heap.
 *
 * <p>{@link #open} validates the whole header up front (see {@link GgufParser} for the layout),
 * so a file that opens has every tensor's data inside the file at an aligned offset; any problem
 * is a {@link GgufException} naming the file and the reason.
 *
 * <p>Thread-safety and lifecycle: immutable after {@code open} and safe to share between
 * threads. {@link #close()} (idempotent) releases the mapping: segments returned by
 * {@link #tensorData} become invalid and any later access to them throws
 * {@link IllegalStateException}, so close only after every reader is done. {@link #metadata()}
 * and {@link #tensors()} are heap copies and stay usable after close.
 */
public final class GgufFile implements AutoCloseable {

    private final MappedFile file;
    private final GgufParser.Header header;
    private final Map<String, GgufTensorInfo> byName;

    private GgufFile(MappedFile file, GgufParser.Header header) {
        this.file = file;
        this.header = header;
        Map<String, GgufTensorInfo> names = LinkedHashMap.newLinkedHashMap(header.tensors().size());
        for (GgufTensorInfo t : header.tensors()) {
            names.put(t.name(), t);
        }
        this.byName = Map.copyOf(names);
    }

    /**
     * Maps and validates {@code path}.
     *
     * @throws GgufException if the file cannot be read ({@link Reason#IO}) or is not a valid
     *     GGUF file of a supported version
     */
    public static GgufFile open(Path path) {
        try {
            return MappedFile.open(path, f -> new GgufFile(f, GgufParser.parse(f.segment(), path.toString())));
        } catch (IOException e) {
            throw new GgufException(Reason.IO, path.toString(), "cannot be read: " + e, e);
        }
    }

    /** Opens {@code path}, returns its metadata and closes it: for callers that need no tensors (tokenizers). */
    public static GgufMetadata readMetadata(Path path) {
        try (GgufFile file = open(path)) {
            return file.metadata();
        }
    }

    public Path path() {
        return file.path();
    }

    /** The format version, 2 or 3. */
    public int version() {
        return header.version();
    }

    public GgufMetadata metadata() {
        return header.metadata();
    }

    /** The data alignment: {@code general.alignment}, or 32. */
    public int alignment() {
        return header.alignment();
    }

    /** The file offset of the data section (the header's end rounded up to the alignment). */
    public long dataOffset() {
        return header.dataOffset();
    }

    public long fileSize() {
        return file.segment().byteSize();
    }

    /** Every tensor, in file order (unmodifiable). */
    public List<GgufTensorInfo> tensors() {
        return header.tensors();
    }

    public Optional<GgufTensorInfo> findTensor(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** @throws GgufException ({@link Reason#NO_SUCH_TENSOR}) naming the tensor if it is absent */
    public GgufTensorInfo tensor(String name) {
        GgufTensorInfo t = byName.get(Objects.requireNonNull(name, "name"));
        if (t == null) {
            throw new GgufException(Reason.NO_SUCH_TENSOR, file.path().toString(), "no tensor named '" + name + "'");
        }
        return t;
    }

    /**
     * The tensor's bytes: a read-only slice of the mapping, {@code byteSize} long, aligned to
     * {@link #alignment()} within the file. Valid until {@link #close()}.
     */
    public MemorySegment tensorData(String name) {
        return tensorData(tensor(name));
    }

    /** The bytes of a tensor of this file; see {@link #tensorData(String)}. */
    public MemorySegment tensorData(GgufTensorInfo tensor) {
        if (!tensor.equals(byName.get(tensor.name()))) {
            throw new IllegalArgumentException(tensor + " is not a tensor of " + file.path());
        }
        return file.segment().asSlice(header.dataOffset() + tensor.offset(), tensor.byteSize());
    }

    /** Releases the mapping; idempotent. Tensor data segments are invalid afterwards. */
    @Override
    public void close() {
        file.close();
    }

    @Override
    public String toString() {
        return "GgufFile[" + file.path() + ", v" + version() + ", " + metadata().size() + " keys, " + tensors().size()
                + " tensors]";
    }
}
