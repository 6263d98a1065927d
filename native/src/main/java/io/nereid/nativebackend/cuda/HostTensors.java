package io.nereid.nativebackend.cuda;

import io.nereid.engine.model.TensorSource;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Small tensors (norm weights, biases, RoPE factors) read on the host as floats, from F32, F16 or BF16. */
final class HostTensors {

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private HostTensors() {
    }

    /**
     * The {@code n} values of tensor {@code name}.
     *
     * @throws IllegalArgumentException naming the tensor when it is missing, of another size, or of a type
     *                                  other than F32 / F16 / BF16
     */
    static float[] floats(TensorSource source, String name, int n) {
        TensorSource.Tensor t = source.find(name).orElseThrow(() ->
                new IllegalArgumentException(source.describe(name) + ": missing"));
        long count = 1;
        for (long d : t.dims()) {
            count *= d;
        }
        if (count != n) {
            throw new IllegalArgumentException(source.describe(name) + " has shape " + t.shown() + ", expected " + n
                    + " elements");
        }
        return floats(t.data(), t.type(), n, source.describe(name));
    }

    static float[] floats(MemorySegment data, io.nereid.engine.gguf.GgmlType type, int n, String what) {
        float[] out = new float[n];
        switch (type) {
            case F32 -> MemorySegment.copy(data, F32, 0, out, 0, n);
            case F16 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = Float.float16ToFloat(data.get(U16, 2L * i));
                }
            }
            case BF16 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = Float.intBitsToFloat((data.get(U16, 2L * i) & 0xffff) << 16);
                }
            }
            default -> throw new IllegalArgumentException(what + " is " + type + "; expected F32, F16 or BF16");
        }
        return out;
    }
}
