package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * F16 with the Vector API; {@link F16Format} is the specification. The Vector API has no
 * half-float lanes, so the halves are widened a chunk at a time by a plain loop of
 * {@link Float#float16ToFloat}, which C2 compiles to {@code vcvtph2ps} (16 halves an instruction
 * at 512 bits), and the dots are {@link WideningKernel}'s. Widening in the lanes with integer
 * operations (F. Giesen's {@code half_to_float_fast}, what this class did before) took about ten
 * operations a vector and left a lone token's decode compute-bound: 1.1B F16 on two threads 6.2
 * tok/s, 52 % of the bandwidth roofline, while four tokens sharing each widened vector ran 3.4
 * times as many tokens a second. Both are exact, so the floats, and every dot's bits, are the same.
 */
final class F16Vector extends WideningKernel {

    @Override
    public GgmlType type() {
        return GgmlType.F16;
    }

    @Override
    void widen(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        for (int i = 0; i < n; i++) { // the loop C2 vectorizes
            dst[dstOff + i] = Float.float16ToFloat(w.get(Bytes.SHORT, offset + 2L * i));
        }
    }

    @Override
    float element(MemorySegment w, long offset) {
        return Bytes.f16(w, offset);
    }
}
