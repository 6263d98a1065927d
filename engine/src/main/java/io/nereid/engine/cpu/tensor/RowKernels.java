package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgmlType;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The kernel set every {@link WeightMatrix} uses: the Vector API one ({@link VectorRowKernels}) at
 * the width {@link Kernels} chose for this JVM, or the scalar specification when it chose scalar
 * kernels. {@link Kernels} makes, and logs, that one decision for the math kernels and these alike.
 */
final class RowKernels {

    private static final Map<GgmlType, RowKernel> SCALAR = byType(F32Format.INSTANCE, F16Format.INSTANCE,
            BF16Format.INSTANCE, Q8_0Format.INSTANCE, Q4_0Format.INSTANCE, Q4_KFormat.INSTANCE, Q5_KFormat.INSTANCE,
            Q6_KFormat.INSTANCE);

    static final Set<GgmlType> SUPPORTED = Collections.unmodifiableSet(SCALAR.keySet());

    /** The vector set, or empty when the kernels are scalar. */
    private static final Optional<Map<GgmlType, RowKernel>> VECTOR = Kernels.vectorWidth().map(w -> VectorRowKernels.all());

    private RowKernels() {
    }

    /** The kernel in use for {@code type}, or null if the type is not supported. */
    static RowKernel get(GgmlType type) {
        return VECTOR.orElse(SCALAR).get(type);
    }

    /** The scalar specification for {@code type}, or null if the type is not supported. */
    static RowKernel scalar(GgmlType type) {
        return SCALAR.get(type);
    }

    /** The vector kernel for {@code type}, or empty when vector kernels are not in use. */
    static Optional<RowKernel> vector(GgmlType type) {
        return VECTOR.map(m -> m.get(type));
    }

    /** The float-array dot product of the set in use. */
    static FloatDot floatDot() {
        return (FloatDot) get(GgmlType.F32);
    }

    static Map<GgmlType, RowKernel> byType(RowKernel... kernels) {
        Map<GgmlType, RowKernel> m = new EnumMap<>(GgmlType.class);
        for (RowKernel k : kernels) {
            m.put(k.type(), k);
        }
        return Collections.unmodifiableMap(m);
    }
}
