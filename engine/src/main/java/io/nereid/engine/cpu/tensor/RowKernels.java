package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.System.Logger.Level;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Chooses, once per JVM, the kernel set every {@link WeightMatrix} uses: the Vector API one
 * ({@code VectorKernels}) when the incubator module is present, not disabled, the preferred
 * vector shape suits it and C2 is on; otherwise the scalar specification, with one log line
 * giving the reason (Lucene's {@code VectorizationProvider} pattern: degrade, never fail).
 *
 * <p>{@code -Dnereid.tensor.vector=false} forces the scalar set.
 */
final class RowKernels {

    static final String DISABLE_PROPERTY = "nereid.tensor.vector";

    private static final System.Logger LOG = System.getLogger(RowKernels.class.getName());

    private static final Map<GgmlType, RowKernel> SCALAR = byType(F32Format.INSTANCE, F16Format.INSTANCE,
            BF16Format.INSTANCE, Q8_0Format.INSTANCE, Q4_0Format.INSTANCE, Q4_KFormat.INSTANCE, Q5_KFormat.INSTANCE,
            Q6_KFormat.INSTANCE);

    static final Set<GgmlType> SUPPORTED = Collections.unmodifiableSet(SCALAR.keySet());

    /** The vector set, or empty when it cannot be used (the reason was logged). */
    private static final Optional<Map<GgmlType, RowKernel>> VECTOR = loadVector();

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

    /** A short description of the set in use, for logs: {@code "vector (512-bit)"} or {@code "scalar"}. */
    static String description() {
        return VECTOR.isPresent() ? "vector (" + VectorKernels.describeShape() + ")" : "scalar";
    }

    static Map<GgmlType, RowKernel> byType(RowKernel... kernels) {
        Map<GgmlType, RowKernel> m = new EnumMap<>(GgmlType.class);
        for (RowKernel k : kernels) {
            m.put(k.type(), k);
        }
        return Collections.unmodifiableMap(m);
    }

    private static Optional<Map<GgmlType, RowKernel>> loadVector() {
        if ("false".equalsIgnoreCase(System.getProperty(DISABLE_PROPERTY))) {
            LOG.log(Level.INFO, "Tensor kernels: scalar, disabled by -D" + DISABLE_PROPERTY + "=false");
            return Optional.empty();
        }
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            LOG.log(Level.WARNING, "Tensor kernels: scalar, jdk.incubator.vector is not loaded; "
                    + "start the JVM with --add-modules jdk.incubator.vector");
            return Optional.empty();
        }
        try {
            Optional<String> unsuitable = VectorKernels.unsuitableReason();
            if (unsuitable.isPresent()) {
                LOG.log(Level.WARNING, "Tensor kernels: scalar, " + unsuitable.get());
                return Optional.empty();
            }
            return Optional.of(VectorKernels.all());
        } catch (LinkageError | RuntimeException e) {
            LOG.log(Level.WARNING, "Tensor kernels: scalar, the Vector API kernels failed to load: " + e);
            return Optional.empty();
        }
    }
}
