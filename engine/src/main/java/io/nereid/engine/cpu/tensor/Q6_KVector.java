package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q6_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K with the Vector API. A super-block is eight runs of 32 weights (two halves of four
 * quarters); each step decodes {@code L} weights of a run from {@code L} bytes of {@code ql} (one
 * nibble) and of {@code qh} (two bits). {@code L <= 16} keeps a step inside one 16-weight
 * sub-block, so one scale applies to it. {@link Q6_KFormat} is the specification.
 */
final class Q6_KVector implements RowKernel {

    private final VectorWidth width;

    Q6_KVector(VectorWidth width) {
        this.width = width;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    private ByteVector bytes(MemorySegment w, long at) {
        return width.loadBytes(w, at);
    }

    /** {@code (low4 | ((qh >>> shift) & 3) << 4) - 32} as floats, -32..31. */
    private FloatVector quant(ByteVector low4, ByteVector qh, int shift) {
        ByteVector high = qh.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
        return width.toFloats(low4.or(high).sub((byte) 32));
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = width.floats();
        // One run of 32 weights per iteration rather than the four quarters at once: a body
        // that decodes all four is too many nodes for C2 to inline completely
        // (NodeCountInliningCutoff), and an op left out of line boxes its vectors.
        FloatVector acc = FloatVector.zero(f);
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
                for (int k = 0; k < 32; k += f.length()) {
                    ByteVector low4 = bytes(w, ql + k).lanewise(VectorOperators.LSHR, lowShift).and((byte) 0x0F);
                    FloatVector q = quant(low4, bytes(w, qh + k), 2 * j);
                    FloatVector qx = q.mul(FloatVector.fromArray(f, x, x0 + k));
                    acc = VectorRowKernels.fma(qx, d * Bytes.s8(w, sc + k / 16), acc);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = width.floats().length();
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
                for (int k = 0; k < 32; k += l) {
                    ByteVector low4 = bytes(w, ql + k).lanewise(VectorOperators.LSHR, lowShift).and((byte) 0x0F);
                    // (d * scale) * q: the scalar's order, so the results are identical
                    quant(low4, bytes(w, qh + k), 2 * j).mul(d * Bytes.s8(w, sc + k / 16)).intoArray(dst, y + k);
                }
            }
        }
    }
}
