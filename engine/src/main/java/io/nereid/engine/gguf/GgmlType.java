package io.nereid.engine.gguf;

import java.util.Optional;

/**
 * A ggml tensor element type: its id in GGUF tensor infos and its storage layout, {@code
 * blockSize} elements packed into {@code bytesPerBlock} bytes (1 and the element size for the
 * plain types). Sizes are those of ggml's {@code type_traits} (llama.cpp b4748; MXFP4 from later
 * ggml). Ids 4, 5, 31–33 and 36–38 belong to removed types and are unknown here.
 *
 * <p>Every type listed can be read (its byte size is known); which ones the engine can compute
 * with is decided by the model code, not here.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),     // f16 d + 16 bytes of nibbles
    Q4_1(3, 32, 20),     // f16 d, m + 16 bytes of nibbles
    Q5_0(6, 32, 22),     // f16 d + u32 high bits + 16 bytes
    Q5_1(7, 32, 24),     // f16 d, m + u32 high bits + 16 bytes
    Q8_0(8, 32, 34),     // f16 d + 32 int8
    Q8_1(9, 32, 36),     // f16 d, s + 32 int8
    Q2_K(10, 256, 84),   // 16 scales + 64 quants + f16 d, dmin
    Q3_K(11, 256, 110),  // 32 hmask + 64 quants + 12 scales + f16 d
    Q4_K(12, 256, 144),  // f16 d, dmin + 12 scales + 128 quants
    Q5_K(13, 256, 176),  // f16 d, dmin + 12 scales + 32 high bits + 128 quants
    Q6_K(14, 256, 210),  // 128 low + 64 high + 16 scales + f16 d
    Q8_K(15, 256, 292),  // f32 d + 256 int8 + 16 int16 block sums
    IQ2_XXS(16, 256, 66),
    IQ2_XS(17, 256, 74),
    IQ3_XXS(18, 256, 98),
    IQ1_S(19, 256, 50),
    IQ4_NL(20, 32, 18),
    IQ3_S(21, 256, 110),
    IQ2_S(22, 256, 82),
    IQ4_XS(23, 256, 136),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    IQ1_M(29, 256, 56),
    BF16(30, 1, 2),
    TQ1_0(34, 256, 54),
    TQ2_0(35, 256, 66),
    MXFP4(39, 32, 17);

    private static final GgmlType[] BY_ID = new GgmlType[40];

    static {
        for (GgmlType t : values()) {
            BY_ID[t.id] = t;
        }
    }

    private final int id;
    private final int blockSize;
    private final int bytesPerBlock;

    GgmlType(int id, int blockSize, int bytesPerBlock) {
        this.id = id;
        this.blockSize = blockSize;
        this.bytesPerBlock = bytesPerBlock;
    }

    /** The id written in GGUF tensor infos. */
    public int id() {
        return id;
    }

    /** Elements per block; 1 for the plain types. */
    public int blockSize() {
        return blockSize;
    }

    /** Bytes per block; the element size for the plain types. */
    public int bytesPerBlock() {
        return bytesPerBlock;
    }

    public boolean isQuantized() {
        return blockSize > 1;
    }

    /** The type with this id, or empty for an unknown or removed id. */
    public static Optional<GgmlType> byId(int id) {
        return id >= 0 && id < BY_ID.length ? Optional.ofNullable(BY_ID[id]) : Optional.empty();
    }

    /**
     * Bytes a tensor of this type with these dimensions (GGUF order, {@code dims[0]} the row
     * length) occupies.
     *
     * @throws IllegalArgumentException if a dimension is negative or the row length is not a
     *     multiple of {@link #blockSize()}
     * @throws ArithmeticException if the element count or byte size overflows a long
     */
    public long byteSize(long[] dims) {
        long elements = 1;
        for (long d : dims) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension " + d);
            }
            elements = Math.multiplyExact(elements, d);
        }
        if (dims.length > 0 && dims[0] % blockSize != 0) {
            throw new IllegalArgumentException("row length " + dims[0] + " is not a multiple of the "
                    + name() + " block size " + blockSize);
        }
        return Math.multiplyExact(elements / blockSize, (long) bytesPerBlock);
    }
}
