package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * F16 with the Vector API; {@link F16Format} is the specification. The Vector API has no
 * half-float lanes, so the halves are widened a chunk at a time by a plain loop of
 * {@link Float#float16ToFloat}, which C2 compiles to {@code vcvtph2ps} (16 halves an instruction
 * at 512 bits), into a per-thread buffer that stays in L1, and the dots read the floats from there.
 * Widening in the lanes with integer operations (F. Giesen's {@code half_to_float_fast}, what this
 * class did before) took about ten operations a vector and left a lone token's decode
 * compute-bound: 1.1B F16 on two threads 6.2 tok/s, 52 % of the bandwidth roofline, while four
 * tokens sharing each widened vector ran 3.4 times as many tokens a second. Both are exact, so
 * the floats, and every dot's bits, are the same.
 *
 * <p>Every dot here is {@link #dot}'s one FMA chain per token, vector {@code i} of the row into
 * the chain in order, so one, two, three and four tokens give the same bits ({@link RowKernel#dotFast}
 * is {@code dot}): a step of a few tokens (a speculative verification, a decode step of a few
 * sequences) widens each half once for all of them.
 */
final class F16Vector implements RowKernel {

    /** Halves widened at a time: 2 KiB of floats, a multiple of every vector width. */
    static final int CHUNK = 512;

    private static final ValueLayout.OfShort HALF = ValueLayout.JAVA_SHORT_UNALIGNED;

    /**
     * Each thread's widened chunk. A kernel thread keeps its own for its life; the kernels'
     * signatures have no scratch for {@link #dot} and {@link #dot4Tokens}, and a lookup per row
     * costs nanoseconds against the row's hundreds.
     */
    private static final ThreadLocal<float[]> WIDE = ThreadLocal.withInitial(() -> new float[CHUNK]);

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.F16;
    }

    /** {@code dst[dstOff + i]} = half {@code i} at {@code offset}, for {@code i < n}: the loop C2 vectorizes. */
    static void widen(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dstOff + i] = Float.float16ToFloat(w.get(HALF, offset + 2L * i));
        }
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int end = f.loopBound(n);
        float[] wide = WIDE.get();
        FloatVector acc = FloatVector.zero(f);
        for (int c = 0; c < end; c += CHUNK) {
            int m = Math.min(CHUNK, end - c);
            widen(w, offset + 2L * c, wide, 0, m);
            for (int i = 0; i < m; i += l) {
                acc = FloatVector.fromArray(f, wide, i).fma(FloatVector.fromArray(f, x, xOff + c + i), acc);
            }
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

    /**
     * {@inheritDoc}
     *
     * <p>Here: each chunk widened once for both tokens, each token's sum {@link #dot}'s chain.
     */
    @Override
    public void dotFastRows2Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int end = f.loopBound(n);
        int xb = xOff + xStride;
        float[] wide = WIDE.get();
        for (int r = 0; r < rows; r++) {
            long row = offset + r * rowBytes;
            FloatVector a = FloatVector.zero(f), b = a;
            for (int c = 0; c < end; c += CHUNK) {
                int m = Math.min(CHUNK, end - c);
                widen(w, row + 2L * c, wide, 0, m);
                for (int i = 0; i < m; i += l) {
                    FloatVector v = FloatVector.fromArray(f, wide, i);
                    a = v.fma(FloatVector.fromArray(f, x, xOff + c + i), a);
                    b = v.fma(FloatVector.fromArray(f, x, xb + c + i), b);
                }
            }
            out[outOff + r] = tail(F32Vector.sum(a), w, row, x, xOff, end, n);
            out[outOff + outStride + r] = tail(F32Vector.sum(b), w, row, x, xb, end, n);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each chunk widened once for the three tokens, each token's sum {@link #dot}'s chain.
     */
    @Override
    public void dotFastRows3Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int end = f.loopBound(n);
        int xb = xOff + xStride, xc = xb + xStride;
        float[] wide = WIDE.get();
        for (int r = 0; r < rows; r++) {
            long row = offset + r * rowBytes;
            FloatVector a = FloatVector.zero(f), b = a, d = a;
            for (int c = 0; c < end; c += CHUNK) {
                int m = Math.min(CHUNK, end - c);
                widen(w, row + 2L * c, wide, 0, m);
                for (int i = 0; i < m; i += l) {
                    FloatVector v = FloatVector.fromArray(f, wide, i);
                    a = v.fma(FloatVector.fromArray(f, x, xOff + c + i), a);
                    b = v.fma(FloatVector.fromArray(f, x, xb + c + i), b);
                    d = v.fma(FloatVector.fromArray(f, x, xc + c + i), d);
                }
            }
            out[outOff + r] = tail(F32Vector.sum(a), w, row, x, xOff, end, n);
            out[outOff + outStride + r] = tail(F32Vector.sum(b), w, row, x, xb, end, n);
            out[outOff + 2 * outStride + r] = tail(F32Vector.sum(d), w, row, x, xc, end, n);
        }
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        int end = f.loopBound(n);
        float[] wide = WIDE.get();
        for (int c = 0; c < end; c += CHUNK) {
            int m = Math.min(CHUNK, end - c);
            widen(w, offset + 2L * c, wide, 0, m);
            for (int i = 0; i < m; i += l) {
                FloatVector v = FloatVector.fromArray(f, wide, i);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + c + i), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + c + i), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + c + i), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + c + i), a3);
            }
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
        widen(w, offset, dst, dstOff, n);
    }
}
