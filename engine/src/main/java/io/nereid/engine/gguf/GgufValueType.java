package io.nereid.engine.gguf;

import java.util.Optional;

/**
 * The type tag of a GGUF metadata value, with its wire id. Integer scalars are exposed by
 * {@link GgufMetadata#raw} as {@code Long} (unsigned types zero-extended; {@code UINT64} as its
 * two's-complement bit pattern), {@code FLOAT32} as {@code Float}, {@code FLOAT64} as
 * {@code Double}, {@code BOOL} as {@code Boolean}, {@code STRING} as {@code String} and
 * {@code ARRAY} as {@link GgufArray}.
 */
public enum GgufValueType {
    UINT8(0, 1),
    INT8(1, 1),
    UINT16(2, 2),
    INT16(3, 2),
    UINT32(4, 4),
    INT32(5, 4),
    FLOAT32(6, 4),
    BOOL(7, 1),
    /** u64 byte length + UTF-8 bytes, so at least 8 bytes. */
    STRING(8, 8),
    /** u32 element type + u64 count + elements, so at least 12 bytes. */
    ARRAY(9, 12),
    UINT64(10, 8),
    INT64(11, 8),
    FLOAT64(12, 8);

    private static final GgufValueType[] BY_ID = values(); // ids are 0..12 in declaration order

    private final int id;
    private final int minEncodedSize;

    GgufValueType(int id, int minEncodedSize) {
        this.id = id;
        this.minEncodedSize = minEncodedSize;
    }

    /** The id written in the file. */
    public int id() {
        return id;
    }

    /** Bytes one value of this type takes in the file: exact for scalars, the minimum for STRING and ARRAY. */
    public int minEncodedSize() {
        return minEncodedSize;
    }

    public boolean isInteger() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
            default -> false;
        };
    }

    public boolean isFloat() {
        return this == FLOAT32 || this == FLOAT64;
    }

    /** The type with this wire id, or empty for an unknown id (ids are read as unsigned u32). */
    public static Optional<GgufValueType> byId(int id) {
        return id >= 0 && id < BY_ID.length ? Optional.of(BY_ID[id]) : Optional.empty();
    }
}
