package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.Q4_0Format.BLOCK;
import static io.nereid.engine.cpu.tensor.Q4_0Format.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 with the Vector API: each step loads {@code L} packed bytes and yields two vectors, the
 * low nibbles (elements {@code k..k+L-1}) and the high nibbles ({@code k+16..k+16+L-1}).
 * {@link Q4_0Format} is the specification.
 */
final class Q4_0Vector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.Q4_0;
    }

    /**
     * Elements {@code k..k+L} ({@code high} false) or {@code 16+k..16+k+L} of a block decoded, as
     * {@link #dequantize} writes them: {@code (q - 8) * d}, the nibble taken apart on int lanes.
     */
    private static FloatVector weights(MemorySegment w, long block, float d, int k, int shift) {
        IntVector q = W.loadInts(w, block + 2 + k).lanewise(VectorOperators.LSHR, shift).and(0x0F).sub(8);
        return ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(d);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            int x0 = xOff + b * BLOCK;
            // elements in order: the low nibbles (0..15), then the high ones (16..31)
            for (int k = 0; k < BLOCK / 2; k += f.length()) {
                acc = weights(w, block, d, k, 0).fma(FloatVector.fromArray(f, x, x0 + k), acc);
            }
            for (int k = 0; k < BLOCK / 2; k += f.length()) {
                acc = weights(w, block, d, k, 4).fma(FloatVector.fromArray(f, x, x0 + BLOCK / 2 + k), acc);
            }
        }
        return F32Vector.sum(acc);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each load of {@code L} quant bytes serves both its low nibbles (elements {@code k})
     * and its high ones ({@code 16 + k}), each block's {@code sum((q - 8) * x)} in two chains, then
     * times the block's scale into one of two accumulators (even and odd blocks): per vector one
     * fewer multiply than {@link #dot}, and half its loads.
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

    /** {@code sum((q[k] - 8) * x[x0 + k])} lane by lane over one block: low nibbles in one chain, high in the other. */
    private static FloatVector blockSum(MemorySegment w, long block, float[] x, int x0) {
        VectorSpecies<Float> f = W.floats();
        FloatVector lo = FloatVector.zero(f), hi = lo;
        for (int k = 0; k < BLOCK / 2; k += f.length()) {
            IntVector q = W.loadInts(w, block + 2 + k);
            FloatVector ql = (FloatVector) q.and(0x0F).sub(8).convert(VectorOperators.I2F, 0);
            FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F).sub(8)
                    .convert(VectorOperators.I2F, 0);
            lo = ql.fma(FloatVector.fromArray(f, x, x0 + k), lo);
            hi = qh.fma(FloatVector.fromArray(f, x, x0 + BLOCK / 2 + k), hi);
        }
        return lo.add(hi);
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
     * <p>Here: each load of quant bytes taken apart once for both tokens, each token's sums in
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
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = row + (long) b * BLOCK_BYTES;
            int x0 = b * BLOCK;
            // blockSum for each token, the nibbles shared
            FloatVector lo = FloatVector.zero(f), hi = lo, lo2 = lo, hi2 = lo;
            for (int k = 0; k < BLOCK / 2; k += f.length()) {
                IntVector q = W.loadInts(w, block + 2 + k);
                FloatVector ql = (FloatVector) q.and(0x0F).sub(8).convert(VectorOperators.I2F, 0);
                FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F).sub(8)
                        .convert(VectorOperators.I2F, 0);
                lo = ql.fma(FloatVector.fromArray(f, x, xa + x0 + k), lo);
                hi = qh.fma(FloatVector.fromArray(f, x, xa + x0 + BLOCK / 2 + k), hi);
                lo2 = ql.fma(FloatVector.fromArray(f, x, xb + x0 + k), lo2);
                hi2 = qh.fma(FloatVector.fromArray(f, x, xb + x0 + BLOCK / 2 + k), hi2);
            }
            FloatVector d = FloatVector.broadcast(f, Bytes.f16(w, block));
            FloatVector ta = lo.add(hi).fma(d, a0);
            FloatVector tb = lo2.add(hi2).fma(d, b0);
            a0 = a1;
            a1 = ta;
            b0 = b1;
            b1 = tb;
        }
        out[oa] = F32Vector.sum(a0.add(a1));
        out[ob] = F32Vector.sum(b0.add(b1));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: each load of quant bytes taken apart once for all three tokens, each token's sums
     * in {@link #dotFast}'s chains and order.
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
        int xb = xa + stride, xc = xb + stride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = row + (long) b * BLOCK_BYTES;
            int x0 = b * BLOCK;
            FloatVector lo = FloatVector.zero(f), hi = lo, lo2 = lo, hi2 = lo, lo3 = lo, hi3 = lo;
            for (int k = 0; k < BLOCK / 2; k += f.length()) {
                IntVector q = W.loadInts(w, block + 2 + k);
                FloatVector ql = (FloatVector) q.and(0x0F).sub(8).convert(VectorOperators.I2F, 0);
                FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F).sub(8)
                        .convert(VectorOperators.I2F, 0);
                lo = ql.fma(FloatVector.fromArray(f, x, xa + x0 + k), lo);
                hi = qh.fma(FloatVector.fromArray(f, x, xa + x0 + BLOCK / 2 + k), hi);
                lo2 = ql.fma(FloatVector.fromArray(f, x, xb + x0 + k), lo2);
                hi2 = qh.fma(FloatVector.fromArray(f, x, xb + x0 + BLOCK / 2 + k), hi2);
                lo3 = ql.fma(FloatVector.fromArray(f, x, xc + x0 + k), lo3);
                hi3 = qh.fma(FloatVector.fromArray(f, x, xc + x0 + BLOCK / 2 + k), hi3);
            }
            FloatVector d = FloatVector.broadcast(f, Bytes.f16(w, block));
            FloatVector ta = lo.add(hi).fma(d, a0);
            FloatVector tb = lo2.add(hi2).fma(d, b0);
            FloatVector tc = lo3.add(hi3).fma(d, c0);
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

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK / 2; k += f.length()) {
                FloatVector v = weights(w, block, d, k, 0);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + b * BLOCK + k), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + b * BLOCK + k), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + b * BLOCK + k), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + b * BLOCK + k), a3);
            }
            for (int k = 0; k < BLOCK / 2; k += f.length()) {
                FloatVector v = weights(w, block, d, k, 4);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + b * BLOCK + BLOCK / 2 + k), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + b * BLOCK + BLOCK / 2 + k), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + b * BLOCK + BLOCK / 2 + k), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + b * BLOCK + BLOCK / 2 + k), a3);
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            int y = dstOff + b * BLOCK;
            for (int k = 0; k < BLOCK / 2; k += l) {
                weights(w, block, d, k, 0).intoArray(dst, y + k);
                weights(w, block, d, k, 4).intoArray(dst, y + BLOCK / 2 + k);
            }
        }
    }
}
