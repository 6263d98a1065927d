package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K repacked once, when its matrix is bound, for the Vector API kernels: per 64-weight group
 * {@code g} of a super-block, 48 bytes: its 32 bytes of quants as they are (byte {@code l}: low
 * nibble weight {@code 64g + l}, high nibble {@code 64g + 32 + l}), then its two sub-blocks'
 * scales {@code d * scale} and mins {@code dmin * min} as floats (scale {@code 2g}, scale
 * {@code 2g + 1}, min {@code 2g}, min {@code 2g + 1}); 192 bytes a super-block in place of 144
 * (0.75 bytes a weight in place of 0.56).
 *
 * <p>Why: in Q4_K's own layout every super-block starts with two F16 conversions and sixteen
 * 6-bit fields taken out of twelve bytes ({@link KScales}), each read bounds checked; C2 compiles
 * that to more scalar instructions than the block has vector FMAs, which kept the kernel at half
 * Q4_0's speed whatever the order of its sums. Why groups of a uniform 48 bytes rather than a
 * super-block's quants followed by its scales: a row is then one flat loop over its groups, every
 * address affine in the loop counter, which C2 compiles to one tight loop with its bounds checks
 * hoisted; over super-blocks with a group loop inside (the previous layout) it kept a bounds check
 * on every scale, rebuilt the eight-lane mask of the mins from its array on every super-block and
 * spilled, about as many instructions around the FMAs as in them (JMH 1024 x 4096, one token, one
 * thread: 440-625 µs before, 320-355 after on the same machine). Unrolling the group loop by hand
 * instead runs into C2's inlining budget ({@code NodeCountInliningCutoff}) and boxes the vectors.
 *
 * <p>The decoded weights are {@link Q4_KFormat}'s bit for bit ({@code ds * q - ms}, mul then sub),
 * and {@link #dot} / {@link #dot4Tokens} keep the one order of the batch-invariant kernels (one
 * FMA chain in element order). {@link #dotFast} sums as llama.cpp's {@code vec_dot_q4_K} does:
 * {@code sum(ds * sum(q * x)) - sum(ms * sum(x))}, with each 32-weight {@code sum(x)} of the input
 * taken once per call of {@link #dotFastRows} (in the scratch) rather than once per row. The
 * packed copy is off-heap, freed with its matrix; the mapped file's Q4_K pages are no longer
 * read, so the page cache may drop them.
 */
final class Q4_KPacked implements RowKernel {

    static final Q4_KPacked INSTANCE = new Q4_KPacked();

    /** Packed bytes per 64-weight group: 32 bytes of quants, 2 float scales, 2 float mins. */
    private static final int GROUP_BYTES = 32 + 4 * 4;

    /** Packed bytes per super-block: its four groups. */
    static final int BLOCK_BYTES = 4 * GROUP_BYTES;

    private static final int SCALE = 32;

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    private Q4_KPacked() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q4_K;
    }

    /** {@code data} already packed ({@link #pack}): read as it is. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        return new Bound(this, data, BLOCK_BYTES);
    }

    /** {@code src}'s {@code blocks} Q4_K super-blocks packed into {@code dst}, {@code blocks * BLOCK_BYTES} long. */
    static void pack(MemorySegment src, long blocks, MemorySegment dst) {
        for (long b = 0; b < blocks; b++) {
            long in = b * Q4_KFormat.BLOCK_BYTES;
            float d = Bytes.f16(src, in);
            float dmin = Bytes.f16(src, in + 2);
            long lo = src.get(Bytes.LONG, in + 4);
            int hi = src.get(Bytes.INT, in + 12);
            for (int g = 0; g < 4; g++) {
                long out = b * BLOCK_BYTES + (long) GROUP_BYTES * g;
                MemorySegment.copy(src, in + 16 + 32L * g, dst, out, 32);
                KScales.packGroupScales(dst, out + SCALE, d, dmin, lo, hi, g);
            }
        }
    }

    /** The low ({@code half} 0) or high (1) sub-block's scale of the group at {@code group}. */
    private static float scale(MemorySegment w, long group, int half) {
        return KScales.groupScale(w, group + SCALE, half);
    }

    private static float min(MemorySegment w, long group, int half) {
        return KScales.groupScale(w, group + SCALE, 2 + half);
    }

    /** Weights {@code i..i+L} of a group's sub-block decoded: {@code ds * q - ms}, mul then sub; {@code shift} 0 or 4, a constant. */
    private static FloatVector weights(MemorySegment w, long group, int shift, float ds, float ms, int i) {
        IntVector q = W.loadInts(w, group + i).lanewise(VectorOperators.LSHR, shift).and(0x0F);
        return ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(ds).sub(ms);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int x0 = xOff + 64 * j;
            float ds = scale(w, group, 0), ms = min(w, group, 0);
            for (int i = 0; i < 32; i += f.length()) {
                acc = weights(w, group, 0, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
            }
            ds = scale(w, group, 1);
            ms = min(w, group, 1);
            for (int i = 0; i < 32; i += f.length()) {
                acc = weights(w, group, 4, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + 32 + i), acc);
            }
        }
        return F32Vector.sum(acc);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: {@link #dotFastRows} of one row, with the input's sub-block sums in an array of
     * its own (this allocates; the matmuls call {@link #dotFastRows}).
     */
    @Override
    public float dotFast(MemorySegment w, long offset, float[] x, int xOff, int n) {
        float[] sums = new float[n / 32];
        subBlockSums(x, xOff, n, sums, 0);
        return dotWithSums(w, offset, x, xOff, n, sums);
    }

    /** {@inheritDoc} The input's 32-weight sums go to {@code scratch[0, n / 32)}. */
    @Override
    public void dotFastRows(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int n,
            float[] out, int outOff, float[] scratch) {
        float[] sums = scratch != null && scratch.length >= n / 32 ? scratch : new float[n / 32];
        subBlockSums(x, xOff, n, sums, 0);
        for (int r = 0; r < rows; r++) {
            out[outOff + r] = dotWithSums(w, offset + r * rowBytes, x, xOff, n, sums);
        }
    }

    /**
     * {@inheritDoc} The two inputs' 32-weight sums go to {@code scratch[0, n / 16)}; each group's
     * quants are taken apart once for both tokens, each token summed in {@link #dotWithSums}'
     * chains and order.
     */
    @Override
    public void dotFastRows2Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        int half = n / 32;
        float[] sums = scratch != null && scratch.length >= 2 * half ? scratch : new float[2 * half];
        subBlockSums(x, xOff, n, sums, 0);
        subBlockSums(x, xOff + xStride, n, sums, half);
        for (int r = 0; r < rows; r++) {
            dotWithSums2(w, offset + r * rowBytes, x, xOff, xOff + xStride, n, sums, half, out, outOff + r,
                    outOff + outStride + r);
        }
    }

    /** {@link #dotWithSums} of one row for two inputs (their sums at {@code sums[0]} and {@code sums[half]}). */
    private static void dotWithSums2(MemorySegment w, long offset, float[] x, int xa, int xb, int n, float[] sums,
            int half, float[] out, int oa, int ob) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0;
        float m0 = 0, m1 = 0, mb0 = 0, mb1 = 0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int xl = 64 * j;
            FloatVector lo = FloatVector.zero(f), hi = lo, lo2 = lo, hi2 = lo;
            for (int i = 0; i < 32; i += f.length()) {
                IntVector q = W.loadInts(w, group + i);
                FloatVector ql = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
                FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F)
                        .convert(VectorOperators.I2F, 0);
                lo = ql.fma(FloatVector.fromArray(f, x, xa + xl + i), lo);
                hi = qh.fma(FloatVector.fromArray(f, x, xa + xl + 32 + i), hi);
                lo2 = ql.fma(FloatVector.fromArray(f, x, xb + xl + i), lo2);
                hi2 = qh.fma(FloatVector.fromArray(f, x, xb + xl + 32 + i), hi2);
            }
            FloatVector s0 = FloatVector.broadcast(f, scale(w, group, 0));
            FloatVector s1 = FloatVector.broadcast(f, scale(w, group, 1));
            a0 = lo.fma(s0, a0);
            a1 = hi.fma(s1, a1);
            b0 = lo2.fma(s0, b0);
            b1 = hi2.fma(s1, b1);
            float n0 = min(w, group, 0), n1 = min(w, group, 1);
            m0 = Math.fma(n0, sums[2 * j], m0);
            m1 = Math.fma(n1, sums[2 * j + 1], m1);
            mb0 = Math.fma(n0, sums[half + 2 * j], mb0);
            mb1 = Math.fma(n1, sums[half + 2 * j + 1], mb1);
        }
        out[oa] = LaneSums.sum(a0.add(a1)) - (m0 + m1);
        out[ob] = LaneSums.sum(b0.add(b1)) - (mb0 + mb1);
    }

    /**
     * {@inheritDoc} The three inputs' 32-weight sums go to {@code scratch[0, 3n / 32)}; each group's
     * quants are taken apart once for all three tokens, each token summed in {@link #dotWithSums}'
     * chains and order.
     */
    @Override
    public void dotFastRows3Tokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff,
            int xStride, int n, float[] out, int outOff, int outStride, float[] scratch) {
        int third = n / 32;
        float[] sums = scratch != null && scratch.length >= 3 * third ? scratch : new float[3 * third];
        for (int t = 0; t < 3; t++) {
            subBlockSums(x, xOff + t * xStride, n, sums, t * third);
        }
        for (int r = 0; r < rows; r++) {
            dotWithSums3(w, offset + r * rowBytes, x, xOff, xStride, n, sums, third, out, outOff + r, outStride);
        }
    }

    /**
     * {@link #dotWithSums} of one row for the inputs at {@code xa}, {@code xa + stride} and
     * {@code xa + 2 * stride} (their sums {@code third} apart), into {@code out[o]},
     * {@code out[o + outStride]} and {@code out[o + 2 * outStride]}.
     */
    private static void dotWithSums3(MemorySegment w, long offset, float[] x, int xa, int stride, int n,
            float[] sums, int third, float[] out, int o, int outStride) {
        VectorSpecies<Float> f = W.floats();
        int xb = xa + stride, xc = xb + stride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0;
        float m0 = 0, m1 = 0, mb0 = 0, mb1 = 0, mc0 = 0, mc1 = 0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int xl = 64 * j;
            FloatVector lo = FloatVector.zero(f), hi = lo, lo2 = lo, hi2 = lo, lo3 = lo, hi3 = lo;
            for (int i = 0; i < 32; i += f.length()) {
                IntVector q = W.loadInts(w, group + i);
                FloatVector ql = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
                FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F)
                        .convert(VectorOperators.I2F, 0);
                lo = ql.fma(FloatVector.fromArray(f, x, xa + xl + i), lo);
                hi = qh.fma(FloatVector.fromArray(f, x, xa + xl + 32 + i), hi);
                lo2 = ql.fma(FloatVector.fromArray(f, x, xb + xl + i), lo2);
                hi2 = qh.fma(FloatVector.fromArray(f, x, xb + xl + 32 + i), hi2);
                lo3 = ql.fma(FloatVector.fromArray(f, x, xc + xl + i), lo3);
                hi3 = qh.fma(FloatVector.fromArray(f, x, xc + xl + 32 + i), hi3);
            }
            FloatVector s0 = FloatVector.broadcast(f, scale(w, group, 0));
            FloatVector s1 = FloatVector.broadcast(f, scale(w, group, 1));
            a0 = lo.fma(s0, a0);
            a1 = hi.fma(s1, a1);
            b0 = lo2.fma(s0, b0);
            b1 = hi2.fma(s1, b1);
            c0 = lo3.fma(s0, c0);
            c1 = hi3.fma(s1, c1);
            float n0 = min(w, group, 0), n1 = min(w, group, 1);
            m0 = Math.fma(n0, sums[2 * j], m0);
            m1 = Math.fma(n1, sums[2 * j + 1], m1);
            mb0 = Math.fma(n0, sums[third + 2 * j], mb0);
            mb1 = Math.fma(n1, sums[third + 2 * j + 1], mb1);
            mc0 = Math.fma(n0, sums[2 * third + 2 * j], mc0);
            mc1 = Math.fma(n1, sums[2 * third + 2 * j + 1], mc1);
        }
        out[o] = LaneSums.sum(a0.add(a1)) - (m0 + m1);
        out[o + outStride] = LaneSums.sum(b0.add(b1)) - (mb0 + mb1);
        out[o + 2 * outStride] = LaneSums.sum(c0.add(c1)) - (mc0 + mc1);
    }

    /** {@code sums[at + s] = x[xOff + 32s] + ... + x[xOff + 32s + 31]}, in lanes then across them. */
    static void subBlockSums(float[] x, int xOff, int n, float[] sums, int at) {
        VectorSpecies<Float> f = W.floats();
        for (int s = 0; s < n / 32; s++) {
            FloatVector v = FloatVector.fromArray(f, x, xOff + 32 * s);
            for (int i = f.length(); i < 32; i += f.length()) {
                v = v.add(FloatVector.fromArray(f, x, xOff + 32 * s + i));
            }
            sums[at + s] = LaneSums.sum(v);
        }
    }

    /**
     * {@code sum over sub-blocks s of ds[s] * sum(q * x) - sum of ms[s] * sums[s]}: per group of 64
     * weights one load of quants serves the low nibbles (sub-block {@code 2g}, one chain) and the
     * high ones ({@code 2g + 1}, another), each chain scaled once into its accumulator (the low
     * sub-blocks' into one, the high ones' into another); the mins against the input's sums in two
     * scalar chains the same way.
     */
    private static float dotWithSums(MemorySegment w, long offset, float[] x, int xOff, int n, float[] sums) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        float m0 = 0, m1 = 0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int xl = xOff + 64 * j;
            FloatVector lo = FloatVector.zero(f), hi = lo;
            for (int i = 0; i < 32; i += f.length()) {
                IntVector q = W.loadInts(w, group + i);
                FloatVector ql = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
                FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F)
                        .convert(VectorOperators.I2F, 0);
                lo = ql.fma(FloatVector.fromArray(f, x, xl + i), lo);
                hi = qh.fma(FloatVector.fromArray(f, x, xl + 32 + i), hi);
            }
            a0 = lo.fma(FloatVector.broadcast(f, scale(w, group, 0)), a0);
            a1 = hi.fma(FloatVector.broadcast(f, scale(w, group, 1)), a1);
            m0 = Math.fma(min(w, group, 0), sums[2 * j], m0);
            m1 = Math.fma(min(w, group, 1), sums[2 * j + 1], m1);
        }
        return LaneSums.sum(a0.add(a1)) - (m0 + m1);
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int x0 = 64 * j;
            float ds = scale(w, group, 0), ms = min(w, group, 0);
            for (int i = 0; i < 32; i += f.length()) {
                FloatVector v = weights(w, group, 0, ds, ms, i);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + i), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + i), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + i), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + i), a3);
            }
            ds = scale(w, group, 1);
            ms = min(w, group, 1);
            for (int i = 0; i < 32; i += f.length()) {
                FloatVector v = weights(w, group, 4, ds, ms, i);
                a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + 32 + i), a0);
                a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + 32 + i), a1);
                a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + 32 + i), a2);
                a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + 32 + i), a3);
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int y = dstOff + 64 * j;
            float ds0 = scale(w, group, 0), ms0 = min(w, group, 0);
            float ds1 = scale(w, group, 1), ms1 = min(w, group, 1);
            for (int i = 0; i < 32; i += l) {
                weights(w, group, 0, ds0, ms0, i).intoArray(dst, y + i);
                weights(w, group, 4, ds1, ms1, i).intoArray(dst, y + 32 + i);
            }
        }
    }
}
