package io.nereid.engine.core;

import io.nereid.engine.model.CpuForward;
import io.nereid.engine.model.KvStorage;
import io.nereid.engine.model.Slice;
import io.nereid.kvcache.BlockCopy;
import java.util.List;

/** The pure-Java backend: {@link CpuForward} over a {@link KvStorage}. Engine thread only. */
public final class CpuBackend implements Backend {

    private final CpuForward forward;
    private final KvStorage storage;

    public CpuBackend(CpuForward forward, KvStorage storage) {
        this.forward = forward;
        this.storage = storage;
    }

    @Override
    public int vocabSize() {
        return forward.config().vocabSize();
    }

    @Override
    public void copy(List<BlockCopy> copies) {
        copies.forEach(storage::copy);
    }

    @Override
    public float[][] forward(List<Slice> slices) {
        return forward.forward(slices, storage);
    }
}
