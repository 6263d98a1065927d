package io.nereid.engine.gguf;

import java.util.Arrays;
import java.util.Objects;

/**
 * One tensor's entry in a GGUF header.
 *
 * @param name the tensor name, e.g. {@code blk.0.attn_q.weight}
 * @param dims dimensions in GGUF order: {@code dims[0]} is the row length, the fastest-varying
 *     one (a 512-token × 64-wide embedding is {@code [64, 512]}); 1 to 4 of them
 * @param type element type
 * @param offset byte offset of the data from the start of the data section (not of the file)
 * @param byteSize bytes of data, {@link GgmlType#byteSize(long[])} of the dims
 */
public record GgufTensorInfo(String name, long[] dims, GgmlType type, long offset, long byteSize) {

    public GgufTensorInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        dims = dims.clone();
    }

    /** A copy of the dimensions, GGUF order. */
    @Override
    public long[] dims() {
        return dims.clone();
    }

    public int rank() {
        return dims.length;
    }

    public long dim(int i) {
        return dims[i];
    }

    public long elementCount() {
        long n = 1;
        for (long d : dims) {
            n *= d; // validated against overflow when read or built
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufTensorInfo t && t.name.equals(name) && Arrays.equals(t.dims, dims) && t.type == type
                && t.offset == offset && t.byteSize == byteSize;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, Arrays.hashCode(dims), type, offset, byteSize);
    }

    @Override
    public String toString() {
        return "GgufTensorInfo[" + name + " " + type + " " + Arrays.toString(dims) + " @" + offset + " +" + byteSize + "]";
    }
}
