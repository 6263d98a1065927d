package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The activations a {@link WeightMatrix#matmul} multiplies: {@code tokens} vectors of
 * {@code cols} floats, row-major in an array, together with the forms that weight formats derive
 * from them, computed on first use and kept, so that one input shared by several matrices (the
 * query, key and value projections) and by every thread of a matmul is converted once.
 *
 * <p>Q8_0 weights multiply activations quantized to Q8_0 (per block of 32, {@code d = amax / 127},
 * quants rounded half away from zero, {@code d} kept as a float), as llama.cpp does: one token
 * alone is dotted with integer products, several tokens with the same values decoded back to
 * floats, so a token's result does not depend on how many others share its step beyond float
 * rounding.
 *
 * <p>The threads that ask for the Q8_0 form at once share its work: each claims chunks of blocks
 * from a counter until none are left, then waits for the chunks others claimed, which are
 * running, so the threads of one matmul quantize a large input (a prefill chunk) together.
 *
 * <p>Thread-safety: any number of threads may use one input at once. The array is not copied:
 * it must not change while the input is in use.
 */
public final class MatmulInput {

    /**
     * Q8_0 form of every token: quants, one scale per block, and the quants times their scale;
     * with {@link Buffers}, arrays that may be longer than the input.
     */
    record Q8(byte[] quants, float[] scales, float[] values) {
    }

    /**
     * Space for the Q8_0 form of inputs of up to {@code elements} floats, which the inputs made
     * with it use one after another instead of allocating their own: a forward pass makes one for
     * all its layers. Nothing is allocated until an input first needs its Q8_0 form.
     *
     * <p>Thread-safety: an input made with these buffers may be used only while no later input made
     * with them is; the caller orders that (one input's matmuls all return before the next starts).
     */
    public static final class Buffers {

        private final int elements;
        private volatile Q8 q8;

        /** @throws IllegalArgumentException if {@code elements} is negative */
        public Buffers(int elements) {
            if (elements < 0) {
                throw new IllegalArgumentException("elements " + elements + " must be >= 0");
            }
            this.elements = elements;
        }

        private Q8 q8() {
            Q8 q = q8;
            if (q == null) {
                q8 = q = newQ8(elements);
            }
            return q;
        }
    }

    /** Blocks per claimed chunk of the quantization: 8192 floats, a few microseconds. */
    private static final int CHUNK_BLOCKS = 256;

    private final float[] x;
    private final int tokens;
    private final int cols;
    private volatile Q8 q8;                    // allocated by the first caller, filled by all
    private final AtomicInteger nextChunk = new AtomicInteger();
    private final AtomicInteger doneChunks = new AtomicInteger();
    private volatile boolean failed;
    private final Buffers buffers;             // null: the form gets arrays of its own

    private MatmulInput(float[] x, int tokens, int cols, Buffers buffers) {
        this.x = x;
        this.tokens = tokens;
        this.cols = cols;
        this.buffers = buffers;
    }

    /**
     * The first {@code tokens * cols} elements of {@code x}, not copied.
     *
     * @throws IllegalArgumentException if {@code tokens} or {@code cols} is negative
     * @throws IndexOutOfBoundsException if {@code x} is shorter than {@code tokens * cols}
     */
    public static MatmulInput of(float[] x, int tokens, int cols) {
        checkShape(x, tokens, cols);
        return new MatmulInput(x, tokens, cols, null);
    }

    /**
     * {@link #of(float[], int, int)} whose Q8_0 form, if needed, is written to {@code buffers}
     * (see {@link Buffers} for when it may be used).
     *
     * @throws IllegalArgumentException also if the buffers hold fewer than {@code tokens * cols}
     *     elements
     */
    public static MatmulInput of(float[] x, int tokens, int cols, Buffers buffers) {
        checkShape(x, tokens, cols);
        if (tokens * cols > buffers.elements) {
            throw new IllegalArgumentException(tokens + " x " + cols + " input for buffers of " + buffers.elements);
        }
        return new MatmulInput(x, tokens, cols, buffers);
    }

    private static void checkShape(float[] x, int tokens, int cols) {
        Objects.requireNonNull(x, "x");
        if (tokens < 0 || cols < 0) {
            throw new IllegalArgumentException("tokens " + tokens + " and cols " + cols + " must be >= 0");
        }
        Objects.checkFromIndexSize(0, Math.multiplyExact(tokens, cols), x.length);
    }

    private static Q8 newQ8(int n) {
        return new Q8(new byte[n], new float[n / Q8_0Format.BLOCK], new float[n]);
    }

    public int tokens() {
        return tokens;
    }

    public int cols() {
        return cols;
    }

    float[] floats() {
        return x;
    }

    /**
     * The Q8_0 form, quantized by the threads that ask for it first; {@code cols} must be a
     * multiple of 32.
     *
     * @throws IllegalStateException if quantizing failed on another thread
     */
    Q8 q8() {
        Q8 q = q8;
        if (q == null) {
            synchronized (this) {
                q = q8;
                if (q == null) {
                    q8 = q = buffers != null ? buffers.q8() : newQ8(tokens * cols);
                }
            }
        }
        int blocks = tokens * cols / Q8_0Format.BLOCK;
        int chunks = (blocks + CHUNK_BLOCKS - 1) / CHUNK_BLOCKS;
        if (doneChunks.get() == chunks) {
            return q;
        }
        for (int c; (c = nextChunk.getAndIncrement()) < chunks; ) {
            try {
                quantize(q, c * CHUNK_BLOCKS, Math.min(blocks, (c + 1) * CHUNK_BLOCKS));
            } catch (RuntimeException | Error e) {
                failed = true;
                throw e;
            }
            doneChunks.incrementAndGet();
        }
        for (int spins = 0; doneChunks.get() < chunks; spins++) { // chunks claimed by others, running
            if (failed) {
                throw new IllegalStateException("quantizing a matmul input failed on another thread");
            }
            if (spins < 1000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        return q;
    }

    /** Blocks {@code [from, to)} of every token into {@code q}. */
    private void quantize(Q8 q, int from, int to) {
        byte[] quants = q.quants();
        float[] scales = q.scales();
        float[] values = q.values();
        Q8_0Vector vector = RowKernels.get(GgmlType.Q8_0) instanceof Q8_0Vector v ? v : null;
        for (int b = from; b < to; b++) {
            int off = b * Q8_0Format.BLOCK;
            if (vector != null) {
                scales[b] = vector.quantizeBlock(x, off, quants, values);
            } else {
                scales[b] = Q8_0Format.quantizeBlock(x, off, quants, off);
                for (int j = off; j < off + Q8_0Format.BLOCK; j++) {
                    values[j] = quants[j] * scales[b];
                }
            }
        }
    }
}
