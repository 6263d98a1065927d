package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * F32 with the Vector API ({@link F32Format} is the specification), and the float products every
 * vector format's matmul ends in: {@link FloatDot}'s tiles over decoded rows.
 *
 * <p><b>The one reduction order.</b> Every vector dot product of this package, of one decoded row
 * {@code w} with one activation vector {@code x}, is computed as
 * <pre>
 *   acc = 0 (L lanes);  for i = 0, L, 2L, ... below n - n % L:  acc = fma(w[i..i+L), x[i..i+L), acc)
 *   s = {@link #sum}(acc);  for each i in the tail:  s = fma(w[i], x[i], s)
 * </pre>
 * whether it runs alone, as one of four rows or four tokens of a tile, on decoded floats or on a
 * weight format decoded in registers. Only the number of such chains in flight differs, never the
 * operations of one, so a token's result is the same bits whatever else shares its step (batch
 * invariance), whatever the thread count, and in every JIT tier (the Vector API's interpreted
 * fallback does the same IEEE operations lane by lane).
 */
final class F32Vector implements RowKernel, FloatDot {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.F32;
    }

    /**
     * The lanes of {@code v} added in a fixed tree, the same in every JIT tier (unlike
     * {@code reduceLanes}, whose order the Vector API leaves open): halves folded onto halves.
     */
    static float sum(FloatVector v) {
        for (int half = v.length() / 2; half >= 1; half /= 2) {
            v = v.add(v.slice(half));
        }
        return v.lane(0);
    }

    private static FloatVector load(MemorySegment w, long offset, int i) {
        return FloatVector.fromMemorySegment(W.floats(), w, offset + 4L * i, ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        FloatVector acc = FloatVector.zero(f);
        for (int i = 0; i < end; i += f.length()) {
            acc = load(w, offset, i).fma(FloatVector.fromArray(f, x, xOff + i), acc);
        }
        float s = sum(acc);
        for (int i = end; i < n; i++) {
            s = Math.fma(w.get(Bytes.FLOAT, offset + 4L * i), x[xOff + i], s);
        }
        return s;
    }

    @Override
    public boolean dotsInPlace() {
        return true;
    }

    @Override
    public void dot4(MemorySegment w, long offset, long rowBytes, float[] x, int xOff, int n, float[] out, int outOff) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        long o1 = offset + rowBytes, o2 = offset + 2 * rowBytes, o3 = offset + 3 * rowBytes;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < end; i += f.length()) {
            FloatVector v = FloatVector.fromArray(f, x, xOff + i);
            a0 = load(w, offset, i).fma(v, a0);
            a1 = load(w, o1, i).fma(v, a1);
            a2 = load(w, o2, i).fma(v, a2);
            a3 = load(w, o3, i).fma(v, a3);
        }
        out[outOff] = tail(sum(a0), w, offset, x, xOff, end, n);
        out[outOff + 1] = tail(sum(a1), w, o1, x, xOff, end, n);
        out[outOff + 2] = tail(sum(a2), w, o2, x, xOff, end, n);
        out[outOff + 3] = tail(sum(a3), w, o3, x, xOff, end, n);
    }

    private static float tail(float s, MemorySegment w, long offset, float[] x, int xOff, int from, int n) {
        for (int i = from; i < n; i++) {
            s = Math.fma(w.get(Bytes.FLOAT, offset + 4L * i), x[xOff + i], s);
        }
        return s;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        MemorySegment.copy(w, Bytes.FLOAT, offset, dst, dstOff, n);
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        FloatVector acc = FloatVector.zero(f);
        for (int i = 0; i < end; i += f.length()) {
            acc = FloatVector.fromArray(f, a, aOff + i).fma(FloatVector.fromArray(f, b, bOff + i), acc);
        }
        return tail(sum(acc), a, aOff, b, bOff, end, n);
    }

    private static float tail(float s, float[] a, int aOff, float[] b, int bOff, int from, int n) {
        for (int i = from; i < n; i++) {
            s = Math.fma(a[aOff + i], b[bOff + i], s);
        }
        return s;
    }

    @Override
    public void dot4(float[] row, int rowOff, float[] x, int xOff, int xStride, int n, float[] out, int outOff,
            int outStride) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        int x1 = xOff + xStride, x2 = xOff + 2 * xStride, x3 = xOff + 3 * xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < end; i += f.length()) {
            FloatVector r = FloatVector.fromArray(f, row, rowOff + i);
            a0 = r.fma(FloatVector.fromArray(f, x, xOff + i), a0);
            a1 = r.fma(FloatVector.fromArray(f, x, x1 + i), a1);
            a2 = r.fma(FloatVector.fromArray(f, x, x2 + i), a2);
            a3 = r.fma(FloatVector.fromArray(f, x, x3 + i), a3);
        }
        out[outOff] = tail(sum(a0), row, rowOff, x, xOff, end, n);
        out[outOff + outStride] = tail(sum(a1), row, rowOff, x, x1, end, n);
        out[outOff + 2 * outStride] = tail(sum(a2), row, rowOff, x, x2, end, n);
        out[outOff + 3 * outStride] = tail(sum(a3), row, rowOff, x, x3, end, n);
    }

    @Override
    public void dot4x4(float[] w, int wOff, int wStride, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff, int outStride) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        int w1 = wOff + wStride, w2 = wOff + 2 * wStride, w3 = wOff + 3 * wStride;
        int x1 = xOff + xStride, x2 = xOff + 2 * xStride, x3 = xOff + 3 * xStride;
        // a<t><j>: token t, row j; sixteen independent FMA chains, each load shared by four
        FloatVector a00 = FloatVector.zero(f), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        for (int i = 0; i < end; i += f.length()) {
            FloatVector r0 = FloatVector.fromArray(f, w, wOff + i), r1 = FloatVector.fromArray(f, w, w1 + i);
            FloatVector r2 = FloatVector.fromArray(f, w, w2 + i), r3 = FloatVector.fromArray(f, w, w3 + i);
            FloatVector v = FloatVector.fromArray(f, x, xOff + i);
            a00 = r0.fma(v, a00);
            a01 = r1.fma(v, a01);
            a02 = r2.fma(v, a02);
            a03 = r3.fma(v, a03);
            v = FloatVector.fromArray(f, x, x1 + i);
            a10 = r0.fma(v, a10);
            a11 = r1.fma(v, a11);
            a12 = r2.fma(v, a12);
            a13 = r3.fma(v, a13);
            v = FloatVector.fromArray(f, x, x2 + i);
            a20 = r0.fma(v, a20);
            a21 = r1.fma(v, a21);
            a22 = r2.fma(v, a22);
            a23 = r3.fma(v, a23);
            v = FloatVector.fromArray(f, x, x3 + i);
            a30 = r0.fma(v, a30);
            a31 = r1.fma(v, a31);
            a32 = r2.fma(v, a32);
            a33 = r3.fma(v, a33);
        }
        store4(a00, a01, a02, a03, out, outOff);
        store4(a10, a11, a12, a13, out, outOff + outStride);
        store4(a20, a21, a22, a23, out, outOff + 2 * outStride);
        store4(a30, a31, a32, a33, out, outOff + 3 * outStride);
        for (int t = 0; t < 4 && end < n; t++) { // the last n % L elements (F32, F16 and BF16 rows of any length)
            for (int j = 0; j < 4; j++) {
                int o = outOff + t * outStride + j;
                out[o] = tail(out[o], w, wOff + j * wStride, x, xOff + t * xStride, end, n);
            }
        }
    }

    /** One token's four row sums into {@code out[off, off + 4)}; small enough for C2 to inline. */
    private static void store4(FloatVector a, FloatVector b, FloatVector c, FloatVector d, float[] out, int off) {
        out[off] = sum(a);
        out[off + 1] = sum(b);
        out[off + 2] = sum(c);
        out[off + 3] = sum(d);
    }
}
