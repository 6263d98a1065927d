package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;
import static io.nereid.engine.cpu.tensor.Q6_KFormat.BLOCK_BYTES;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K with the Vector API. A super-block is eight runs of 32 weights (two halves of four
 * quarters); each step decodes {@code L} weights of a run from {@code L} bytes of {@code ql} (one
 * nibble) and of {@code qh} (two bits). {@code L <= 16} keeps a step inside one 16-weight
 * sub-block, so one scale applies to it. {@link Q6_KFormat} is the specification.
 */
final class Q6_KVector implements RowKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    /**
     * Elements {@code i..i+L} of run {@code u} (half {@code u / 4}, quarter {@code u % 4}) decoded,
     * as {@link #dequantize} writes them: {@code (d * scale) * q} with
     * {@code q = (low4 | ((qh >>> 2j) & 3) << 4) - 32}, the scalar's order.
     */
    private static FloatVector weights(MemorySegment w, long block, float d, int u, int i) {
        int h = u >> 2;
        int j = u & 3;
        IntVector low4 = W.loadInts(w, block + 64L * h + 32 * (j & 1) + i).lanewise(VectorOperators.LSHR, 4 * (j >> 1))
                .and(0x0F);
        IntVector high = W.loadInts(w, block + 128 + 32L * h + i).lanewise(VectorOperators.LSHR, 2 * j).and(3)
                .lanewise(VectorOperators.LSHL, 4);
        float scale = d * Bytes.s8(w, block + 192 + 8L * h + 2 * j + i / 16);
        return ((FloatVector) low4.or(high).sub(32).convert(VectorOperators.I2F, 0)).mul(scale);
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        FloatVector acc = FloatVector.zero(f);
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            // one run of 32 weights per iteration: a body that decodes all four quarters at once is
            // too many nodes for C2 to inline whole, and an op left out of line boxes its vectors
            for (int u = 0; u < 8; u++) {
                int x0 = xOff + b * QK_K + 128 * (u >> 2) + 32 * (u & 3);
                for (int i = 0; i < 32; i += f.length()) {
                    acc = weights(w, block, d, u, i).fma(FloatVector.fromArray(f, x, x0 + i), acc);
                }
            }
        }
        return F32Vector.sum(acc);
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = W.floats().length();
        for (int b = 0; b < n / QK_K; b++) {
            long block = offset + (long) b * BLOCK_BYTES;
            float d = Bytes.f16(w, block + 208);
            for (int u = 0; u < 8; u++) {
                int y = dstOff + b * QK_K + 128 * (u >> 2) + 32 * (u & 3);
                for (int i = 0; i < 32; i += l) {
                    weights(w, block, d, u, i).intoArray(dst, y + i);
                }
            }
        }
    }
}
