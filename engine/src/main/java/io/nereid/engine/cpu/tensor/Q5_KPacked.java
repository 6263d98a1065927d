package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q5_K repacked once, when its matrix is bound, for the Vector API kernels: per 64-weight group
 * {@code g} of a super-block, 80 bytes: its 64 five-bit quants as bytes in element order, then its
 * two sub-blocks' scales {@code d * scale} and mins {@code dmin * min} as floats (scale
 * {@code 2g}, scale {@code 2g + 1}, min {@code 2g}, min {@code 2g + 1}); 320 bytes a super-block in
 * place of 176 (1.25 bytes a weight, as repacked Q6_K, in place of 0.69).
 *
 * <p>Why bytes and not Q5_K's nibbles and high bits kept apart (224 bytes): each weight then
 * costs a load, two shifts, two masks and an or before its conversion, and at two threads the
 * kernel is bound by those instructions, not by memory; a byte is one widening load, as Q8_0's.
 * Why groups of a uniform 80 bytes: a row is one flat loop with addresses affine in its counter,
 * whose bounds checks C2 hoists, and no 16-byte load crosses a cache line (see {@link Q4_KPacked}).
 *
 * <p>The decoded weights are {@link Q5_KFormat}'s bit for bit ({@code ds * q - ms}), {@link #dot} and
 * {@link #dot4Tokens} keep the batch-invariant order (as {@link Q4_KPacked}), and {@link #dotFast}
 * sums as {@link Q4_KPacked}'s does: each sub-block's {@code sum(q * x)} in one chain, scaled once
 * into one of two accumulators (even and odd sub-blocks), the mins against the input's sub-block
 * sums in two scalar chains the same way.
 */
final class Q5_KPacked implements RowKernel {

    static final Q5_KPacked INSTANCE = new Q5_KPacked();

    /** Packed bytes per 64-weight group: 64 quants, 2 float scales, 2 float mins. */
    private static final int GROUP_BYTES = 64 + 4 * 4;

    /** Packed bytes per super-block: its four groups. */
    static final int BLOCK_BYTES = 4 * GROUP_BYTES;

    private static final int SCALE = 64;

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    private Q5_KPacked() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q5_K;
    }

    /** {@code data} already packed ({@link #pack}): read as it is. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        return new Bound(this, data, BLOCK_BYTES);
    }

    /** {@code src}'s {@code blocks} Q5_K super-blocks packed into {@code dst}, {@code blocks * BLOCK_BYTES} long. */
    static void pack(MemorySegment src, long blocks, MemorySegment dst) {
        byte[] quants = new byte[64];
        for (long b = 0; b < blocks; b++) {
            long in = b * Q5_KFormat.BLOCK_BYTES;
            float d = Bytes.f16(src, in);
            float dmin = Bytes.f16(src, in + 2);
            long lo = src.get(Bytes.LONG, in + 4);
            int hi = src.get(Bytes.INT, in + 12);
            for (int g = 0; g < 4; g++) {
                for (int l = 0; l < 32; l++) {
                    int q = Bytes.u8(src, in + 48 + 32L * g + l);
                    int h = Bytes.u8(src, in + 16 + l);
                    quants[l] = (byte) ((q & 0x0F) | ((h >>> (2 * g)) & 1) << 4);
                    quants[32 + l] = (byte) ((q >>> 4) | ((h >>> (2 * g + 1)) & 1) << 4);
                }
                long out = b * BLOCK_BYTES + (long) GROUP_BYTES * g;
                MemorySegment.copy(quants, 0, dst, ValueLayout.JAVA_BYTE, out, 64);
                KScales.packGroupScales(dst, out + SCALE, d, dmin, lo, hi, g);
            }
        }
    }

    /** The group's low ({@code half} 0) or high (1) sub-block's scale. */
    private static float scale(MemorySegment w, long group, int half) {
        return KScales.groupScale(w, group + SCALE, half);
    }

    private static float min(MemorySegment w, long group, int half) {
        return KScales.groupScale(w, group + SCALE, 2 + half);
    }

    private static FloatVector quants(MemorySegment w, long at) {
        return W.toFloats(W.loadBytes(w, at));
    }

    /** Weights {@code i..i+L} of a group's sub-block {@code half} decoded, as the format: {@code ds * q - ms}, mul then sub. */
    private static FloatVector weights(MemorySegment w, long group, int half, float ds, float ms, int i) {
        return quants(w, group + 32L * half + i).mul(ds).sub(ms);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            for (int h = 0; h < 2; h++) {
                float ds = scale(w, group, h), ms = min(w, group, h);
                int x0 = xOff + 64 * j + 32 * h;
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, group, h, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
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
        Q4_KPacked.subBlockSums(x, xOff, n, sums, 0);
        return dotWithSums(w, offset, x, xOff, n, sums);
    }

    /** {@inheritDoc} The input's 32-weight sums go to {@code scratch[0, n / 32)}. */
    @Override
    public void dotFastRows(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int n,
            float[] out, int outOff, float[] scratch) {
        float[] sums = scratch != null && scratch.length >= n / 32 ? scratch : new float[n / 32];
        Q4_KPacked.subBlockSums(x, xOff, n, sums, 0);
        for (int r = 0; r < rows; r++) {
            out[outOff + r] = dotWithSums(w, offset + r * rowBytes, x, xOff, n, sums);
        }
    }

    /** {@code sum(q * x)} lane by lane over the 32-weight sub-block at {@code at}, one chain. */
    private static FloatVector subBlock(MemorySegment w, long at, float[] x, int xs) {
        VectorSpecies<Float> f = W.floats();
        FloatVector p = quants(w, at).mul(FloatVector.fromArray(f, x, xs));
        for (int i = f.length(); i < 32; i += f.length()) {
            p = quants(w, at + i).fma(FloatVector.fromArray(f, x, xs + i), p);
        }
        return p;
    }

    /** {@code sum over sub-blocks s of ds[s] * sum(q * x) - sum of ms[s] * sums[s]}, as the class comment says. */
    private static float dotWithSums(MemorySegment w, long offset, float[] x, int xOff, int n, float[] sums) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        float m0 = 0, m1 = 0;
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            int xs = xOff + 64 * j;
            a0 = subBlock(w, group, x, xs).fma(FloatVector.broadcast(f, scale(w, group, 0)), a0);
            a1 = subBlock(w, group + 32, x, xs + 32).fma(FloatVector.broadcast(f, scale(w, group, 1)), a1);
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
            for (int h = 0; h < 2; h++) {
                float ds = scale(w, group, h), ms = min(w, group, h);
                int x0 = 64 * j + 32 * h;
                for (int i = 0; i < 32; i += f.length()) {
                    FloatVector v = weights(w, group, h, ds, ms, i);
                    a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + i), a0);
                    a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + i), a1);
                    a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + i), a2);
                    a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + i), a3);
                }
            }
        }
        LaneSums.sum4(a0, a1, a2, a3, out, outOff);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int j = 0; j < n / 64; j++) {
            long group = offset + (long) GROUP_BYTES * j;
            for (int h = 0; h < 2; h++) {
                float ds = scale(w, group, h), ms = min(w, group, h);
                int y = dstOff + 64 * j + 32 * h;
                for (int i = 0; i < 32; i += l) {
                    weights(w, group, h, ds, ms, i).intoArray(dst, y + i);
                }
            }
        }
    }
}
