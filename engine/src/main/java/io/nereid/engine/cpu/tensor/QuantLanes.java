package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link MatmulInput.Quants} computed on vector lanes: the largest magnitude of a block and its
 * integers {@code rint(x * scale)}, as ggml's {@code quantize_row_q8_0} / {@code _q8_K} round them
 * (half to even). A scalar loop here, run by the one thread that computes an input's quants while
 * the others wait for them, took ~10 % of a five-token step (110M Q4_0). A class of its own so
 * that {@link MatmulInput} loads without the Vector API: only the {@link Interleaved} kernels ask
 * for quants, and only the vector kernels make an interleaved copy.
 */
final class QuantLanes {

    private static final VectorSpecies<Float> F = VectorWidth.current().floats();
    private static final VectorSpecies<Short> S = VectorWidth.current().shorts();

    /** {@code 1.5 * 2^23}: adding it leaves no bits below the units, and the addition rounds half to even. */
    private static final float ROUND = 0x1.8p23f;

    private QuantLanes() {
    }

    /** The largest magnitude of {@code x[off, off + n)} ({@code n} a multiple of the lanes), NaN if one is. */
    static float absMax(float[] x, int off, int n) {
        FloatVector m = FloatVector.zero(F);
        for (int j = off; j < off + n; j += F.length()) {
            m = m.max(FloatVector.fromArray(F, x, j).abs());
        }
        return m.reduceLanes(VectorOperators.MAX);
    }

    /**
     * {@code rint(x[j] * scale)} for {@code j} in {@code [off, off + n)} into {@code out}'s integers
     * ({@code q} as pairs, {@code q16}, {@code qf}), clamped to {@code [-127, 127]} and NaN as 0 (as
     * an {@code (int)} cast takes it). The clamp changes no integer a finite scale gives (every
     * {@code |x * scale|} is at most 127 and a rounding); a block whose scale overflowed (its
     * largest magnitude below ~3.7e-37, its F16 {@code d} then 0) gets integers the kernels' 16 bits
     * and floats hold alike, rather than infinities.
     */
    static void quantize(float[] x, int off, int n, float scale, MatmulInput.Quants out) {
        for (int j = off; j < off + n; j += F.length()) {
            FloatVector r = FloatVector.fromArray(F, x, j).mul(scale).add(ROUND).sub(ROUND).max(-127f).min(127f);
            IntVector q = (IntVector) r.convert(VectorOperators.F2I, 0);
            q.and(0xFFFF).or(q.lanewise(VectorOperators.LSHL, 16)).intoArray(out.q(), j);
            ((ShortVector) q.convertShape(VectorOperators.I2S, S, 0)).intoArray(out.q16(), j);
            ((FloatVector) q.convert(VectorOperators.I2F, 0)).intoArray(out.qf(), j);
        }
    }
}
