package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** BF16 with the Vector API: widen to int and shift left by 16. {@link BF16Format} is the specification. */
final class BF16Vector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.BF16;
    }

    /** The {@code L} bf16 values at element {@code i} as floats. */
    private static FloatVector load(MemorySegment w, long offset, int i) {
        ShortVector halves = ShortVector.fromMemorySegment(W.shorts(), w, offset + 2L * i, ByteOrder.LITTLE_ENDIAN);
        IntVector h = (IntVector) halves.castShape(W.ints(), 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(); // sign extension shifted out
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int end = f.loopBound(n);
        FloatVector acc = FloatVector.zero(f);
        for (int i = 0; i < end; i += f.length()) {
            acc = load(w, offset, i).fma(FloatVector.fromArray(f, x, xOff + i), acc);
        }
        return tail(F32Vector.sum(acc), w, offset, x, xOff, end, n);
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
        return tail(F32Vector.sum(a0.add(a1).add(a2.add(a3))), w, offset, x, xOff, end, n);
    }

    /** {@code s} with the products of elements {@code [from, n)} added one by one, as {@link F32Vector} does. */
    private static float tail(float s, MemorySegment w, long offset, float[] x, int xOff, int from, int n) {
        for (int i = from; i < n; i++) {
            s = Math.fma(BF16Format.toFloat(w.get(Bytes.SHORT, offset + 2L * i)), x[xOff + i], s);
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
        int l = W.floats().length();
        int i = 0;
        for (; i <= n - l; i += l) {
            load(w, offset, i).intoArray(dst, dstOff + i);
        }
        for (; i < n; i++) {
            dst[dstOff + i] = BF16Format.toFloat(w.get(Bytes.SHORT, offset + 2L * i));
        }
    }
}
