package io.nereid.nativebackend.cuda;

import io.nereid.engine.gguf.GgmlType;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The weight types the CUDA kernels read, each in its own GGUF block layout (uploaded as the file holds
 * it, no repacking): the suffix of its kernels ({@code gemv_q4_k}, {@code embed_q4_k},
 * {@code dequant_q4_k}) and how many bytes a row takes.
 */
enum WeightFormat {
    F32(GgmlType.F32, "f32"),
    F16(GgmlType.F16, "f16"),
    BF16(GgmlType.BF16, "bf16"),
    Q8_0(GgmlType.Q8_0, "q8_0"),
    Q4_0(GgmlType.Q4_0, "q4_0"),
    Q4_K(GgmlType.Q4_K, "q4_k"),
    Q5_K(GgmlType.Q5_K, "q5_k"),
    Q6_K(GgmlType.Q6_K, "q6_k");

    private static final Map<GgmlType, WeightFormat> BY_TYPE = Arrays.stream(values())
            .collect(Collectors.toMap(f -> f.type, f -> f));

    final GgmlType type;
    final String suffix;

    WeightFormat(GgmlType type, String suffix) {
        this.type = type;
        this.suffix = suffix;
    }

    static Optional<WeightFormat> of(GgmlType type) {
        return Optional.ofNullable(BY_TYPE.get(type));
    }

    /** The types there are kernels for, for messages. */
    static String supported() {
        return Arrays.stream(values()).map(f -> f.type.name()).collect(Collectors.joining(", "));
    }

    /**
     * Bytes of one row of {@code cols} values.
     *
     * @throws IllegalArgumentException when a quantized row is not whole 32-value groups and blocks (float
     *                                  formats take rows of any length)
     */
    long rowBytes(int cols) {
        if (type.blockSize() > 1 && cols % 32 != 0 || cols % type.blockSize() != 0) {
            throw new IllegalArgumentException("rows of " + cols + " values: the CUDA kernels need a multiple of "
                    + Math.max(32, type.blockSize()) + " for " + type);
        }
        return (long) cols / type.blockSize() * type.bytesPerBlock();
    }

    /** The GEMV kernel for rows of {@code cols}: the coalesced 128-bit one for F16 / BF16 rows of whole 8s. */
    String gemv(int cols) {
        return (this == F16 || this == BF16) && cols % 8 == 0 ? "gemv_" + suffix + "_h8" : "gemv_" + suffix;
    }

    /** The GEMV kernel computing silu(gate) * up from two matrices of this format, rows of {@code cols}. */
    String swiglu(int cols) {
        return gemv(cols).replaceFirst("^gemv_", "gemv_swiglu_");
    }

    /** The GEMV kernel computing the Q, K and V projections of one input from three matrices of this format. */
    String qkv(int cols) {
        return gemv(cols).replaceFirst("^gemv_", "gemv_qkv_");
    }

    String embed() {
        return "embed_" + suffix;
    }

    String dequant() {
        return "dequant_" + suffix;
    }

    /** Whether prefill takes cuBLAS straight from the weights (F16 / BF16), without a dequantized copy. */
    boolean cublasNative() {
        return this == F16 || this == BF16;
    }
}
