package io.nereid.engine.tensor;

import static io.nereid.engine.tensor.Q8_0Format.BLOCK;
import static io.nereid.engine.tensor.Q8_0Format.BLOCK_BYTES;
import static io.nereid.engine.tensor.VectorKernels.B;
import static io.nereid.engine.tensor.VectorKernels.F;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/** Q8_0 with the Vector API: {@code L} int8 quants widened to floats per step. {@link Q8_0Format} is the specification. */
final class Q8_0Vector implements RowKernel {

    static final Q8_0Vector INSTANCE = new Q8_0Vector();

    private Q8_0Vector() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q8_0;
    }

    private static FloatVector quants(MemorySegment w, long block, int k) {
        return VectorKernels.toFloats(ByteVector.fromMemorySegment(B, w, block + 2 + k, ByteOrder.LITTLE_ENDIAN));
    }

    /** {@code acc + d * (q · x)} for one block. */
    private static FloatVector blockDot(MemorySegment w, long block, float[] x, int xb, FloatVector acc) {
        FloatVector s = FloatVector.zero(F);
        for (int k = 0; k < BLOCK; k += F.length()) {
            s = quants(w, block, k).fma(FloatVector.fromArray(F, x, xb + k), s);
        }
        return VectorKernels.fma(s, Bytes.f16(w, block), acc);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        int blocks = n / BLOCK;
        // Two accumulators on alternate blocks halve the chain of per-block FMAs.
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int b = 0;
        for (; b + 1 < blocks; b += 2) {
            acc0 = blockDot(w, offset + (long) b * BLOCK_BYTES, x, xOff + b * BLOCK, acc0);
            acc1 = blockDot(w, offset + (long) (b + 1) * BLOCK_BYTES, x, xOff + (b + 1) * BLOCK, acc1);
        }
        if (b < blocks) {
            acc0 = blockDot(w, offset + (long) b * BLOCK_BYTES, x, xOff + b * BLOCK, acc0);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            for (int k = 0; k < BLOCK; k += F.length()) {
                quants(w, block, k).mul(d).intoArray(dst, dstOff + b * BLOCK + k);
            }
        }
    }
}
