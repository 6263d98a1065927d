package io.nereid.engine.safetensors;

import io.nereid.engine.json.Json;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Builds a safetensors file (layout in {@link SafetensorsParser}): tensors are laid out in the
 * order added, back to back, and the header is padded with spaces to a multiple of 8 bytes as the
 * reference writer does. For tests and for exporting models. Not thread-safe.
 */
public final class SafetensorsWriter {

    private record Tensor(SafetensorsDtype dtype, long[] shape, MemorySegment data) {
    }

    private final Map<String, Tensor> tensors = new LinkedHashMap<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();

    /** A {@code __metadata__} entry (string to string, as the format allows). */
    public SafetensorsWriter putMetadata(String key, String value) {
        metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * A tensor whose bytes (little-endian elements, row-major) are read from {@code data} when the
     * file is written.
     *
     * @param shape row-major (PyTorch) order
     * @throws IllegalArgumentException if the name is taken or the data size does not match
     */
    public SafetensorsWriter add(String name, SafetensorsDtype dtype, long[] shape, MemorySegment data) {
        Objects.requireNonNull(name, "name");
        long size = dtype.bytes();
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("tensor '" + name + "': negative dimension in " + Arrays.toString(shape));
            }
            size = Math.multiplyExact(size, d);
        }
        if (data.byteSize() != size) {
            throw new IllegalArgumentException("tensor '" + name + "' " + dtype + " " + Arrays.toString(shape) + " takes "
                    + size + " bytes, data has " + data.byteSize());
        }
        if (name.equals("__metadata__") || tensors.putIfAbsent(name, new Tensor(dtype, shape.clone(), data)) != null) {
            throw new IllegalArgumentException("tensor name '" + name + "' is taken");
        }
        return this;
    }

    /** Writes the file, replacing {@code path} if it exists. */
    public void write(Path path) throws IOException {
        try (FileChannel out = FileChannel.open(path, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer header = ByteBuffer.wrap(header());
            while (header.hasRemaining()) {
                out.write(header);
            }
            for (Tensor t : tensors.values()) {
                ByteBuffer b = t.data().asByteBuffer();
                while (b.hasRemaining()) {
                    out.write(b);
                }
            }
        }
    }

    /** The whole file in memory (small files: tests). */
    public byte[] toByteArray() {
        byte[] header = header();
        long total = header.length;
        for (Tensor t : tensors.values()) {
            total += t.data().byteSize();
        }
        byte[] out = Arrays.copyOf(header, Math.toIntExact(total));
        long at = header.length;
        for (Tensor t : tensors.values()) {
            MemorySegment.copy(t.data(), 0, MemorySegment.ofArray(out), at, t.data().byteSize());
            at += t.data().byteSize();
        }
        return out;
    }

    /** The 8-byte length and the padded JSON header. */
    private byte[] header() {
        StringBuilder json = new StringBuilder("{");
        if (!metadata.isEmpty()) {
            json.append("\"__metadata__\":{");
            metadata.forEach((k, v) -> json.append(Json.quote(k)).append(':').append(Json.quote(v)).append(','));
            json.setCharAt(json.length() - 1, '}');
            json.append(',');
        }
        long offset = 0;
        for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
            Tensor t = e.getValue();
            long end = offset + t.data().byteSize();
            json.append(Json.quote(e.getKey())).append(":{\"dtype\":\"").append(t.dtype().name()).append("\",\"shape\":")
                    .append(Arrays.toString(t.shape()).replace(" ", "")).append(",\"data_offsets\":[").append(offset)
                    .append(',').append(end).append("]},");
            offset = end;
        }
        if (json.length() > 1) {
            json.setLength(json.length() - 1);
        }
        json.append('}');
        byte[] text = json.toString().getBytes(StandardCharsets.UTF_8);
        int padded = (text.length + 7) & ~7;
        byte[] out = new byte[8 + padded];
        Arrays.fill(out, 8, out.length, (byte) ' ');
        System.arraycopy(text, 0, out, 8, text.length);
        MemorySegment.ofArray(out).set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0, padded);
        return out;
    }
}
