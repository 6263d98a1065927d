package io.nereid.engine.backend;

import io.nereid.kvcache.BlockCopy;
import java.util.List;

/**
 * A {@link Backend} that hands every call to another: decorators (tests that hold or fail forward
 * passes, instrumentation) override what they change. Threading as the delegate's.
 */
public abstract class ForwardingBackend implements Backend {

    private final Backend delegate;

    protected ForwardingBackend(Backend delegate) {
        this.delegate = delegate;
    }

    /** The backend calls go to. */
    protected Backend delegate() {
        return delegate;
    }

    @Override
    public int vocabSize() {
        return delegate.vocabSize();
    }

    @Override
    public KvCacheSpec kvCacheSpec(int blockSize) {
        return delegate.kvCacheSpec(blockSize);
    }

    @Override
    public void allocate(int numBlocks, int blockSize, int maxPositions) {
        delegate.allocate(numBlocks, blockSize, maxPositions);
    }

    @Override
    public long weightCopyBytes() {
        return delegate.weightCopyBytes();
    }

    @Override
    public void copy(List<BlockCopy> copies) {
        delegate.copy(copies);
    }

    @Override
    public StepOutput forward(Step step) {
        return delegate.forward(step);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
