package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * F32 values to ggml's storage formats and back, with llama.cpp's reference ({@code _ref})
 * quantizers, so that files written here hold the bytes llama.cpp would write: for the
 * {@code quantize} command and for tests that generate models.
 *
 * <p>The K-quants (Q4_K, Q5_K, Q6_K) use the reference quantizers that {@code llama-quantize}
 * runs without an importance matrix, scale searches included ({@link KQuantizer}); rows of them
 * are independent, so a tensor may be quantized in row ranges on several threads. Decoding is
 * offered for every format {@link WeightMatrix} supports. Stateless and thread-safe.
 */
public final class Quantizer {

    /** The formats {@link #quantize} can write. */
    public static final Set<GgmlType> QUANTIZABLE = Set.copyOf(
            EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K,
                    GgmlType.Q5_K, GgmlType.Q6_K));

    private Quantizer() {
    }

    /**
     * {@code src} in {@code type}: {@code type.byteSize([src.length])} bytes.
     *
     * @throws IllegalArgumentException if {@code src.length} is not a multiple of the block size
     * @throws UnsupportedWeightTypeException if {@code type} is not in {@link #QUANTIZABLE}
     */
    public static byte[] quantize(GgmlType type, float[] src) {
        long size = type.byteSize(new long[] {src.length});
        byte[] out = new byte[Math.toIntExact(size)];
        quantize(type, src, 0, src.length, MemorySegment.ofArray(out), 0);
        return out;
    }

    /**
     * Writes {@code src[srcOff, srcOff + n)} in {@code type} at {@code dst[dstOff]}: a row at a
     * time, for tensors larger than an array.
     *
     * @throws IllegalArgumentException if {@code n} is not a multiple of the block size
     * @throws IndexOutOfBoundsException if a range falls outside its array or segment
     * @throws UnsupportedWeightTypeException if {@code type} is not in {@link #QUANTIZABLE}
     */
    public static void quantize(GgmlType type, float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        Objects.requireNonNull(type, "type");
        Objects.checkFromIndexSize(srcOff, n, src.length);
        long size = checkedSize(type, n);
        Objects.checkFromIndexSize(dstOff, size, dst.byteSize());
        switch (type) {
            case F32 -> F32Format.quantize(src, srcOff, n, dst, dstOff);
            case F16 -> F16Format.quantize(src, srcOff, n, dst, dstOff);
            case BF16 -> BF16Format.quantize(src, srcOff, n, dst, dstOff);
            case Q8_0 -> Q8_0Format.quantize(src, srcOff, n, dst, dstOff);
            case Q4_0 -> Q4_0Format.quantize(src, srcOff, n, dst, dstOff);
            case Q4_K -> Q4_KFormat.quantize(src, srcOff, n, dst, dstOff);
            case Q5_K -> Q5_KFormat.quantize(src, srcOff, n, dst, dstOff);
            case Q6_K -> Q6_KFormat.quantize(src, srcOff, n, dst, dstOff);
            default -> throw new UnsupportedWeightTypeException(type, "quantizing to " + type);
        }
    }

    /**
     * The {@code n} values stored in {@code type} at {@code src[offset]}, decoded with the scalar
     * specification.
     *
     * @throws UnsupportedWeightTypeException if {@code type} has no kernels
     */
    public static float[] dequantize(GgmlType type, MemorySegment src, long offset, int n) {
        RowKernel kernel = RowKernels.scalar(Objects.requireNonNull(type, "type"));
        if (kernel == null) {
            throw new UnsupportedWeightTypeException(type, "dequantizing " + type);
        }
        Objects.checkFromIndexSize(offset, checkedSize(type, n), src.byteSize());
        float[] out = new float[n];
        kernel.dequantize(src, offset, out, 0, n);
        return out;
    }

    private static long checkedSize(GgmlType type, int n) {
        if (n < 0 || n % type.blockSize() != 0) {
            throw new IllegalArgumentException(n + " values are not a whole number of " + type + " blocks of "
                    + type.blockSize());
        }
        return (long) n / type.blockSize() * type.bytesPerBlock();
    }
}
