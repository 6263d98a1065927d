package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * BF16: the upper 16 bits of an IEEE float (1 sign, 8 exponent, 7 mantissa bits), 2 bytes
 * little-endian. Decoding is exact (shift left by 16); encoding rounds to nearest even and keeps
 * NaNs quiet, as ggml's {@code ggml_compute_fp32_to_bf16}. Scalar specification.
 */
final class BF16Format implements RowKernel {

    static final BF16Format INSTANCE = new BF16Format();

    private BF16Format() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.BF16;
    }

    static float toFloat(short bits) {
        return Float.intBitsToFloat(bits << 16); // the sign extension of bits is shifted out
    }

    /** ggml's {@code ggml_compute_fp32_to_bf16}: round to nearest even; NaN stays NaN, made quiet. */
    static short fromFloat(float value) {
        int u = Float.floatToRawIntBits(value);
        if ((u & 0x7fffffff) > 0x7f800000) {
            return (short) ((u >>> 16) | 64); // NaN: truncating could turn it into infinity
        }
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            sum += toFloat(w.get(Bytes.SHORT, offset + 2L * i)) * x[xOff + i];
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dstOff + i] = toFloat(w.get(Bytes.SHORT, offset + 2L * i));
        }
    }

    /** Stores {@code n} values as bf16 at {@code dst[dstOff]}: {@code 2 * n} bytes. */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        for (int i = 0; i < n; i++) {
            dst.set(Bytes.SHORT, dstOff + 2L * i, fromFloat(src[srcOff + i]));
        }
    }
}
