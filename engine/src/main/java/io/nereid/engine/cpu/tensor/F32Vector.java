package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** F32 with the Vector API; {@link F32Format} is the specification. */
final class F32Vector implements RowKernel, FloatDot {

    private final VectorWidth width;

    F32Vector(VectorWidth width) {
        this.width = width;
    }

    @Override
    public GgmlType type() {
        return GgmlType.F32;
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = width.floats();
        int l = f.length();
        int i = 0;
        // Four independent accumulators: an FMA's latency is ~4 cycles and two issue per cycle, so
        // one chain would leave the units mostly idle.
        FloatVector a0 = FloatVector.zero(f), a1 = FloatVector.zero(f);
        FloatVector a2 = FloatVector.zero(f), a3 = FloatVector.zero(f);
        for (; i <= n - 4 * l; i += 4 * l) {
            a0 = load(w, offset, i).fma(FloatVector.fromArray(f, x, xOff + i), a0);
            a1 = load(w, offset, i + l).fma(FloatVector.fromArray(f, x, xOff + i + l), a1);
            a2 = load(w, offset, i + 2 * l).fma(FloatVector.fromArray(f, x, xOff + i + 2 * l), a2);
            a3 = load(w, offset, i + 3 * l).fma(FloatVector.fromArray(f, x, xOff + i + 3 * l), a3);
        }
        for (; i <= n - l; i += l) {
            a0 = load(w, offset, i).fma(FloatVector.fromArray(f, x, xOff + i), a0);
        }
        float sum = a0.add(a1).add(a2.add(a3)).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += w.get(Bytes.FLOAT, offset + 4L * i) * x[xOff + i];
        }
        return sum;
    }

    private FloatVector load(MemorySegment w, long offset, int i) {
        return FloatVector.fromMemorySegment(width.floats(), w, offset + 4L * i, ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        MemorySegment.copy(w, Bytes.FLOAT, offset, dst, dstOff, n);
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        VectorSpecies<Float> f = width.floats();
        int l = f.length();
        int i = 0;
        FloatVector a0 = FloatVector.zero(f), a1 = FloatVector.zero(f);
        FloatVector a2 = FloatVector.zero(f), a3 = FloatVector.zero(f);
        for (; i <= n - 4 * l; i += 4 * l) { // four accumulators, as above
            a0 = FloatVector.fromArray(f, a, aOff + i).fma(FloatVector.fromArray(f, b, bOff + i), a0);
            a1 = FloatVector.fromArray(f, a, aOff + i + l).fma(FloatVector.fromArray(f, b, bOff + i + l), a1);
            a2 = FloatVector.fromArray(f, a, aOff + i + 2 * l).fma(FloatVector.fromArray(f, b, bOff + i + 2 * l), a2);
            a3 = FloatVector.fromArray(f, a, aOff + i + 3 * l).fma(FloatVector.fromArray(f, b, bOff + i + 3 * l), a3);
        }
        for (; i <= n - l; i += l) {
            a0 = FloatVector.fromArray(f, a, aOff + i).fma(FloatVector.fromArray(f, b, bOff + i), a0);
        }
        float sum = a0.add(a1).add(a2.add(a3)).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    @Override
    public void dot4(float[] row, int rowOff, float[] x, int xOff, int xStride, int n, float[] out, int outOff,
            int outStride) {
        VectorSpecies<Float> f = width.floats();
        int l = f.length();
        int x1 = xOff + xStride, x2 = xOff + 2 * xStride, x3 = xOff + 3 * xStride;
        // one accumulator per vector: four independent FMA chains sharing each row load
        FloatVector a0 = FloatVector.zero(f), a1 = FloatVector.zero(f);
        FloatVector a2 = FloatVector.zero(f), a3 = FloatVector.zero(f);
        int i = 0;
        for (; i <= n - l; i += l) {
            FloatVector r = FloatVector.fromArray(f, row, rowOff + i);
            a0 = r.fma(FloatVector.fromArray(f, x, xOff + i), a0);
            a1 = r.fma(FloatVector.fromArray(f, x, x1 + i), a1);
            a2 = r.fma(FloatVector.fromArray(f, x, x2 + i), a2);
            a3 = r.fma(FloatVector.fromArray(f, x, x3 + i), a3);
        }
        float s0 = a0.reduceLanes(VectorOperators.ADD), s1 = a1.reduceLanes(VectorOperators.ADD);
        float s2 = a2.reduceLanes(VectorOperators.ADD), s3 = a3.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            float r = row[rowOff + i];
            s0 += r * x[xOff + i];
            s1 += r * x[x1 + i];
            s2 += r * x[x2 + i];
            s3 += r * x[x3 + i];
        }
        out[outOff] = s0;
        out[outOff + outStride] = s1;
        out[outOff + 2 * outStride] = s2;
        out[outOff + 3 * outStride] = s3;
    }

    @Override
    public void dot4x4(float[] w, int wOff, int wStride, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff, int outStride) {
        VectorSpecies<Float> f = width.floats();
        int l = f.length();
        int w1 = wOff + wStride, w2 = wOff + 2 * wStride, w3 = wOff + 3 * wStride;
        int x1 = xOff + xStride, x2 = xOff + 2 * xStride, x3 = xOff + 3 * xStride;
        // a<t><j>: token t, row j; sixteen independent FMA chains, each load shared by four
        FloatVector a00 = FloatVector.zero(f), a01 = FloatVector.zero(f), a02 = FloatVector.zero(f), a03 = FloatVector.zero(f);
        FloatVector a10 = FloatVector.zero(f), a11 = FloatVector.zero(f), a12 = FloatVector.zero(f), a13 = FloatVector.zero(f);
        FloatVector a20 = FloatVector.zero(f), a21 = FloatVector.zero(f), a22 = FloatVector.zero(f), a23 = FloatVector.zero(f);
        FloatVector a30 = FloatVector.zero(f), a31 = FloatVector.zero(f), a32 = FloatVector.zero(f), a33 = FloatVector.zero(f);
        int i = 0;
        for (; i <= n - l; i += l) {
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
        reduce4(a00, a01, a02, a03, out, outOff);
        reduce4(a10, a11, a12, a13, out, outOff + outStride);
        reduce4(a20, a21, a22, a23, out, outOff + 2 * outStride);
        reduce4(a30, a31, a32, a33, out, outOff + 3 * outStride);
        for (int t = 0; t < 4 && i < n; t++) { // the last n % L elements (F32 and F16 rows of any length)
            for (int j = 0; j < 4; j++) {
                float s = 0f;
                for (int k = i; k < n; k++) {
                    s += w[wOff + j * wStride + k] * x[xOff + t * xStride + k];
                }
                out[outOff + t * outStride + j] += s;
            }
        }
    }

    /** One token's four row sums into {@code out[off, off + 4)}; small enough for C2 to inline. */
    private static void reduce4(FloatVector a, FloatVector b, FloatVector c, FloatVector d, float[] out, int off) {
        out[off] = a.reduceLanes(VectorOperators.ADD);
        out[off + 1] = b.reduceLanes(VectorOperators.ADD);
        out[off + 2] = c.reduceLanes(VectorOperators.ADD);
        out[off + 3] = d.reduceLanes(VectorOperators.ADD);
    }
}
