package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.LaneSums;
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

    /** {@link LaneSums#sum(FloatVector)}: the order every dot of this package adds its lanes in. */
    static float sum(FloatVector v) {
        return LaneSums.sum(v);
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
        return tail(sum(acc), w, offset, x, xOff, end, n);
    }

    @Override
    public float dotFast(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < end; i += f.length()) {
            FloatVector t = load(w, offset, i).fma(FloatVector.fromArray(f, x, xOff + i), a0);
            a0 = a1;
            a1 = a2;
            a2 = a3;
            a3 = t;
        }
        return tail(sum(a0.add(a1).add(a2.add(a3))), w, offset, x, xOff, end, n);
    }

    private static float tail(float s, MemorySegment w, long offset, float[] x, int xOff, int from, int n) {
        for (int i = from; i < n; i++) {
            s = Math.fma(w.get(Bytes.FLOAT, offset + 4L * i), x[xOff + i], s);
        }
        return s;
    }

    @Override
    public void dotFastRows(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int n,
            float[] out, int outOff, float[] scratch) {
        for (int r = 0; r < rows; r++) { // this class's own copy: see RowKernel#dotFastRows
            out[outOff + r] = dotFast(w, offset + r * rowBytes, x, xOff, n);
        }
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        int end = f.loopBound(n);
        for (int i = 0; i < end; i += f.length()) {
            FloatVector v = load(w, offset, i);
            a0 = v.fma(FloatVector.fromArray(f, x, xOff + i), a0);
            a1 = v.fma(FloatVector.fromArray(f, x, x1 + i), a1);
            a2 = v.fma(FloatVector.fromArray(f, x, x2 + i), a2);
            a3 = v.fma(FloatVector.fromArray(f, x, x3 + i), a3);
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
        if (end < n) {
            out[outOff] = tail(out[outOff], w, offset, x, xOff, end, n);
            out[outOff + 1] = tail(out[outOff + 1], w, offset, x, x1, end, n);
            out[outOff + 2] = tail(out[outOff + 2], w, offset, x, x2, end, n);
            out[outOff + 3] = tail(out[outOff + 3], w, offset, x, x3, end, n);
        }
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
        if (outStride == 1 && end == n) {   // the common case, in the fewest operations
            LaneSums.sum4(a0, a1, a2, a3, out, outOff);
            return;
        }
        out[outOff] = tail(sum(a0), row, rowOff, x, xOff, end, n);
        out[outOff + outStride] = tail(sum(a1), row, rowOff, x, x1, end, n);
        out[outOff + 2 * outStride] = tail(sum(a2), row, rowOff, x, x2, end, n);
        out[outOff + 3 * outStride] = tail(sum(a3), row, rowOff, x, x3, end, n);
    }

    @Override
    public void dot4x4(float[] w, int wOff, int wStride, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff, int outStride, float[] lanes, int lanesOff) {
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
        // The sixteen sums from stored lanes: the tree in registers makes the kernel too large for
        // C2 to inline whole, and what it leaves out of line boxes every accumulator.
        int l = f.length();
        a00.intoArray(lanes, lanesOff);
        a01.intoArray(lanes, lanesOff + l);
        a02.intoArray(lanes, lanesOff + 2 * l);
        a03.intoArray(lanes, lanesOff + 3 * l);
        a10.intoArray(lanes, lanesOff + 4 * l);
        a11.intoArray(lanes, lanesOff + 5 * l);
        a12.intoArray(lanes, lanesOff + 6 * l);
        a13.intoArray(lanes, lanesOff + 7 * l);
        a20.intoArray(lanes, lanesOff + 8 * l);
        a21.intoArray(lanes, lanesOff + 9 * l);
        a22.intoArray(lanes, lanesOff + 10 * l);
        a23.intoArray(lanes, lanesOff + 11 * l);
        a30.intoArray(lanes, lanesOff + 12 * l);
        a31.intoArray(lanes, lanesOff + 13 * l);
        a32.intoArray(lanes, lanesOff + 14 * l);
        a33.intoArray(lanes, lanesOff + 15 * l);
        LaneSums.sum16(lanes, lanesOff, out, outOff, outStride);
        for (int t = 0; t < 4 && end < n; t++) { // the last n % L elements (F32, F16 and BF16 rows of any length)
            for (int j = 0; j < 4; j++) {
                int o = outOff + t * outStride + j;
                out[o] = tail(out[o], w, wOff + j * wStride, x, xOff + t * xStride, end, n);
            }
        }
    }
}
