package io.nereid.engine.safetensors;

import java.util.Arrays;
import java.util.Objects;

/**
 * One tensor's entry in a safetensors header.
 *
 * @param name  the tensor name, e.g. {@code model.layers.0.self_attn.q_proj.weight}
 * @param dtype element type
 * @param shape row-major (PyTorch) order: the last dimension is contiguous, so a linear layer's
 *              weight is {@code [out_features, in_features]}; the reverse of GGUF's dims
 * @param begin first byte, from the start of the data section (after the header)
 * @param end   one past the last byte
 */
public record SafetensorsTensorInfo(String name, SafetensorsDtype dtype, long[] shape, long begin, long end) {

    public SafetensorsTensorInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
    }

    /** A copy of the shape, row-major order. */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** The dims in GGUF order (fastest-varying first): the shape reversed. */
    public long[] ggufDims() {
        long[] d = new long[shape.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = shape[shape.length - 1 - i];
        }
        return d;
    }

    public long byteSize() {
        return end - begin;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SafetensorsTensorInfo t && t.name.equals(name) && t.dtype == dtype
                && Arrays.equals(t.shape, shape) && t.begin == begin && t.end == end;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), begin, end);
    }

    @Override
    public String toString() {
        return "SafetensorsTensorInfo[" + name + " " + dtype + " " + Arrays.toString(shape) + " @" + begin + ".." + end + "]";
    }
}
