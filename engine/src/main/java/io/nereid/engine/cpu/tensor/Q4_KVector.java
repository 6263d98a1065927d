package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q4_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K with the Vector API. Per group of 64 weights (two sub-blocks sharing 32 bytes of quants)
 * it accumulates {@code q · x} and {@code sum(x)} per sub-block and applies
 * {@code d * scale} and {@code dmin * min} once per sub-block. {@link Q4_KFormat} is the
 * specification.
 */
final class Q4_KVector implements RowKernel {

    private final VectorWidth width;

    Q4_KVector(VectorWidth width) {
        this.width = width;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q4_K;
    }

    private ByteVector packed(MemorySegment w, long qs, int k) {
        return width.loadBytes(w, qs + k);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = width.floats();
        // Separate accumulators for the scaled quants and the mins: two chains, and no
        // cancellation between them until the end.
        FloatVector accQ = FloatVector.zero(f), accM = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                long qs = block + 16 + 32L * g;
                int xLo = xOff + b * QK_K + 64 * g;
                FloatVector qxLo = FloatVector.zero(f), xsLo = FloatVector.zero(f);
                FloatVector qxHi = FloatVector.zero(f), xsHi = FloatVector.zero(f);
                for (int k = 0; k < 32; k += f.length()) {
                    ByteVector q = packed(w, qs, k);
                    FloatVector lo = FloatVector.fromArray(f, x, xLo + k);
                    FloatVector hi = FloatVector.fromArray(f, x, xLo + 32 + k);
                    qxLo = width.toFloats(q.and((byte) 0x0F)).fma(lo, qxLo);
                    xsLo = xsLo.add(lo);
                    qxHi = width.toFloats(q.lanewise(VectorOperators.LSHR, 4)).fma(hi, qxHi);
                    xsHi = xsHi.add(hi);
                }
                accQ = VectorRowKernels.fma(qxLo, d * KScales.scale(w, block + 4, 2 * g), accQ);
                accQ = VectorRowKernels.fma(qxHi, d * KScales.scale(w, block + 4, 2 * g + 1), accQ);
                accM = VectorRowKernels.fma(xsLo, dmin * KScales.min(w, block + 4, 2 * g), accM);
                accM = VectorRowKernels.fma(xsHi, dmin * KScales.min(w, block + 4, 2 * g + 1), accM);
            }
        }
        return accQ.sub(accM).reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = width.floats().length();
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                float d1 = d * KScales.scale(w, block + 4, 2 * g);
                float m1 = dmin * KScales.min(w, block + 4, 2 * g);
                float d2 = d * KScales.scale(w, block + 4, 2 * g + 1);
                float m2 = dmin * KScales.min(w, block + 4, 2 * g + 1);
                long qs = block + 16 + 32L * g;
                int y = dstOff + b * QK_K + 64 * g;
                for (int k = 0; k < 32; k += l) {
                    ByteVector q = packed(w, qs, k);
                    // mul then sub, not fma: the same two roundings as the scalar d1 * q - m1
                    width.toFloats(q.and((byte) 0x0F)).mul(d1).sub(m1).intoArray(dst, y + k);
                    width.toFloats(q.lanewise(VectorOperators.LSHR, 4)).mul(d2).sub(m2).intoArray(dst, y + 32 + k);
                }
            }
        }
    }
}
