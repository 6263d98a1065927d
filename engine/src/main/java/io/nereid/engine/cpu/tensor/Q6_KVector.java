package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q6_KFormat.BLOCK_BYTES;
import static io.nereid.engine.cpu.tensor.VectorKernels.B;
import static io.nereid.engine.cpu.tensor.VectorKernels.F;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K with the Vector API. A super-block is eight runs of 32 weights (two halves of four
 * quarters); each step decodes {@code L} weights of a run from {@code L} bytes of {@code ql} (one
 * nibble) and of {@code qh} (two bits). {@code L <= 16} keeps a step inside one 16-weight
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
        // One run of 32 weights per iteration rather than the four quarters at once: a body
        // that decodes all four is too many nodes for C2 to inline completely
        // (NodeCountInliningCutoff), and an op left out of line boxes its vectors.
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int u = 0; u < 8; u++) { // run u: half h = u / 4, quarter j = u % 4
                int h = u >> 2;
                int j = u & 3;
                long ql = block + 64L * h + 32 * (j & 1);
                long qh = block + 128 + 32L * h;
                long sc = block + 192 + 8L * h + 2 * j;
                int lowShift = 4 * (j >> 1);
                int x0 = xOff + b * QK_K + 128 * h + 32 * j;
                for (int k = 0; k < 32; k += F.length()) {
                    ByteVector low4 = bytes(w, ql + k).lanewise(VectorOperators.LSHR, lowShift).and((byte) 0x0F);
                    FloatVector q = quant(low4, bytes(w, qh + k), 2 * j);
                    acc = VectorKernels.fma(q.mul(FloatVector.fromArray(F, x, x0 + k)), d * Bytes.s8(w, sc + k / 16), acc);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int u = 0; u < 8; u++) { // one run of 32 weights per iteration, as in dot
                int h = u >> 2;
                int j = u & 3;
                long ql = block + 64L * h + 32 * (j & 1);
                long qh = block + 128 + 32L * h;
                long sc = block + 192 + 8L * h + 2 * j;
                int lowShift = 4 * (j >> 1);
                int y = dstOff + b * QK_K + 128 * h + 32 * j;
                for (int k = 0; k < 32; k += F.length()) {
                    ByteVector low4 = bytes(w, ql + k).lanewise(VectorOperators.LSHR, lowShift).and((byte) 0x0F);
                    // (d * scale) * q: the scalar's order, so the results are identical
                    quant(low4, bytes(w, qh + k), 2 * j).mul(d * Bytes.s8(w, sc + k / 16)).intoArray(dst, y + k);
                }
            }
        }
    }
}
