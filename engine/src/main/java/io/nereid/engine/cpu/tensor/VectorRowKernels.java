package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.util.Map;
import jdk.incubator.vector.FloatVector;

/**
 * The Vector API row kernel set at one {@link VectorWidth}. Only {@link RowKernels} (with the width
 * {@link io.nereid.engine.cpu.kernel.Kernels} chose) and tests (with each width) build it.
 *
 * <p>Every kernel works on {@code L = width.floats().length()} floats at a time (4, 8 or 16) and
 * widens {@code L} bytes or shorts to them with one same-lane-count conversion
 * ({@link VectorWidth#loadBytes}, {@link VectorWidth#shorts}), so that a block of 32 weights is a
 * whole number of steps. Each kernel keeps its width in a final field and reads its species from it
 * at the top of a method, where C2 sees them as constants (see {@link VectorWidth} for why).
 *
 * <p>The kernels repeat their loop skeletons (four accumulators, two blocks per step) on purpose:
 * a shared loop calling a per-format load would be a polymorphic call that C2 may not inline,
 * and a vector that crosses a call that is not inlined is boxed on the heap, which costs more
 * than the whole computation. For the same reason each kernel body is kept small enough to be
 * inlined whole. The K-quants compute from layouts repacked at load ({@link RepackedKernel}).
 *
 * <p>Known limit: {@link WeightMatrix#matmul} calls every format through one call site. Once two
 * formats have run through it, C2 may inline both kernels into {@code matmul} and run out of its
 * node budget there, boxing vectors again (seen: F16 after F32, a 1024 x 4096 matvec going from
 * 0.45 to 1.5 ms). {@code -XX:CompileCommand=dontinline,io.nereid.engine.cpu.tensor.*::dot} and
 * {@code ...::dequantize} keep each kernel compiled on its own and avoid it.
 */
final class VectorRowKernels {

    private VectorRowKernels() {
    }

    /** One kernel per supported format, all at {@code width}; new instances on every call. */
    static Map<GgmlType, RowKernel> all() {
        return RowKernels.byType(new F32Vector(), new F16Vector(), new BF16Vector(),
                new Q8_0Vector(), new Q4_0Vector(),
                new RepackedKernel(GgmlType.Q4_K, Q4_KPacked.INSTANCE, Q4_KPacked.BLOCK_BYTES, Q4_KPacked::pack),
                new RepackedKernel(GgmlType.Q5_K, Q5_KPacked.INSTANCE, Q5_KPacked.BLOCK_BYTES, Q5_KPacked::pack),
                new RepackedKernel(GgmlType.Q6_K, Q6_KPacked.INSTANCE, Q6_KPacked.BLOCK_BYTES, Q6_KPacked::pack));
    }

    /** {@code v * s + acc}, one FMA with {@code s} broadcast. */
    static FloatVector fma(FloatVector v, float s, FloatVector acc) {
        return v.fma(v.broadcast(s), acc);
    }
}
