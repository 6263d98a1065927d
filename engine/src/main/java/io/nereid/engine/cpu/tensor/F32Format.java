package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/** F32: 4-byte little-endian IEEE floats. Scalar specification. */
final class F32Format implements RowKernel, FloatDot {

    static final F32Format INSTANCE = new F32Format();

    private F32Format() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.F32;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            sum += w.get(Bytes.FLOAT, offset + (long) i * Float.BYTES) * x[xOff + i];
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        MemorySegment.copy(w, Bytes.FLOAT, offset, dst, dstOff, n);
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    @Override
    public void dot4(float[] row, int rowOff, float[] x, int xOff, int xStride, int n, float[] out, int outOff,
            int outStride) {
        for (int t = 0; t < 4; t++) {
            out[outOff + t * outStride] = dot(row, rowOff, x, xOff + t * xStride, n);
        }
    }

    @Override
    public void dot4x4(float[] w, int wOff, int wStride, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff, int outStride, float[] lanes, int lanesOff) {
        for (int t = 0; t < 4; t++) {
            for (int j = 0; j < 4; j++) {
                out[outOff + t * outStride + j] = dot(w, wOff + j * wStride, x, xOff + t * xStride, n);
            }
        }
    }

    /** Stores {@code src[srcOff, srcOff + n)} at {@code dst[dstOff]}: {@code 4 * n} bytes. */
    static void quantize(float[] src, int srcOff, int n, MemorySegment dst, long dstOff) {
        MemorySegment.copy(src, srcOff, dst, Bytes.FLOAT, dstOff, n);
    }
}
