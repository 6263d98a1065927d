package io.nereid.engine.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.util.Map;
import java.util.Optional;

/** Placeholder until the Vector API kernels land. */
final class VectorKernels {

    private VectorKernels() {
    }

    static Optional<String> unsuitableReason() {
        return Optional.of("the Vector API kernels are not implemented yet");
    }

    static Map<GgmlType, RowKernel> all() {
        throw new UnsupportedOperationException();
    }

    static String describeShape() {
        return "none";
    }
}
