package io.nereid.engine.tensor;

import static io.nereid.engine.tensor.KScales.QK_K;
import static io.nereid.engine.tensor.Q6_KFormat.BLOCK_BYTES;
import static io.nereid.engine.tensor.VectorKernels.B;
import static io.nereid.engine.tensor.VectorKernels.F;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K with the Vector API. Each step loads {@code L} bytes of {@code ql[l]}, {@code ql[l + 32]}
 * and {@code qh[l]} and yields the four quants at {@code l}, {@code l + 32}, {@code l + 64},
 * {@code l + 96} of a half super-block; {@code L <= 16} keeps a step inside one 16-weight
 * sub-block, so one scale applies to it. {@link Q6_KFormat} is the specification.
 */
final class Q6_KVector implements RowKernel {

    static final Q6_KVector INSTANCE = new Q6_KVector();

    private Q6_KVector() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    private static ByteVector bytes(MemorySegment w, long at) {
        return ByteVector.fromMemorySegment(B, w, at, ByteOrder.LITTLE_ENDIAN);
    }

    /** {@code (low4 | ((qh >>> shift) & 3) << 4) - 32} as floats, -32..31. */
    private static FloatVector quant(ByteVector low4, ByteVector qh, int shift) {
        ByteVector high = qh.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
        return VectorKernels.toFloats(low4.or(high).sub((byte) 32));
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        // one accumulator per quarter: four independent FMA chains
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F);
        FloatVector a2 = FloatVector.zero(F), a3 = FloatVector.zero(F);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int h = 0; h < 2; h++) {
                long ql = block + 64L * h;
                long qh = block + 128 + 32L * h;
                long sc = block + 192 + 8L * h;
                int xh = xOff + b * QK_K + 128 * h;
                for (int k = 0; k < 32; k += F.length()) {
                    ByteVector lowA = bytes(w, ql + k);
                    ByteVector lowB = bytes(w, ql + 32 + k);
                    ByteVector high = bytes(w, qh + k);
                    int is = k / 16;
                    FloatVector q0 = quant(lowA.and((byte) 0x0F), high, 0);
                    FloatVector q1 = quant(lowB.and((byte) 0x0F), high, 2);
                    FloatVector q2 = quant(lowA.lanewise(VectorOperators.LSHR, 4), high, 4);
                    FloatVector q3 = quant(lowB.lanewise(VectorOperators.LSHR, 4), high, 6);
                    a0 = VectorKernels.fma(q0.mul(FloatVector.fromArray(F, x, xh + k)), d * Bytes.s8(w, sc + is), a0);
                    a1 = VectorKernels.fma(q1.mul(FloatVector.fromArray(F, x, xh + 32 + k)), d * Bytes.s8(w, sc + is + 2), a1);
                    a2 = VectorKernels.fma(q2.mul(FloatVector.fromArray(F, x, xh + 64 + k)), d * Bytes.s8(w, sc + is + 4), a2);
                    a3 = VectorKernels.fma(q3.mul(FloatVector.fromArray(F, x, xh + 96 + k)), d * Bytes.s8(w, sc + is + 6), a3);
                }
            }
        }
        return a0.add(a1).add(a2.add(a3)).reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int h = 0; h < 2; h++) {
                long ql = block + 64L * h;
                long qh = block + 128 + 32L * h;
                long sc = block + 192 + 8L * h;
                int y = dstOff + b * QK_K + 128 * h;
                for (int k = 0; k < 32; k += F.length()) {
                    ByteVector lowA = bytes(w, ql + k);
                    ByteVector lowB = bytes(w, ql + 32 + k);
                    ByteVector high = bytes(w, qh + k);
                    int is = k / 16;
                    // (d * scale) * q: the scalar's order, so the results are identical
                    quant(lowA.and((byte) 0x0F), high, 0).mul(d * Bytes.s8(w, sc + is)).intoArray(dst, y + k);
                    quant(lowB.and((byte) 0x0F), high, 2).mul(d * Bytes.s8(w, sc + is + 2)).intoArray(dst, y + 32 + k);
                    quant(lowA.lanewise(VectorOperators.LSHR, 4), high, 4).mul(d * Bytes.s8(w, sc + is + 4))
                            .intoArray(dst, y + 64 + k);
                    quant(lowB.lanewise(VectorOperators.LSHR, 4), high, 6).mul(d * Bytes.s8(w, sc + is + 6))
                            .intoArray(dst, y + 96 + k);
                }
            }
        }
    }
}
