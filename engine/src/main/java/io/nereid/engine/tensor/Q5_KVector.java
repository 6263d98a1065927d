package io.nereid.engine.tensor;

import static io.nereid.engine.tensor.KScales.QK_K;
import static io.nereid.engine.tensor.Q5_KFormat.BLOCK_BYTES;
import static io.nereid.engine.tensor.VectorKernels.B;
import static io.nereid.engine.tensor.VectorKernels.F;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q5_K with the Vector API: Q4_KVector's loop with each nibble given its fifth bit from
 * {@code qh} (bit {@code 2g} for the low nibbles of group {@code g}, {@code 2g + 1} for the high).
 * {@link Q5_KFormat} is the specification.
 */
final class Q5_KVector implements RowKernel {

    static final Q5_KVector INSTANCE = new Q5_KVector();

    private Q5_KVector() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q5_K;
    }

    private static ByteVector bytes(MemorySegment w, long at) {
        return ByteVector.fromMemorySegment(B, w, at, ByteOrder.LITTLE_ENDIAN);
    }

    /** {@code nibble | ((qh >>> bit) & 1) << 4}: a 5-bit quant, 0..31. */
    private static FloatVector quant(ByteVector nibble, ByteVector qh, int bit) {
        ByteVector high = qh.lanewise(VectorOperators.LSHR, bit).and((byte) 1).lanewise(VectorOperators.LSHL, 4);
        return VectorKernels.toFloats(nibble.or(high));
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        FloatVector accQ = FloatVector.zero(F), accM = FloatVector.zero(F); // as in Q4_KVector
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                long qs = block + 48 + 32L * g;
                int xLo = xOff + b * QK_K + 64 * g;
                FloatVector qxLo = FloatVector.zero(F), xsLo = FloatVector.zero(F);
                FloatVector qxHi = FloatVector.zero(F), xsHi = FloatVector.zero(F);
                for (int k = 0; k < 32; k += F.length()) {
                    ByteVector q = bytes(w, qs + k);
                    ByteVector qh = bytes(w, block + 16 + k);
                    FloatVector lo = FloatVector.fromArray(F, x, xLo + k);
                    FloatVector hi = FloatVector.fromArray(F, x, xLo + 32 + k);
                    qxLo = quant(q.and((byte) 0x0F), qh, 2 * g).fma(lo, qxLo);
                    xsLo = xsLo.add(lo);
                    qxHi = quant(q.lanewise(VectorOperators.LSHR, 4), qh, 2 * g + 1).fma(hi, qxHi);
                    xsHi = xsHi.add(hi);
                }
                accQ = VectorKernels.fma(qxLo, d * KScales.scale(w, block + 4, 2 * g), accQ);
                accQ = VectorKernels.fma(qxHi, d * KScales.scale(w, block + 4, 2 * g + 1), accQ);
                accM = VectorKernels.fma(xsLo, dmin * KScales.min(w, block + 4, 2 * g), accM);
                accM = VectorKernels.fma(xsHi, dmin * KScales.min(w, block + 4, 2 * g + 1), accM);
            }
        }
        return accQ.sub(accM).reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int g = 0; g < 4; g++) {
                float d1 = d * KScales.scale(w, block + 4, 2 * g);
                float m1 = dmin * KScales.min(w, block + 4, 2 * g);
                float d2 = d * KScales.scale(w, block + 4, 2 * g + 1);
                float m2 = dmin * KScales.min(w, block + 4, 2 * g + 1);
                long qs = block + 48 + 32L * g;
                int y = dstOff + b * QK_K + 64 * g;
                for (int k = 0; k < 32; k += F.length()) {
                    ByteVector q = bytes(w, qs + k);
                    ByteVector qh = bytes(w, block + 16 + k);
                    // mul then sub, not fma: the same two roundings as the scalar d1 * q - m1
                    quant(q.and((byte) 0x0F), qh, 2 * g).mul(d1).sub(m1).intoArray(dst, y + k);
                    quant(q.lanewise(VectorOperators.LSHR, 4), qh, 2 * g + 1).mul(d2).sub(m2).intoArray(dst, y + 32 + k);
                }
            }
        }
    }
}
