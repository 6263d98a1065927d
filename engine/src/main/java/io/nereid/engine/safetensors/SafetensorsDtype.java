package io.nereid.engine.safetensors;

import io.nereid.engine.gguf.GgmlType;
import java.util.Arrays;
import java.util.Optional;

/**
 * The element types a safetensors header may name ({@code "dtype"}), with their sizes, so that
 * every tensor's byte range can be checked whatever its type. Only {@link #F32}, {@link #F16} and
 * {@link #BF16} can be computed with ({@link #ggmlType()}); the others are read and rejected by
 * whoever binds the tensor.
 */
public enum SafetensorsDtype {
    BOOL(1), U8(1), I8(1), F8_E5M2(1), F8_E4M3(1), I16(2), U16(2), F16(2), BF16(2), I32(4), U32(4), F32(4),
    F64(8), I64(8), U64(8);

    private final int bytes;

    SafetensorsDtype(int bytes) {
        this.bytes = bytes;
    }

    /** Bytes per element. */
    public int bytes() {
        return bytes;
    }

    /** The ggml type with the same element encoding (little-endian), for the types the kernels compute with. */
    public Optional<GgmlType> ggmlType() {
        return switch (this) {
            case F32 -> Optional.of(GgmlType.F32);
            case F16 -> Optional.of(GgmlType.F16);
            case BF16 -> Optional.of(GgmlType.BF16);
            default -> Optional.empty();
        };
    }

    /** The dtype written as {@code name} in a header, if it is one of these. */
    public static Optional<SafetensorsDtype> fromName(String name) {
        return Arrays.stream(values()).filter(d -> d.name().equals(name)).findFirst();
    }
}
