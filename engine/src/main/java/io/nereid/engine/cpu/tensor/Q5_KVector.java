package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q5_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q5_K with the Vector API: Q4_KVector's loop with each nibble given its fifth bit from
 * {@code qh} (bit {@code 2g} for the low nibbles of group {@code g}, {@code 2g + 1} for the high).
 * {@link Q5_KFormat} is the specification.
 */
final class Q5_KVector implements RowKernel {

    private final VectorWidth width;

    Q5_KVector(VectorWidth width) {
        this.width = width;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q5_K;
    }

    private ByteVector bytes(MemorySegment w, long at) {
        return width.loadBytes(w, at);
    }

    /** {@code nibble | ((qh >>> bit) & 1) << 4}: a 5-bit quant, 0..31. */
    private FloatVector quant(ByteVector nibble, ByteVector qh, int bit) {
        ByteVector high = qh.lanewise(VectorOperators.LSHR, bit).and((byte) 1).lanewise(VectorOperators.LSHL, 4);
        return width.toFloats(nibble.or(high));
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = width.floats();
        // One sub-block of 32 weights per iteration, not a group of 64 as in Q4_KVector: a body
        // that decodes both nibbles is too many nodes for C2 to inline completely
        // (NodeCountInliningCutoff), and an op left out of line boxes its vectors.
        FloatVector accQ = FloatVector.zero(f), accM = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            float dmin = Bytes.f16(w, block + 2);
            for (int s = 0; s < 8; s++) {
                long qs = block + 48 + 32L * (s / 2);
                int nibbleShift = 4 * (s & 1); // even sub-blocks are the low nibbles
                int x0 = xOff + b * QK_K + 32 * s;
                FloatVector qx = FloatVector.zero(f), xs = FloatVector.zero(f);
                for (int k = 0; k < 32; k += f.length()) {
                    ByteVector nibble = bytes(w, qs + k).lanewise(VectorOperators.LSHR, nibbleShift).and((byte) 0x0F);
                    FloatVector xv = FloatVector.fromArray(f, x, x0 + k);
                    qx = quant(nibble, bytes(w, block + 16 + k), s).fma(xv, qx); // qh bit s
                    xs = xs.add(xv);
                }
                accQ = VectorRowKernels.fma(qx, d * KScales.scale(w, block + 4, s), accQ);
                accM = VectorRowKernels.fma(xs, dmin * KScales.min(w, block + 4, s), accM);
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
            for (int s = 0; s < 8; s++) { // one sub-block per iteration, as in dot
                float ds = d * KScales.scale(w, block + 4, s);
                float ms = dmin * KScales.min(w, block + 4, s);
                long qs = block + 48 + 32L * (s / 2);
                int nibbleShift = 4 * (s & 1);
                int y = dstOff + b * QK_K + 32 * s;
                for (int k = 0; k < 32; k += l) {
                    ByteVector nibble = bytes(w, qs + k).lanewise(VectorOperators.LSHR, nibbleShift).and((byte) 0x0F);
                    // mul then sub, not fma: the same two roundings as the scalar d1 * q - m1
                    quant(nibble, bytes(w, block + 16 + k), s).mul(ds).sub(ms).intoArray(dst, y + k);
                }
            }
        }
    }
}
