package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q6_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K with the Vector API. A super-block is eight runs of 32 weights (two halves of four
 * quarters); each step decodes {@code L} weights of a run from {@code L} bytes of {@code ql} (one
 * nibble) and of {@code qh} (two bits). {@code L <= 16} keeps a step inside one 16-weight
 * sub-block, so one scale applies to it. {@link Q6_KFormat} is the specification.
 */
final class Q6_KVector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    /** Computed repacked ({@link Q6_KPacked}): the same bits, three to four times faster. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        return new Bound(Q6_KPacked.INSTANCE, Q6_KPacked.pack(data, blocks), Q6_KPacked.BLOCK_BYTES);
    }

    /**
     * Elements {@code i..i+L} of quarter {@code j} of a half (128 weights) decoded, as
     * {@link #dequantize} writes them: {@code (d * scale) * q} with
     * {@code q = (low4 | ((qh >>> 2j) & 3) << 4) - 32}, the scalar's order. {@code ql} and
     * {@code qh} are the half's offsets, {@code scales} its eight scale bytes (little-endian): read
     * once per half, as a byte load per step slowed the kernel by 1.7 times.
     */
    private static FloatVector weights(MemorySegment w, long ql, long qh, long scales, float d, int j, int i) {
        IntVector low4 = W.loadInts(w, ql + 32 * (j & 1) + i).lanewise(VectorOperators.LSHR, 4 * (j >> 1)).and(0x0F);
        IntVector high = W.loadInts(w, qh + i).lanewise(VectorOperators.LSHR, 2 * j).and(3)
                .lanewise(VectorOperators.LSHL, 4);
        float scale = d * (byte) (scales >>> 8 * (2 * j + i / 16));
        return ((FloatVector) low4.or(high).sub(32).convert(VectorOperators.I2F, 0)).mul(scale);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            // one quarter of 32 weights per iteration, its shifts variables: a body that decodes
            // all four quarters at once, with constant shifts, is too many nodes for C2 to inline
            // whole, and an op left out of line boxes its vectors (measured 2.4 times slower)
            for (int h = 0; h < 2; h++) {
                long ql = block + 64L * h, qh = block + 128 + 32L * h, sc = w.get(Bytes.LONG, block + 192 + 8L * h);
                for (int j = 0; j < 4; j++) {
                    int x0 = xOff + b * QK_K + 128 * h + 32 * j;
                    for (int i = 0; i < 32; i += f.length()) {
                        acc = weights(w, ql, qh, sc, d, j, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
                    }
                }
            }
        }
        return F32Vector.sum(acc);
    }

    @Override
    public void dot4Tokens(MemorySegment w, long offset, float[] x, int xOff, int xStride, int n, float[] out,
            int outOff) {
        VectorSpecies<Float> f = W.floats();
        int x1 = xOff + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
        FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int h = 0; h < 2; h++) {
                long ql = block + 64L * h, qh = block + 128 + 32L * h, sc = w.get(Bytes.LONG, block + 192 + 8L * h);
                for (int j = 0; j < 4; j++) {
                    int x0 = b * QK_K + 128 * h + 32 * j;
                    for (int i = 0; i < 32; i += f.length()) {
                        FloatVector v = weights(w, ql, qh, sc, d, j, i);
                        a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + i), a0);
                        a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + i), a1);
                        a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + i), a2);
                        a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + i), a3);
                    }
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
            float d = Bytes.f16(w, block + 208);
            for (int h = 0; h < 2; h++) {
                long ql = block + 64L * h, qh = block + 128 + 32L * h, sc = w.get(Bytes.LONG, block + 192 + 8L * h);
                for (int j = 0; j < 4; j++) {
                    int y = dstOff + b * QK_K + 128 * h + 32 * j;
                    for (int i = 0; i < 32; i += l) {
                        weights(w, ql, qh, sc, d, j, i).intoArray(dst, y + i);
                    }
                }
            }
        }
    }
}
