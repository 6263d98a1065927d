package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.Q4_0Format.BLOCK;
import static io.nereid.engine.cpu.tensor.Q4_0Format.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 with the Vector API: each step loads {@code L} packed bytes and yields two vectors, the
 * low nibbles (elements {@code k..k+L-1}) and the high nibbles ({@code k+16..k+16+L-1}).
 * {@link Q4_0Format} is the specification.
 */
final class Q4_0Vector implements RowKernel {

    private final VectorWidth width;

    Q4_0Vector(VectorWidth width) {
        this.width = width;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q4_0;
    }

    private ByteVector packed(MemorySegment w, long block, int k) {
        return width.loadBytes(w, block + 2 + k);
    }

    private FloatVector low(ByteVector q) {
        return width.toFloats(q.and((byte) 0x0F).sub((byte) 8));
    }

    private FloatVector high(ByteVector q) {
        return width.toFloats(q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8));
    }

    /** {@code acc + d * (q · x)} for one block. */
    private FloatVector blockDot(MemorySegment w, long block, float[] x, int xb, FloatVector acc) {
        VectorSpecies<Float> f = width.floats();
        FloatVector lo = FloatVector.zero(f), hi = FloatVector.zero(f);
        for (int k = 0; k < BLOCK / 2; k += f.length()) {
            ByteVector q = packed(w, block, k);
            lo = low(q).fma(FloatVector.fromArray(f, x, xb + k), lo);
            hi = high(q).fma(FloatVector.fromArray(f, x, xb + 16 + k), hi);
        }
        return VectorRowKernels.fma(lo.add(hi), Bytes.f16(w, block), acc);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = width.floats();
        int blocks = n / BLOCK;
        // Two accumulators on alternate blocks halve the chain of per-block FMAs.
        FloatVector acc0 = FloatVector.zero(f), acc1 = FloatVector.zero(f);
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
        int l = width.floats().length();
        for (int b = 0; b < n / BLOCK; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block);
            int y = dstOff + b * BLOCK;
            for (int k = 0; k < BLOCK / 2; k += l) {
                ByteVector q = packed(w, block, k);
                low(q).mul(d).intoArray(dst, y + k);
                high(q).mul(d).intoArray(dst, y + 16 + k);
            }
        }
    }
}
