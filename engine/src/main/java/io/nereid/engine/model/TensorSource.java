package io.nereid.engine.model;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Optional;

/**
 * Where a backend finds a model's tensors, asked for by their GGUF names
 * ({@code blk.N.attn_q.weight}): a GGUF file, or a Hugging Face directory that stores them under
 * other names ({@link HfTensors}). Immutable; valid while the files behind it are open.
 */
public interface TensorSource {

    /**
     * One tensor: its ggml type, its dims and its bytes, mapped from the file.
     *
     * @param dims  GGUF order, {@code [cols, rows]}
     * @param shown the shape as the source writes it, for messages
     */
    record Tensor(GgmlType type, long[] dims, MemorySegment data, String shown) {
    }

    /**
     * The tensor stored for {@code ggufName}, or empty if the source has none.
     *
     * @throws ModelLoadException if it exists but cannot be computed with (its type), naming it
     */
    Optional<Tensor> find(String ggufName);

    /** How messages name the tensor: the file and its name there. */
    String describe(String ggufName);

    /** GGUF-order dims as the source writes shapes, for messages. */
    String shape(long[] ggufDims);

    /** The tensors of an open GGUF file, under their own names. */
    static TensorSource of(GgufFile file) {
        return new TensorSource() {
            @Override
            public Optional<Tensor> find(String name) {
                return file.findTensor(name)
                        .map(t -> new Tensor(t.type(), t.dims(), file.tensorData(t), Arrays.toString(t.dims())));
            }

            @Override
            public String describe(String name) {
                return file.path() + ": tensor " + name;
            }

            @Override
            public String shape(long[] dims) {
                return Arrays.toString(dims);
            }
        };
    }
}
