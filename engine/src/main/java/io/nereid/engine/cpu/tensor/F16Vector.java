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

/**
 * F16 with the Vector API; {@link F16Format} is the specification. The Vector API has no
 * half-float lanes, so halves are widened with integer operations (F. Giesen's
 * {@code half_to_float_fast}), bit-exact with {@link Float#float16ToFloat} for every input.
 */
final class F16Vector implements RowKernel {

    /** 2^112: moves a half's exponent bias (15) to a float's (127); subnormal halves come out normal. */
    private static final float REBIAS = 0x1p112f;

    /** After rebiasing, a half with the all-ones exponent (Inf/NaN) is at least 2^16: these bits. */
    private static final int INF_NAN_BITS = Float.floatToRawIntBits(0x1p16f);

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.F16;
    }

    /** The {@code L} halves at element {@code i} as floats. */
    private static FloatVector load(MemorySegment w, long offset, int i) {
        ShortVector halves = ShortVector.fromMemorySegment(W.shorts(), w, offset + 2L * i, ByteOrder.LITTLE_ENDIAN);
        // sign-extended; only the low 16 bits are used below
        IntVector h = (IntVector) halves.castShape(W.ints(), 0);
        // exponent and mantissa into float position, then scale: exact, subnormals included
        FloatVector magnitude = h.and(0x7fff).lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats().mul(REBIAS);
        IntVector bits = magnitude.reinterpretAsInts();
        // Inf/NaN: rebiased magnitudes >= 2^16; as positive floats they compare like their bits
        bits = bits.lanewise(VectorOperators.OR, 0x7f800000, bits.compare(VectorOperators.GE, INF_NAN_BITS));
        return bits.or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16)).reinterpretAsFloats();
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

    /** {@code s} with the products of elements {@code [from, n)} added one by one, as {@link F32Vector} does. */
    private static float tail(float s, MemorySegment w, long offset, float[] x, int xOff, int from, int n) {
        for (int i = from; i < n; i++) {
            s = Math.fma(Bytes.f16(w, offset + 2L * i), x[xOff + i], s);
        }
        return s;
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
            dst[dstOff + i] = Bytes.f16(w, offset + 2L * i);
        }
    }
}
