package io.nereid.engine.core;

import io.nereid.engine.model.Slice;
import io.nereid.kvcache.BlockCopy;
import java.util.List;

/**
 * What the engine needs from a compute backend: one forward pass over a step of slices with
 * K/V in paged blocks, and the block copies the KV-cache manager asks for. Called only from the
 * engine thread.
 */
public interface Backend {

    int vocabSize();

    /** Copies to run before the next forward (copy-on-write of shared partial blocks). */
    void copy(List<BlockCopy> copies);

    /**
     * Per slice: with {@link Slice#allLogits()} the logits of every token (one vocabSize row each,
     * row-major); else the logits (vocabSize floats) of its last token if it wants them; else null.
     */
    float[][] forward(List<Slice> slices);
}
