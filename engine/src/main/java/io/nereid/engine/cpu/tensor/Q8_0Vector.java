package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.Q8_0Format.BLOCK;
import static io.nereid.engine.cpu.tensor.Q8_0Format.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q8_0 with the Vector API: {@code L} int8 quants widened to floats per step. {@link Q8_0Format}
 * is the specification.
 *
 * <p>Why float products and not integer ones (llama.cpp's {@code vec_dot_q8_0_q8_0}, on the
 * activations' Q8_0 quants): the Vector API has no 8- or 16-bit dot-product instruction
 * ({@code vpmaddubsw}, {@code vpdpbusd}); its int8 products take a widening to shorts, a multiply
 * and a pairwise sum by shifts, and measured 4.4 GB/s against 14.7 for this kernel on one thread
 * (2048 x 2048). The activations still carry llama.cpp's Q8_0 rounding ({@link MatmulInput}), so
 * the sums differ from its integer ones only by float rounding.
 */
final class Q8_0Vector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.Q8_0;
    }

    private static FloatVector quants(MemorySegment w, long block, int k) {
        return W.toFloats(W.loadBytes(w, block + 2 + k));
    }

    /** Elements {@code k..k+L} of a block decoded, as {@link #dequantize} writes them: {@code q * d}. */
    private static FloatVector weights(MemorySegment w, long block, float d, int k) {
        return quants(w, block, k).mul(d);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK; k += f.length()) {
                acc = weights(w, block, d, k).fma(FloatVector.fromArray(f, x, xOff + b * BLOCK + k), acc);
            }
        }
        return F32Vector.sum(acc);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each block's quants times {@code x} summed in two chains ({@code sum(q * x)}), then
     * times the block's scale into one of two accumulators, even and odd blocks ({@code d} taken
     * out of the sum as llama.cpp's integer dot does): per vector one fewer multiply than
     * {@link #dot}.
     */
    @Override
    public float dotFast(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        for (int b = 0; b < n / BLOCK; b++) { // even blocks into one accumulator, odd ones into the other
            long block = offset + (long) b * BLOCK_BYTES;
            FloatVector t = blockSum(w, block, x, xOff + b * BLOCK).fma(FloatVector.broadcast(f, Bytes.f16(w, block)), a0);
            a0 = a1;
            a1 = t;
        }
        // one copy of blockSum and one add: a bigger body left this add out of line in the
        // forward pass (C2's inlining budget), boxing a0 and a1 on every call
        return F32Vector.sum(a0.add(a1));
    }

    /** {@code sum(q[k] * x[x0 + k])} lane by lane over one block, in two chains (BLOCK / L >= 2). */
    private static FloatVector blockSum(MemorySegment w, long block, float[] x, int x0) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        FloatVector t0 = quants(w, block, 0).mul(FloatVector.fromArray(f, x, x0));
        FloatVector t1 = quants(w, block, l).mul(FloatVector.fromArray(f, x, x0 + l));
        for (int k = 2 * l; k < BLOCK; k += 2 * l) {
            t0 = quants(w, block, k).fma(FloatVector.fromArray(f, x, x0 + k), t0);
            t1 = quants(w, block, k + l).fma(FloatVector.fromArray(f, x, x0 + k + l), t1);
        }
        return t0.add(t1);
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
     * <p>Here: each block's quants widened once for both tokens, each token's sums in
     * {@link #dotFast}'s chains and order.
     */
    @Override
    public void dotFastRows2Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        for (int r = 0; r < rows; r++) {
            dotFast2(w, offset + r * rowBytes, x, xOff, xOff + xStride, n, out, outOff + r, outOff + outStride + r);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each block's quants widened once for the three tokens, each token's sums in
     * {@link #dotFast}'s chains and order (twelve accumulators: AVX2's sixteen registers hold them
     * with the quants and one input).
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
        for (int b = 0; b < n / BLOCK; b++) {
            long block = row + (long) b * BLOCK_BYTES;
            int e = b * BLOCK;
            FloatVector q = quants(w, block, 0), p = quants(w, block, l);
            FloatVector s0 = q.mul(FloatVector.fromArray(f, x, xa + e));
            FloatVector s1 = p.mul(FloatVector.fromArray(f, x, xa + e + l));
            FloatVector u0 = q.mul(FloatVector.fromArray(f, x, xb + e));
            FloatVector u1 = p.mul(FloatVector.fromArray(f, x, xb + e + l));
            FloatVector v0 = q.mul(FloatVector.fromArray(f, x, xc + e));
            FloatVector v1 = p.mul(FloatVector.fromArray(f, x, xc + e + l));
            for (int k = 2 * l; k < BLOCK; k += 2 * l) {
                q = quants(w, block, k);
                p = quants(w, block, k + l);
                s0 = q.fma(FloatVector.fromArray(f, x, xa + e + k), s0);
                s1 = p.fma(FloatVector.fromArray(f, x, xa + e + k + l), s1);
                u0 = q.fma(FloatVector.fromArray(f, x, xb + e + k), u0);
                u1 = p.fma(FloatVector.fromArray(f, x, xb + e + k + l), u1);
                v0 = q.fma(FloatVector.fromArray(f, x, xc + e + k), v0);
                v1 = p.fma(FloatVector.fromArray(f, x, xc + e + k + l), v1);
            }
            FloatVector d = FloatVector.broadcast(f, Bytes.f16(w, block));
            FloatVector ta = s0.add(s1).fma(d, a0), tb = u0.add(u1).fma(d, b0), tc = v0.add(v1).fma(d, c0);
            a0 = a1;
            a1 = ta;
            b0 = b1;
            b1 = tb;
            c0 = c1;
            c1 = tc;
        }
        out[o] = F32Vector.sum(a0.add(a1));
        out[o + outStride] = F32Vector.sum(b0.add(b1));
        out[o + 2 * outStride] = F32Vector.sum(c0.add(c1));
    }

    /** {@link #dotFast} of one row with the inputs at {@code xa} and {@code xb}, into {@code out[oa]} and {@code out[ob]}. */
    private static void dotFast2(MemorySegment w, long row, float[] x, int xa, int xb, int n, float[] out, int oa,
            int ob) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = row + (long) b * BLOCK_BYTES;
            int x0 = b * BLOCK;
            // blockSum for each token, the quants shared
            FloatVector q = quants(w, block, 0), p = quants(w, block, l);
            FloatVector s0 = q.mul(FloatVector.fromArray(f, x, xa + x0));
            FloatVector s1 = p.mul(FloatVector.fromArray(f, x, xa + x0 + l));
            FloatVector u0 = q.mul(FloatVector.fromArray(f, x, xb + x0));
            FloatVector u1 = p.mul(FloatVector.fromArray(f, x, xb + x0 + l));
            for (int k = 2 * l; k < BLOCK; k += 2 * l) {
                q = quants(w, block, k);
                p = quants(w, block, k + l);
                s0 = q.fma(FloatVector.fromArray(f, x, xa + x0 + k), s0);
                s1 = p.fma(FloatVector.fromArray(f, x, xa + x0 + k + l), s1);
                u0 = q.fma(FloatVector.fromArray(f, x, xb + x0 + k), u0);
                u1 = p.fma(FloatVector.fromArray(f, x, xb + x0 + k + l), u1);
            }
            FloatVector d = FloatVector.broadcast(f, Bytes.f16(w, block));
            FloatVector ta = s0.add(s1).fma(d, a0);
            FloatVector tb = u0.add(u1).fma(d, b0);
            a0 = a1;
            a1 = ta;
            b0 = b1;
            b1 = tb;
        }
        out[oa] = F32Vector.sum(a0.add(a1));
        out[ob] = F32Vector.sum(b0.add(b1));
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK; k += f.length()) {
                FloatVector v = weights(w, block, d, k);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + b * BLOCK + k), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + b * BLOCK + k), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + b * BLOCK + k), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + b * BLOCK + k), a3);
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each token's input vector is loaded once for both rows (eight accumulators, four
     * inputs, two weight vectors: 14 of AVX2's 16 registers), each accumulator taking the FMAs
     * {@link #dot4Tokens} gives it, in its order.
     */
    @Override
    public void dot4Tokens2Rows(MemorySegment w, long offset, long rowBytes, float[] x, int xOff, int xStride, int n,
            float[] out, int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        long second = offset + rowBytes;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            long block2 = second + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float e = Bytes.f16(w, block2);
            for (int k = 0; k < BLOCK; k += f.length()) {
                int at = b * BLOCK + k;
                FloatVector v = weights(w, block, d, k);
                FloatVector u = weights(w, block2, e, k);
                FloatVector y = FloatVector.fromArray(f, x, xOff + at);
                a0 = v.fma(y, a0);
                b0 = u.fma(y, b0);
                y = FloatVector.fromArray(f, x, x1 + at);
                a1 = v.fma(y, a1);
                b1 = u.fma(y, b1);
                y = FloatVector.fromArray(f, x, x2 + at);
                a2 = v.fma(y, a2);
                b2 = u.fma(y, b2);
                y = FloatVector.fromArray(f, x, x3 + at);
                a3 = v.fma(y, a3);
                b3 = u.fma(y, b3);
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
        LaneSums.sum4(b0, b1, b2, b3, out, outOff + 4);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK; k += l) {
                quants(w, block, k).mul(d).intoArray(dst, dstOff + b * BLOCK + k);
            }
        }
    }
}
