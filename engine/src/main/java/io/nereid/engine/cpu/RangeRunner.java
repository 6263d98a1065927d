package io.nereid.engine.cpu;

/**
 * Runs a body over {@code [start, end)} split into contiguous chunks of at least
 * {@code minChunk}, possibly in parallel, and returns when all chunks are done. The forward pass
 * uses it for matrix rows and attention heads; the kernel pool implements it.
 */
@FunctionalInterface
public interface RangeRunner {

    /** The body of one chunk. */
    @FunctionalInterface
    interface Body {
        void run(int from, int to);
    }

    void run(int start, int end, int minChunk, Body body);

    /** Everything on the calling thread, in one chunk. */
    RangeRunner SERIAL = (start, end, minChunk, body) -> {
        if (start < end) {
            body.run(start, end);
        }
    };
}
