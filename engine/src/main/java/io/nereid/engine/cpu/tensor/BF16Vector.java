package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.VectorKernels.F;
import static io.nereid.engine.cpu.tensor.VectorKernels.I;
import static io.nereid.engine.cpu.tensor.VectorKernels.S;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/** BF16 with the Vector API: widen to int and shift left by 16. {@link BF16Format} is the specification. */
final class BF16Vector implements RowKernel {

    static final BF16Vector INSTANCE = new BF16Vector();

    private BF16Vector() {
    }

    @Override
    public GgmlType type() {
        return GgmlType.BF16;
    }

    /** The {@code L} bf16 values at element {@code i} as floats. */
    static FloatVector load(MemorySegment w, long offset, int i) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, offset + 2L * i, ByteOrder.LITTLE_ENDIAN)
                .castShape(I, 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(); // sign extension shifted out
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        int l = F.length();
        int i = 0;
        // Two accumulators, two loads per step and no one-vector remainder loop: every inlined
        // load adds many nodes, and past C2's NodeCountInliningCutoff the rest stay out of line
        // and box their vectors. The scalar tail takes up to 2L - 1 elements.
        FloatVector a0 = FloatVector.zero(F), a1 = FloatVector.zero(F);
        for (; i <= n - 2 * l; i += 2 * l) {
            a0 = load(w, offset, i).fma(FloatVector.fromArray(F, x, xOff + i), a0);
            a1 = load(w, offset, i + l).fma(FloatVector.fromArray(F, x, xOff + i + l), a1);
        }
        float sum = a0.add(a1).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += BF16Format.toFloat(w.get(Bytes.SHORT, offset + 2L * i)) * x[xOff + i];
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int i = 0;
        for (; i <= n - F.length(); i += F.length()) {
            load(w, offset, i).intoArray(dst, dstOff + i);
        }
        for (; i < n; i++) {
            dst[dstOff + i] = BF16Format.toFloat(w.get(Bytes.SHORT, offset + 2L * i));
        }
    }
}
