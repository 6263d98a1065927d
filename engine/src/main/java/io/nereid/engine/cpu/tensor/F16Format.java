package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * F16: 2-byte little-endian IEEE half floats (1 sign, 5 exponent, 10 mantissa bits). Scalar
 * specification; conversions are {@link Float#float16ToFloat} (exact) and
 * {@link Float#floatToFloat16} (round to nearest even, as ggml's {@code GGML_FP32_TO_FP16}).
 */
final class F16Format implements RowKernel {

    static final F16Format INSTANCE = new F16Format();

    private F16Format() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.F16;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            sum += Bytes.f16(w, offset + 2L * i) * x[xOff + i];
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dstOff + i] = Bytes.f16(w, offset + 2L * i);
        }
    }

    /** Stores {@code n} values as fp16 at {@code dst[dstOff]}: {@code 2 * n} bytes. */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        for (int i = 0; i < n; i++) {
            Bytes.putF16(dst, dstOff + 2L * i, src[srcOff + i]);
        }
    }
}
