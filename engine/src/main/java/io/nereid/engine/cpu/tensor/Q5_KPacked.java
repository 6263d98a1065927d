package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q5_K repacked once, when its matrix is bound, for the Vector API kernels: per super-block its
 * 256 five-bit quants as bytes in element order, then its eight sub-block scales {@code d * scale}
 * and eight mins {@code dmin * min} as floats; 320 bytes in place of 176 (1.25 bytes a weight, as
 * repacked Q6_K, in place of 0.69).
 *
 * <p>Why bytes and not Q5_K's nibbles and high bits kept apart (224 bytes): each weight then
 * costs a load, two shifts, two masks and an or before its conversion, and at two threads the
 * kernel is bound by those instructions, not by memory (see {@link Q4_KPacked} for the scales);
 * a byte is one widening load, as Q8_0's.
 *
 * <p>The decoded weights are {@link Q5_KFormat}'s bit for bit ({@code ds * q - ms}), {@link #dot} and
 * {@link #dot4Tokens} keep the batch-invariant order (as {@link Q4_KPacked}), and {@link #dotFast}
 * sums as {@link Q4_KPacked#dotFast} does.
 */
final class Q5_KPacked implements RowKernel {

    static final Q5_KPacked INSTANCE = new Q5_KPacked();

    /** Packed bytes per super-block: 256 quants, 8 float scales, 8 float mins. */
    static final int BLOCK_BYTES = QK_K + 16 * 4;

    private static final int SCALES = QK_K;
    private static final int MINS = SCALES + 8 * 4;

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    /** Where the width has more than eight lanes (512 bits), the lanes a super-block's eight mins fill. */
    private static final VectorMask<Float> EIGHT = VectorMask.fromLong(W.floats(), 0xFFL);

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
        byte[] quants = new byte[QK_K];
        for (long b = 0; b < blocks; b++) {
            long in = b * Q5_KFormat.BLOCK_BYTES;
            long out = b * BLOCK_BYTES;
            for (int g = 0; g < 4; g++) {
                for (int l = 0; l < 32; l++) {
                    int q = Bytes.u8(src, in + 48 + 32L * g + l);
                    int h = Bytes.u8(src, in + 16 + l);
                    quants[64 * g + l] = (byte) ((q & 0x0F) | ((h >>> (2 * g)) & 1) << 4);
                    quants[64 * g + 32 + l] = (byte) ((q >>> 4) | ((h >>> (2 * g + 1)) & 1) << 4);
                }
            }
            MemorySegment.copy(quants, 0, dst, ValueLayout.JAVA_BYTE, out, QK_K);
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

    private static FloatVector quants(MemorySegment w, long at) {
        return W.toFloats(W.loadBytes(w, at));
    }

    /** Weights {@code i..i+L} of sub-block {@code s} decoded, as the format: {@code ds * q - ms}, mul then sub. */
    private static FloatVector weights(MemorySegment w, long block, int s, float ds, float ms, int i) {
        return quants(w, block + 32L * s + i).mul(ds).sub(ms);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int s = 0; s < 8; s++) {
                float ds = scale(w, block, s), ms = min(w, block, s);
                int x0 = xOff + b * QK_K + 32 * s;
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, block, s, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
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

    /**
     * {@code sum over sub-blocks s of ds[s] * sum(q * x) - sum of ms[s] * sums[s]}: each
     * sub-block's {@code sum(q * x)} in one chain, scaled once into one of two accumulators (even
     * and odd sub-blocks); the mins against the input's sums eight lanes at a time.
     */
    private static float dotWithSums(MemorySegment w, long offset, float[] x, int xOff, int n, float[] sums) {
        VectorSpecies<Float> f = W.floats();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        FloatVector m = a0;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int x0 = xOff + b * QK_K;
            for (int s = 0; s < 8; s++) {
                long at = block + 32L * s;
                int xs = x0 + 32 * s;
                FloatVector p = quants(w, at).mul(FloatVector.fromArray(f, x, xs));
                for (int i = f.length(); i < 32; i += f.length()) {
                    p = quants(w, at + i).fma(FloatVector.fromArray(f, x, xs + i), p);
                }
                FloatVector t = p.fma(FloatVector.broadcast(f, scale(w, block, s)), a0);
                a0 = a1;
                a1 = t;
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
            for (int s = 0; s < 8; s++) {
                float ds = scale(w, block, s), ms = min(w, block, s);
                int x0 = b * QK_K + 32 * s;
                for (int i = 0; i < 32; i += f.length()) {
                    FloatVector v = weights(w, block, s, ds, ms, i);
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
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int s = 0; s < 8; s++) {
                float ds = scale(w, block, s), ms = min(w, block, s);
                int y = dstOff + b * QK_K + 32 * s;
                for (int i = 0; i < 32; i += l) {
                    weights(w, block, s, ds, ms, i).intoArray(dst, y + i);
                }
            }
        }
    }

    /**
     * {@code m + mins[j] * sums[s0 + j]} lane by lane for {@code j < 8}, the eight float mins of a
     * super-block at {@code at} (several vectors below eight lanes, a masked one above).
     */
    private static FloatVector mins(MemorySegment w, long at, float[] sums, int s0, FloatVector m) {
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
}
