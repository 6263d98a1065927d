package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q5_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.LaneSums;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q5_K with the Vector API: Q4_KVector's loop with each nibble given its fifth bit from
 * {@code qh} (bit {@code 2g} for the low nibbles of group {@code g}, {@code 2g + 1} for the high).
 * {@link Q5_KFormat} is the specification.
 */
final class Q5_KVector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.Q5_K;
    }

    /** Computed repacked ({@link Q5_KPacked}): the same bits, and a faster {@code dotFast}. */
    @Override
    public Bound bind(MemorySegment data, long blocks) {
        return new Bound(Q5_KPacked.INSTANCE, Q5_KPacked.pack(data, blocks), Q5_KPacked.BLOCK_BYTES);
    }

    /**
     * Elements {@code i..i+L} of sub-block {@code s} decoded, as {@link #dequantize} writes them:
     * {@code ds * q - ms} with {@code q = nibble | ((qh >>> s) & 1) << 4}, mul then sub.
     */
    private static FloatVector weights(MemorySegment w, long block, int s, float ds, float ms, int i) {
        IntVector nibble = W.loadInts(w, block + 48 + 32L * (s >> 1) + i).lanewise(VectorOperators.LSHR, 4 * (s & 1))
                .and(0x0F);
        IntVector high = W.loadInts(w, block + 16 + i).lanewise(VectorOperators.LSHR, s).and(1)
                .lanewise(VectorOperators.LSHL, 4);
        return ((FloatVector) nibble.or(high).convert(VectorOperators.I2F, 0)).mul(ds).sub(ms);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            // the block's scales read once, as words (a bounds-checked read per sub-block cost ~1.5x)
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            long lo = w.get(Bytes.LONG, block + 4);
            int hi = w.get(Bytes.INT, block + 12);
            for (int s = 0; s < 8; s++) {
                float ds = d * KScales.scale(lo, hi, s), ms = dmin * KScales.min(lo, hi, s);
                int x0 = xOff + b * QK_K + 32 * s;
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, block, s, ds, ms, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
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
            // the block's scales read once, as words (a bounds-checked read per sub-block cost ~1.5x)
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            long lo = w.get(Bytes.LONG, block + 4);
            int hi = w.get(Bytes.INT, block + 12);
            for (int s = 0; s < 8; s++) {
                float ds = d * KScales.scale(lo, hi, s), ms = dmin * KScales.min(lo, hi, s);
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
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            long lo = w.get(Bytes.LONG, block + 4);
            int hi = w.get(Bytes.INT, block + 12);
            for (int s = 0; s < 8; s++) {
                float ds = d * KScales.scale(lo, hi, s), ms = dmin * KScales.min(lo, hi, s);
                int y = dstOff + b * QK_K + 32 * s;
                for (int i = 0; i < 32; i += l) {
                    weights(w, block, s, ds, ms, i).intoArray(dst, y + i);
                }
            }
        }
    }
}
