package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K repacked once, when its matrix is bound, for the Vector API kernels: per group of four
 * 16-weight sub-blocks, 80 bytes: their 64 quants minus 32 as int8 in element order, then their
 * four scales {@code d * scale} as floats; four groups, 320 bytes, a super-block in place of 210
 * (1.25 bytes a weight in place of 0.82).
 *
 * <p>Why: Q6_K's own layout takes every weight apart from two bit fields in different places
 * ({@code ql}'s nibble, {@code qh}'s two bits, see {@link Q6_KFormat}), which C2 compiles to about
 * twenty instructions per vector with bounds checks (1.35 G weights/s a thread here, the slowest
 * format, and the output matrix of the Q4_0 and Q4_K_M files people download). Repacked, a vector
 * of weights is one 8-byte load widened to floats, as Q8_0's. Groups of a uniform 80 bytes (rather
 * than a super-block's quants followed by its sixteen scales) make a row one flat loop whose
 * addresses are affine in its counter, as {@link Q4_KPacked}'s, so C2 hoists its bounds checks;
 * every 16-byte load stays inside a cache line (80 is 16 times an odd number). The decoded weights
 * are {@link Q6_KFormat}'s bit for bit ({@code (d * scale) * q}), and {@link #dot} /
 * {@link #dot4Tokens} keep the batch-invariant order the original layout's vector kernel had, so
 * repacking changed no result; only {@link #dotFast} sums differently (each sub-block's
 * {@code q * x}, scaled once). The packed copy is off-heap, freed with its matrix; the mapped
 * file's Q6_K pages are no longer read, so the page cache may drop them.
 */
final class Q6_KPacked implements RowKernel {

    static final Q6_KPacked INSTANCE = new Q6_KPacked();

    /** Packed bytes per group of four sub-blocks: 64 int8 quants, then 4 float scales. */
    private static final int GROUP_BYTES = 64 + 4 * 4;

    /** Packed bytes per super-block: its four groups. */
    static final int BLOCK_BYTES = 4 * GROUP_BYTES;

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    private Q6_KPacked() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    /** {@code data} already packed ({@link #pack}): read as it is. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        return new Bound(this, data, BLOCK_BYTES);
    }

    /** {@code src}'s {@code blocks} Q6_K super-blocks packed into {@code dst}, {@code blocks * BLOCK_BYTES} long. */
    static void pack(MemorySegment src, long blocks, MemorySegment dst) {
        byte[] quants = new byte[64];
        for (long b = 0; b < blocks; b++) {
            long in = b * Q6_KFormat.BLOCK_BYTES;
            float d = Bytes.f16(src, in + 208);
            for (int g = 0; g < 4; g++) {
                long out = b * BLOCK_BYTES + (long) GROUP_BYTES * g;
                for (int i = 0; i < 64; i++) {
                    quants[i] = (byte) Q6_KFormat.quant(src, in, 64 * g + i);
                }
                MemorySegment.copy(quants, 0, dst, ValueLayout.JAVA_BYTE, out, 64);
                for (int s = 0; s < 4; s++) {
                    dst.set(Bytes.FLOAT, out + 64 + 4L * s, d * Bytes.s8(src, in + 192 + 4 * g + s));
                }
            }
        }
    }

    private static FloatVector quants(MemorySegment w, long at) {
        return W.toFloats(W.loadBytes(w, at));
    }

    /** The scale of weight {@code i}'s sub-block ({@code i < 64}) in the group at {@code group}. */
    private static float scale(MemorySegment w, long group, int i) {
        return w.get(Bytes.FLOAT, group + 64 + 4L * (i / 16));
    }

    /** Weights {@code i..i+L} of a group decoded, as the format: {@code q * (d * scale)}. */
    private static FloatVector weights(MemorySegment w, long group, int i) {
        return quants(w, group + i).mul(scale(w, group, i));
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int x0 = xOff + 64 * j;
            for (int i = 0; i < 64; i += f.length()) {
                acc = weights(w, group, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
            }
        }
        return F32Vector.sum(acc);
    }

    /** {@code sum(q * x)} lane by lane over the 16-weight sub-block at {@code at} (one to four vectors by width). */
    private static FloatVector subBlock(MemorySegment w, long at, float[] x, int xi) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        FloatVector p = quants(w, at).mul(FloatVector.fromArray(f, x, xi));
        for (int k = l; k < 16; k += l) { // 16 / L steps, a constant per JVM: unrolled
            p = quants(w, at + k).fma(FloatVector.fromArray(f, x, xi + k), p);
        }
        return p;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each 16-weight sub-block's {@code sum(q * x)} (one to four vectors by width), then
     * times its scale into one of two accumulators (even and odd sub-blocks).
     */
    @Override
    public float dotFast(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int x0 = xOff + 64 * j;
            for (int s = 0; s < 64; s += 32) { // two sub-blocks a step, the even one into a0
                a0 = subBlock(w, group + s, x, x0 + s).fma(FloatVector.broadcast(f, scale(w, group, s)), a0);
                a1 = subBlock(w, group + s + 16, x, x0 + s + 16)
                        .fma(FloatVector.broadcast(f, scale(w, group, s + 16)), a1);
            }
        }
        return F32Vector.sum(a0.add(a1));
    }

    @Override
    public void dotFastRows(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int n,
            float[] out, int outOff, float[] scratch) {
        for (int r = 0; r < rows; r++) { // this class's own copy: see RowKernel#dotFastRows
            out[outOff + r] = dotFast(w, offset + r * rowBytes, x, xOff, n);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each 16 quants widened once for both tokens, each token's sums in
     * {@link #dotFast}'s chains and order.
     */
    @Override
    public void dotFastRows2Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        for (int r = 0; r < rows; r++) {
            dotFast2(w, offset + r * rowBytes, x, xOff, xOff + xStride, n, out, outOff + r, outOff + outStride + r);
        }
    }

    /** {@link #dotFast} of one row with the inputs at {@code xa} and {@code xb}, into {@code out[oa]} and {@code out[ob]}. */
    private static void dotFast2(MemorySegment w, long row, float[] x, int xa, int xb, int n, float[] out, int oa,
            int ob) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0;
        for (int j = 0; j < n / 32; j++) { // two sub-blocks a step, the even one into a0 / b0
            long at = row + (long) GROUP_BYTES * (j >> 1) + 32L * (j & 1);
            long sc = row + (long) GROUP_BYTES * (j >> 1) + 64 + 8L * (j & 1);
            int xi = 32 * j;
            FloatVector q = quants(w, at), r = quants(w, at + 16);
            FloatVector p = q.mul(FloatVector.fromArray(f, x, xa + xi));
            FloatVector u = q.mul(FloatVector.fromArray(f, x, xb + xi));
            FloatVector p2 = r.mul(FloatVector.fromArray(f, x, xa + xi + 16));
            FloatVector u2 = r.mul(FloatVector.fromArray(f, x, xb + xi + 16));
            for (int k = l; k < 16; k += l) { // 16 / L steps, a constant per JVM: unrolled
                q = quants(w, at + k);
                r = quants(w, at + 16 + k);
                p = q.fma(FloatVector.fromArray(f, x, xa + xi + k), p);
                u = q.fma(FloatVector.fromArray(f, x, xb + xi + k), u);
                p2 = r.fma(FloatVector.fromArray(f, x, xa + xi + 16 + k), p2);
                u2 = r.fma(FloatVector.fromArray(f, x, xb + xi + 16 + k), u2);
            }
            FloatVector s0 = FloatVector.broadcast(f, w.get(Bytes.FLOAT, sc));
            FloatVector s1 = FloatVector.broadcast(f, w.get(Bytes.FLOAT, sc + 4));
            a0 = p.fma(s0, a0);
            b0 = u.fma(s0, b0);
            a1 = p2.fma(s1, a1);
            b1 = u2.fma(s1, b1);
        }
        out[oa] = F32Vector.sum(a0.add(a1));
        out[ob] = F32Vector.sum(b0.add(b1));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each 16 quants widened once for all three tokens, each token's sums in
     * {@link #dotFast}'s chains and order.
     */
    @Override
    public void dotFastRows3Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        for (int r = 0; r < rows; r++) {
            dotFast3(w, offset + r * rowBytes, x, xOff, xStride, n, out, outOff + r, outStride);
        }
    }

    /**
     * {@link #dotFast} of one row with the inputs at {@code xa}, {@code xa + stride} and
     * {@code xa + 2 * stride}, into {@code out[o]}, {@code out[o + outStride]} and {@code out[o + 2 * outStride]}.
     */
    private static void dotFast3(MemorySegment w, long row, float[] x, int xa, int stride, int n, float[] out, int o,
            int outStride) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int xb = xa + stride, xc = xb + stride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0;
        for (int j = 0; j < n / 32; j++) { // two sub-blocks a step, the even one into a0 / b0 / c0
            long at = row + (long) GROUP_BYTES * (j >> 1) + 32L * (j & 1);
            long sc = row + (long) GROUP_BYTES * (j >> 1) + 64 + 8L * (j & 1);
            int xi = 32 * j;
            FloatVector q = quants(w, at), r = quants(w, at + 16);
            FloatVector p = q.mul(FloatVector.fromArray(f, x, xa + xi));
            FloatVector u = q.mul(FloatVector.fromArray(f, x, xb + xi));
            FloatVector v = q.mul(FloatVector.fromArray(f, x, xc + xi));
            FloatVector p2 = r.mul(FloatVector.fromArray(f, x, xa + xi + 16));
            FloatVector u2 = r.mul(FloatVector.fromArray(f, x, xb + xi + 16));
            FloatVector v2 = r.mul(FloatVector.fromArray(f, x, xc + xi + 16));
            for (int k = l; k < 16; k += l) { // 16 / L steps, a constant per JVM: unrolled
                q = quants(w, at + k);
                r = quants(w, at + 16 + k);
                p = q.fma(FloatVector.fromArray(f, x, xa + xi + k), p);
                u = q.fma(FloatVector.fromArray(f, x, xb + xi + k), u);
                v = q.fma(FloatVector.fromArray(f, x, xc + xi + k), v);
                p2 = r.fma(FloatVector.fromArray(f, x, xa + xi + 16 + k), p2);
                u2 = r.fma(FloatVector.fromArray(f, x, xb + xi + 16 + k), u2);
                v2 = r.fma(FloatVector.fromArray(f, x, xc + xi + 16 + k), v2);
            }
            FloatVector s0 = FloatVector.broadcast(f, w.get(Bytes.FLOAT, sc));
            FloatVector s1 = FloatVector.broadcast(f, w.get(Bytes.FLOAT, sc + 4));
            a0 = p.fma(s0, a0);
            b0 = u.fma(s0, b0);
            c0 = v.fma(s0, c0);
            a1 = p2.fma(s1, a1);
            b1 = u2.fma(s1, b1);
            c1 = v2.fma(s1, c1);
        }
        out[o] = F32Vector.sum(a0.add(a1));
        out[o + outStride] = F32Vector.sum(b0.add(b1));
        out[o + 2 * outStride] = F32Vector.sum(c0.add(c1));
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int e = 64 * j;
            for (int i = 0; i < 64; i += f.length()) {
                FloatVector v = weights(w, group, i);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + e + i), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + e + i), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + e + i), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + e + i), a3);
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            for (int i = 0; i < 64; i += l) {
                weights(w, group, i).intoArray(dst, dstOff + 64 * j + i);
            }
        }
    }
}
