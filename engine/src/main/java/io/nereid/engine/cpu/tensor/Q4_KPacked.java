package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K repacked once, when its matrix is bound, for the Vector API kernels: per super-block its
 * 128 bytes of quants as they are (group {@code g}, byte {@code l}: low nibble weight
 * {@code 64g + l}, high nibble {@code 64g + 32 + l}), then its eight sub-block scales
 * {@code d * scale} and eight mins {@code dmin * min} as floats; 192 bytes in place of 144 (0.75
 * bytes a weight in place of 0.56).
 *
 * <p>Why: in Q4_K's own layout every super-block starts with two F16 conversions and sixteen
 * 6-bit fields taken out of twelve bytes ({@link KScales}), each read bounds checked; C2 compiles
 * that to more scalar instructions than the block has vector FMAs (249 {@code mov} and 55
 * {@code cmp} against 24 FMAs), which kept the kernel at half Q4_0's speed whatever the order of
 * its sums. Repacked, a super-block is Q4_0's loop with float scales at hand.
 *
 * <p>The decoded weights are {@link Q4_KFormat}'s bit for bit ({@code ds * q - ms}, mul then sub),
 * and {@link #dot} / {@link #dot4Tokens} keep the one order of the batch-invariant kernels (one
 * FMA chain in element order), the order the original layout's vector kernel had, so repacking
 * changed no result. {@link #dotFast} sums as llama.cpp's {@code vec_dot_q4_K} does:
 * {@code sum(ds * sum(q * x)) - sum(ms * sum(x))}, with each 32-weight {@code sum(x)} of the input
 * taken once per call of {@link #dotFastRows} (in the scratch) rather than once per row. The
 * packed copy is off-heap, freed with its matrix; the mapped file's Q4_K pages are no longer
 * read, so the page cache may drop them.
 */
final class Q4_KPacked implements RowKernel {

    static final Q4_KPacked INSTANCE = new Q4_KPacked();

    /** Packed bytes per super-block: 128 bytes of quants, 8 float scales, 8 float mins. */
    static final int BLOCK_BYTES = QK_K / 2 + 16 * 4;

    private static final int SCALES = QK_K / 2;
    private static final int MINS = SCALES + 8 * 4;

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    /** Where the width has more than eight lanes (512 bits), the lanes a super-block's eight mins fill. */
    private static final VectorMask<Float> EIGHT = VectorMask.fromLong(W.floats(), 0xFFL);

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
            long out = b * BLOCK_BYTES;
            MemorySegment.copy(src, in + 16, dst, out, QK_K / 2);
            float d = Bytes.f16(src, in);
            float dmin = Bytes.f16(src, in + 2);
            long lo = src.get(Bytes.LONG, in + 4);
            int hi = src.get(Bytes.INT, in + 12);
            for (int s = 0; s < 8; s++) {
                dst.set(Bytes.FLOAT, out + SCALES + 4L * s, d * KScales.scale(lo, hi, s));
                dst.set(Bytes.FLOAT, out + MINS + 4L * s, dmin * KScales.min(lo, hi, s));
            }
        }
    }

    private static float scale(MemorySegment w, long block, int s) {
        return w.get(Bytes.FLOAT, block + SCALES + 4L * s);
    }

    private static float min(MemorySegment w, long block, int s) {
        return w.get(Bytes.FLOAT, block + MINS + 4L * s);
    }

    /** Weights {@code i..i+L} of a 64-weight group decoded: {@code ds * q - ms}, mul then sub; {@code shift} 0 or 4, a constant. */
    private static FloatVector weights(MemorySegment w, long qs, int shift, float ds, float ms, int i) {
        IntVector q = W.loadInts(w, qs + i).lanewise(VectorOperators.LSHR, shift).and(0x0F);
        return ((FloatVector) q.convert(VectorOperators.I2F, 0)).mul(ds).sub(ms);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int g = 0; g < 4; g++) {
                long qs = block + 32L * g;
                int x0 = xOff + b * QK_K + 64 * g;
                float ds = scale(w, block, 2 * g), ms = min(w, block, 2 * g);
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, qs, 0, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
                }
                ds = scale(w, block, 2 * g + 1);
                ms = min(w, block, 2 * g + 1);
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, qs, 4, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + 32 + i), acc);
                }
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
        FloatVector m = a0, mb = a0;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int g = 0; g < 4; g++) {
                long qs = block + 32L * g;
                int xl = b * QK_K + 64 * g;
                FloatVector lo = FloatVector.zero(f), hi = lo, lo2 = lo, hi2 = lo;
                for (int i = 0; i < 32; i += f.length()) {
                    IntVector q = W.loadInts(w, qs + i);
                    FloatVector ql = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
                    FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F)
                            .convert(VectorOperators.I2F, 0);
                    lo = ql.fma(FloatVector.fromArray(f, x, xa + xl + i), lo);
                    hi = qh.fma(FloatVector.fromArray(f, x, xa + xl + 32 + i), hi);
                    lo2 = ql.fma(FloatVector.fromArray(f, x, xb + xl + i), lo2);
                    hi2 = qh.fma(FloatVector.fromArray(f, x, xb + xl + 32 + i), hi2);
                }
                FloatVector s0 = FloatVector.broadcast(f, scale(w, block, 2 * g));
                FloatVector s1 = FloatVector.broadcast(f, scale(w, block, 2 * g + 1));
                a0 = lo.fma(s0, a0);
                a1 = hi.fma(s1, a1);
                b0 = lo2.fma(s0, b0);
                b1 = hi2.fma(s1, b1);
            }
            m = mins(w, block + MINS, sums, 8 * b, m);
            mb = mins(w, block + MINS, sums, half + 8 * b, mb);
        }
        out[oa] = LaneSums.sum(a0.add(a1)) - LaneSums.sum(m);
        out[ob] = LaneSums.sum(b0.add(b1)) - LaneSums.sum(mb);
    }

    /**
     * {@code m + mins[j] * sums[s0 + j]} lane by lane for {@code j < 8}, the eight float mins of a
     * super-block at {@code at} (several vectors below eight lanes, a masked one above).
     */
    static FloatVector mins(MemorySegment w, long at, float[] sums, int s0, FloatVector m) {
        VectorSpecies<Float> f = W.floats();
        if (f.length() > 8) { // constant per JVM: the branch folds
            return FloatVector.fromMemorySegment(f, w, at, ByteOrder.LITTLE_ENDIAN, EIGHT)
                    .fma(FloatVector.fromArray(f, sums, s0, EIGHT), m);
        }
        for (int j = 0; j < 8; j += f.length()) {
            m = FloatVector.fromMemorySegment(f, w, at + 4L * j, ByteOrder.LITTLE_ENDIAN)
                    .fma(FloatVector.fromArray(f, sums, s0 + j), m);
        }
        return m;
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
     * high ones ({@code 2g + 1}, another), each chain scaled once into its accumulator; the mins
     * against the input's sums eight lanes at a time.
     */
    private static float dotWithSums(MemorySegment w, long offset, float[] x, int xOff, int n, float[] sums) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        FloatVector m = a0;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int x0 = xOff + b * QK_K;
            for (int g = 0; g < 4; g++) {
                long qs = block + 32L * g;
                int xl = x0 + 64 * g;
                FloatVector lo = FloatVector.zero(f), hi = lo;
                for (int i = 0; i < 32; i += f.length()) {
                    IntVector q = W.loadInts(w, qs + i);
                    FloatVector ql = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
                    FloatVector qh = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).and(0x0F)
                            .convert(VectorOperators.I2F, 0);
                    lo = ql.fma(FloatVector.fromArray(f, x, xl + i), lo);
                    hi = qh.fma(FloatVector.fromArray(f, x, xl + 32 + i), hi);
                }
                a0 = lo.fma(FloatVector.broadcast(f, scale(w, block, 2 * g)), a0);
                a1 = hi.fma(FloatVector.broadcast(f, scale(w, block, 2 * g + 1)), a1);
            }
            m = mins(w, block + MINS, sums, 8 * b, m);
        }
        return LaneSums.sum(a0.add(a1)) - LaneSums.sum(m);
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int g = 0; g < 4; g++) {
                long qs = block + 32L * g;
                int x0 = b * QK_K + 64 * g;
                float ds = scale(w, block, 2 * g), ms = min(w, block, 2 * g);
                for (int i = 0; i < 32; i += f.length()) {
                    FloatVector v = weights(w, qs, 0, ds, ms, i);
                    a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + i), a0);
                    a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + i), a1);
                    a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + i), a2);
                    a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + i), a3);
                }
                ds = scale(w, block, 2 * g + 1);
                ms = min(w, block, 2 * g + 1);
                for (int i = 0; i < 32; i += f.length()) {
                    FloatVector v = weights(w, qs, 4, ds, ms, i);
                    a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + 32 + i), a0);
                    a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + 32 + i), a1);
                    a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + 32 + i), a2);
                    a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + 32 + i), a3);
                }
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int g = 0; g < 4; g++) {
                long qs = block + 32L * g;
                int y = dstOff + b * QK_K + 64 * g;
                float ds0 = scale(w, block, 2 * g), ms0 = min(w, block, 2 * g);
                float ds1 = scale(w, block, 2 * g + 1), ms1 = min(w, block, 2 * g + 1);
                for (int i = 0; i < 32; i += l) {
                    weights(w, qs, 0, ds0, ms0, i).intoArray(dst, y + i);
                    weights(w, qs, 4, ds1, ms1, i).intoArray(dst, y + 32 + i);
                }
            }
        }
    }
}
