package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K repacked once, when its matrix is bound, for the Vector API kernels: per super-block its
 * 256 quants minus 32 as int8 in element order, then its sixteen sub-block scales
 * {@code d * scale} as floats; 320 bytes in place of 210 (1.25 bytes a weight in place of 0.82).
 *
 * <p>Why: Q6_K's own layout takes every weight apart from two bit fields in different places
 * ({@code ql}'s nibble, {@code qh}'s two bits, see {@link Q6_KFormat}), which C2 compiles to about
 * twenty instructions per vector with bounds checks (1.35 G weights/s a thread here, the slowest
 * format, and the output matrix of the Q4_0 and Q4_K_M files people download). Repacked, a vector
 * of weights is one 8-byte load widened to floats, as Q8_0's. The decoded weights are
 * {@link Q6_KFormat}'s bit for bit ({@code (d * scale) * q}), and {@link #dot} /
 * {@link #dot4Tokens} keep the batch-invariant order the original layout's vector kernel had, so
 * repacking changed no result; only {@link #dotFast} sums differently (each sub-block's {@code q * x}, scaled
 * once). The packed copy is off-heap, freed with its matrix; the mapped file's Q6_K pages are no
 * longer read, so the page cache may drop them.
 */
final class Q6_KPacked implements RowKernel {

    static final Q6_KPacked INSTANCE = new Q6_KPacked();

    /** Packed bytes per super-block: 256 int8 quants, then 16 float scales. */
    static final int BLOCK_BYTES = QK_K + 16 * 4;

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
        byte[] quants = new byte[QK_K];
        for (long b = 0; b < blocks; b++) {
            long in = b * Q6_KFormat.BLOCK_BYTES;
            long out = b * BLOCK_BYTES;
            for (int i = 0; i < QK_K; i++) {
                quants[i] = (byte) Q6_KFormat.quant(src, in, i);
            }
            MemorySegment.copy(quants, 0, dst, ValueLayout.JAVA_BYTE, out, QK_K);
            float d = Bytes.f16(src, in + 208);
            for (int s = 0; s < 16; s++) {
                dst.set(Bytes.FLOAT, out + QK_K + 4L * s, d * Bytes.s8(src, in + 192 + s));
            }
        }
    }

    private static FloatVector quants(MemorySegment w, long at) {
        return W.toFloats(W.loadBytes(w, at));
    }

    /** The scale of weight {@code i}'s sub-block. */
    private static float scale(MemorySegment w, long block, int i) {
        return w.get(Bytes.FLOAT, block + QK_K + 4L * (i / 16));
    }

    /** Weights {@code i..i+L} of a block decoded, as the format: {@code q * (d * scale)}. */
    private static FloatVector weights(MemorySegment w, long block, int i) {
        return quants(w, block + i).mul(scale(w, block, i));
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int x0 = xOff + b * QK_K;
            for (int i = 0; i < QK_K; i += f.length()) {
                acc = weights(w, block, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
            }
        }
        return F32Vector.sum(acc);
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
        int l = f.length();
        FloatVector a0 = FloatVector.zero(f), a1 = a0;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int x0 = xOff + b * QK_K;
            for (int g = 0; g < QK_K; g += 16) {
                long at = block + g;
                int xi = x0 + g;
                FloatVector p = quants(w, at).mul(FloatVector.fromArray(f, x, xi));
                if (l < 16) { // constant per JVM: the branches fold
                    p = quants(w, at + l).fma(FloatVector.fromArray(f, x, xi + l), p);
                }
                if (l < 8) {
                    p = quants(w, at + 8).fma(FloatVector.fromArray(f, x, xi + 8), p);
                    p = quants(w, at + 12).fma(FloatVector.fromArray(f, x, xi + 12), p);
                }
                FloatVector t = p.fma(FloatVector.broadcast(f, w.get(Bytes.FLOAT, block + QK_K + g / 4)), a0);
                a0 = a1;
                a1 = t;
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
        for (int b = 0; b < n / QK_K; b++) {
            long block = row + (long) b * BLOCK_BYTES;
            for (int g = 0; g < QK_K; g += 16) {
                long at = block + g;
                int xi = b * QK_K + g;
                FloatVector q = quants(w, at);
                FloatVector p = q.mul(FloatVector.fromArray(f, x, xa + xi));
                FloatVector u = q.mul(FloatVector.fromArray(f, x, xb + xi));
                for (int k = l; k < 16; k += l) { // 16 / L steps, a constant per JVM: unrolled
                    q = quants(w, at + k);
                    p = q.fma(FloatVector.fromArray(f, x, xa + xi + k), p);
                    u = q.fma(FloatVector.fromArray(f, x, xb + xi + k), u);
                }
                FloatVector scale = FloatVector.broadcast(f, w.get(Bytes.FLOAT, block + QK_K + g / 4));
                FloatVector ta = p.fma(scale, a0);
                FloatVector tb = u.fma(scale, b0);
                a0 = a1;
                a1 = ta;
                b0 = b1;
                b1 = tb;
            }
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
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            int e = b * QK_K;
            for (int i = 0; i < QK_K; i += f.length()) {
                FloatVector v = weights(w, block, i);
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
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            for (int i = 0; i < QK_K; i += l) {
                weights(w, block, i).intoArray(dst, dstOff + b * QK_K + i);
            }
        }
    }
}
