package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** BF16 with the Vector API: widen to int and shift left by 16. {@link BF16Format} is the specification. */
final class BF16Vector implements RowKernel {

    private final VectorWidth width;

    BF16Vector(VectorWidth width) {
        this.width = width;
    }

    @Override
    public GgmlType type() {
        return GgmlType.BF16;
    }

    /** The {@code L} bf16 values at element {@code i} as floats. */
    private FloatVector load(MemorySegment w, long offset, int i) {
        ShortVector halves = ShortVector.fromMemorySegment(width.shorts(), w, offset + 2L * i, ByteOrder.LITTLE_ENDIAN);
        IntVector h = (IntVector) halves.castShape(width.ints(), 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(); // sign extension shifted out
    }

    @Override
    public float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = width.floats();
        int l = f.length();
        int i = 0;
        // Two accumulators, two loads per step and no one-vector remainder loop: every inlined
        // load adds many nodes, and past C2's NodeCountInliningCutoff the rest stay out of line
        // and box their vectors. The scalar tail takes up to 2L - 1 elements.
        FloatVector a0 = FloatVector.zero(f), a1 = FloatVector.zero(f);
        for (; i <= n - 2 * l; i += 2 * l) {
            a0 = load(w, offset, i).fma(FloatVector.fromArray(f, x, xOff + i), a0);
            a1 = load(w, offset, i + l).fma(FloatVector.fromArray(f, x, xOff + i + l), a1);
        }
        float sum = a0.add(a1).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            sum += BF16Format.toFloat(w.get(Bytes.SHORT, offset + 2L * i)) * x[xOff + i];
        }
        return sum;
    }

    @Override
    public void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        int l = width.floats().length();
        int i = 0;
        for (; i <= n - l; i += l) {
            load(w, offset, i).intoArray(dst, dstOff + i);
        }
        for (; i < n; i++) {
            dst[dstOff + i] = BF16Format.toFloat(w.get(Bytes.SHORT, offset + 2L * i));
        }
    }
}
