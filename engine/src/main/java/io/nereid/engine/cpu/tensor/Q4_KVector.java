package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q4_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K with the Vector API: sub-block {@code s} of 32 weights is the low ({@code s} even) or high
 * nibbles of 32 bytes of quants, decoded as {@code d * scale * q - dmin * min}. {@link Q4_KFormat}
 * is the specification.
 */
final class Q4_KVector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.Q4_K;
    }

    /** Computed repacked ({@link Q4_KPacked}): the same bits, and a faster {@code dotFast}. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        return new Bound(Q4_KPacked.INSTANCE, Q4_KPacked.pack(data, blocks), Q4_KPacked.BLOCK_BYTES);
    }

    /**
     * Elements {@code i..i+L} of the group of 64 at {@code qs} decoded, as {@link #dequantize}
     * writes them: the low nibbles ({@code shift} 0, the group's first sub-block) or the high ones
     * ({@code shift} 4), {@code ds * q - ms}, mul then sub (not an FMA: the scalar's two roundings).
     * Callers pass {@code shift} as a constant, which keeps the shift an immediate.
     */
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
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            long lo = w.get(Bytes.LONG, block + 4);
            int hi = w.get(Bytes.INT, block + 12);
            for (int g = 0; g < 4; g++) {
                long qs = block + 16 + 32L * g;
                int x0 = xOff + b * QK_K + 64 * g;
                float ds = d * KScales.scale(lo, hi, 2 * g), ms = dmin * KScales.min(lo, hi, 2 * g);
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, qs, 0, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
                }
                ds = d * KScales.scale(lo, hi, 2 * g + 1);
                ms = dmin * KScales.min(lo, hi, 2 * g + 1);
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, qs, 4, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + 32 + i), acc);
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
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            long lo = w.get(Bytes.LONG, block + 4);
            int hi = w.get(Bytes.INT, block + 12);
            for (int g = 0; g < 4; g++) {
                long qs = block + 16 + 32L * g;
                int x0 = b * QK_K + 64 * g;
                float ds = d * KScales.scale(lo, hi, 2 * g), ms = dmin * KScales.min(lo, hi, 2 * g);
                for (int i = 0; i < 32; i += f.length()) {
                    FloatVector v = weights(w, qs, 0, ds, ms, i);
                    a0 = v.fma(FloatVector.fromArray(f, x, xOff + x0 + i), a0);
                    a1 = v.fma(FloatVector.fromArray(f, x, x1 + x0 + i), a1);
                    a2 = v.fma(FloatVector.fromArray(f, x, x2 + x0 + i), a2);
                    a3 = v.fma(FloatVector.fromArray(f, x, x3 + x0 + i), a3);
                }
                ds = d * KScales.scale(lo, hi, 2 * g + 1);
                ms = dmin * KScales.min(lo, hi, 2 * g + 1);
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
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            long lo = w.get(Bytes.LONG, block + 4);
            int hi = w.get(Bytes.INT, block + 12);
            for (int g = 0; g < 4; g++) {
                long qs = block + 16 + 32L * g;
                int y = dstOff + b * QK_K + 64 * g;
                float ds0 = d * KScales.scale(lo, hi, 2 * g), ms0 = dmin * KScales.min(lo, hi, 2 * g);
                float ds1 = d * KScales.scale(lo, hi, 2 * g + 1), ms1 = dmin * KScales.min(lo, hi, 2 * g + 1);
                for (int i = 0; i < 32; i += l) {
                    weights(w, qs, 0, ds0, ms0, i).intoArray(dst, y + i);
                    weights(w, qs, 4, ds1, ms1, i).intoArray(dst, y + 32 + i);
                }
            }
        }
    }
}
