package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * BF16 with the Vector API: widened a chunk at a time in the lanes (each value's bits shifted
 * left by 16), and the dots are {@link WideningKernel}'s. {@link BF16Format} is the
 * specification. Before, the lanes were widened in registers and a lone token's dot ran in
 * four chains of its own order; now a lone token gets its four chains from four rows side by
 * side, in the one order every token count shares (the batch-invariant order; the faster one
 * takes the matrix's {@link HalfColumns} copy where it has one).
 */
final class BF16Vector extends WideningKernel {

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    @Override
    public GgmlType type() {
        return GgmlType.BF16;
    }

    @Override
    void widen(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int i = 0;
        for (; i <= n - l; i += l) { // in the lanes: C2 does not vectorize the plain loop (Float.intBitsToFloat)
            ShortVector bits = ShortVector.fromMemorySegment(W.shorts(), w, offset + 2L * i, ByteOrder.LITTLE_ENDIAN);
            IntVector h = (IntVector) bits.castShape(W.ints(), 0);
            h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(dst, dstOff + i); // sign shifted out
        }
        for (; i < n; i++) {
            dst[dstOff + i] = element(w, offset + 2L * i);
        }
    }

    @Override
    float element(MemorySegment w, long offset) {
        return BF16Format.toFloat(w.get(Bytes.SHORT, offset));
    }
}
