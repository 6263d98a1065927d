package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.util.Objects;

/**
 * A tensor's ggml type has no kernels here (Q3_K, IQ2_XS, ...). The message names the type and
 * what is supported; a model loader adds the file and tensor name.
 */
public final class UnsupportedWeightTypeException extends IllegalArgumentException {

    private final GgmlType type;

    public UnsupportedWeightTypeException(GgmlType type, String what) {
        super(what + " has unsupported weight type " + type + " (supported: " + RowKernels.SUPPORTED + ")");
        this.type = Objects.requireNonNull(type, "type");
    }

    public GgmlType type() {
        return type;
    }
}
