package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The vector kernels of the 16-bit float formats ({@link F16Vector}, {@link BF16Vector}): each
 * widens its weights a chunk at a time ({@link #widen}, a plain loop C2 vectorizes) into a
 * per-thread buffer that stays in L1, and the dots read the floats from there.
 *
 * <p>Every dot here is {@link #dot}'s one FMA chain per row and token, the row's vectors into
 * the chain in order, so any number of tokens gives each token the same bits
 * ({@link RowKernel#dotFast} is {@code dot}, and the tiles' {@link FloatDot} order is too): the
 * matmuls of fewer than {@link WeightMatrix#PANEL_TOKENS} tokens ({@link #dotTokens}: a decode step,
 * a speculative verification, a decode step of a few sequences) widen each weight once for all
 * their tokens and run four rows side by side, so that even a lone token keeps four FMA chains in
 * flight without a second order. That is the batch-invariant order, and the faster one's for a
 * matrix without a {@link HalfColumns} copy (an embedding's); with the copy, the faster order is
 * its column chain, which streams from memory (this kernel reads memory only while it widens). ({@link RowKernel#dot4Tokens} is the interface's: {@code dot}
 * token by token, the same bits; the matmuls take {@code dotTokens}.) The token groups are
 * written out accumulator by accumulator, as {@code PanelDot}'s kernels are: C2 keeps vectors in
 * registers only as named locals.
 */
abstract class WideningKernel implements RowKernel {

    /** Weights widened at a time: 4 KiB of floats, a multiple of every vector width. */
    static final int CHUNK = 1024;

    /** Rows {@link #dotTokens} runs side by side: four independent chains for a lone token. */
    static final int ROWS = 4;

    /**
     * Each thread's widened chunks and sums (grown by {@link #dotTokens} to what its token count
     * needs). A kernel thread keeps its own for its life; {@link #dot}'s signature has no scratch,
     * and a lookup per call costs nanoseconds against the rows' hundreds.
     */
    private static final ThreadLocal<float[]> WIDE = ThreadLocal.withInitial(() -> new float[ROWS * CHUNK]);

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    /** {@code dst[dstOff + i]} = weight {@code i} at {@code offset} (2 bytes each), for {@code i < n}, exactly. */
    abstract void widen(MemorySegment w, long offset, float[] dst, int dstOff, int n);

    /** The weight at {@code offset}. */
    abstract float element(MemorySegment w, long offset);

    @Override
    public final float dot(MemorySegment w, long offset, float[] x, int xOff, int n) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int end = f.loopBound(n);
        float[] wide = WIDE.get();
        FloatVector acc = FloatVector.zero(f);
        for (int c = 0; c < end; c += CHUNK) {
            int m = Math.min(CHUNK, end - c);
            widen(w, offset + 2L * c, wide, 0, m);
            for (int i = 0; i < m; i += l) {
                acc = FloatVector.fromArray(f, wide, i).fma(FloatVector.fromArray(f, x, xOff + c + i), acc);
            }
        }
        return tail(F32Vector.sum(acc), w, offset, x, xOff, end, n);
    }

    /** {@code s} with the products of elements {@code [from, n)} added one by one, as {@link F32Vector} does. */
    private float tail(float s, MemorySegment w, long offset, float[] x, int xOff, int from, int n) {
        for (int i = from; i < n; i++) {
            s = Math.fma(element(w, offset + 2L * i), x[xOff + i], s);
        }
        return s;
    }

    @Override
    public final boolean dotsTokens() {
        return true;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Here: {@link #ROWS} rows at a time, a chunk of each widened once into the thread's
     * buffer, then every token's input chunk against the four (four chains, each input vector
     * loaded once for them); each (row, token) chain's vector sum is kept in the buffer between
     * chunks. Each chain is {@link #dot}'s: the rows' vectors in order into one accumulator.
     */
    @Override
    public final void dotTokens(MemorySegment w, long offset, long rowBytes, int rows, float[] x, int xOff, int xStride,
            int tokens, int n, float[] out, int outOff, int outStride) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int end = f.loopBound(n);
        int acc = ROWS * CHUNK;
        float[] s = buffer(acc + ROWS * tokens * l);
        int r = 0;
        for (; r + ROWS <= rows; r += ROWS) {
            long row = offset + r * rowBytes;
            dotRows(w, row, rowBytes, x, xOff, xStride, tokens, end, s, acc);
            for (int t = 0; t < tokens; t++) {
                for (int j = 0; j < ROWS; j++) {
                    float sum = F32Vector.sum(FloatVector.fromArray(f, s, acc + (t * ROWS + j) * l));
                    out[outOff + t * outStride + r + j] = tail(sum, w, row + j * rowBytes, x, xOff + t * xStride, end, n);
                }
            }
        }
        for (; r < rows; r++) {
            long row = offset + r * rowBytes;
            dotRow(w, row, x, xOff, xStride, tokens, end, s, acc);
            for (int t = 0; t < tokens; t++) {
                float sum = F32Vector.sum(FloatVector.fromArray(f, s, acc + t * l));
                out[outOff + t * outStride + r] = tail(sum, w, row, x, xOff + t * xStride, end, n);
            }
        }
    }

    /** This thread's buffer, at least {@code floats} long. */
    private static float[] buffer(int floats) {
        float[] s = WIDE.get();
        if (s.length < floats) {
            s = new float[floats];
            WIDE.set(s);
        }
        return s;
    }

    /**
     * The vector sums of {@link #ROWS} rows from {@code row} ({@code rowBytes} apart) with each
     * token's input, over their first {@code end} elements: (row {@code j}, token {@code t}) at
     * {@code s[acc + (t * ROWS + j) * L]}; {@code s[0, ROWS * CHUNK)} holds the widened chunks.
     */
    private void dotRows(MemorySegment w, long row, long rowBytes, float[] x, int xOff, int xStride,
            int tokens, int end, float[] s, int acc) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        Arrays.fill(s, acc, acc + ROWS * tokens * l, 0f);
        for (int c = 0; c < end; c += CHUNK) {
            int m = Math.min(CHUNK, end - c);
            for (int j = 0; j < ROWS; j++) {
                widen(w, row + j * rowBytes + 2L * c, s, j * CHUNK, m);
            }
            int t = 0;
            if (tokens % 2 == 1 && tokens >= 3) { // an odd count: three first, then pairs (one alone is slowest)
                threeTokens(x, xOff + c, xStride, m, s, acc);
                t = 3;
            }
            for (; t + 2 <= tokens; t += 2) {
                twoTokens(x, xOff + t * xStride + c, xStride, m, s, acc + t * ROWS * l);
            }
            if (t < tokens) {
                oneToken(x, xOff + t * xStride + c, m, s, acc + t * ROWS * l);
            }
        }
    }

    /**
     * Tokens {@code t} and {@code t + 1} of {@link #dotRows} over one widened chunk of {@code m}
     * elements, their inputs from {@code x[xt]}, {@code xStride} apart, their sums from {@code s[at]}:
     * each widened vector loaded once for two FMAs.
     */
    private static void twoTokens(float[] x, int xt, int xStride, int m, float[] s, int at) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int xu = xt + xStride, au = at + ROWS * l;
        FloatVector a0 = FloatVector.fromArray(f, s, at), a1 = FloatVector.fromArray(f, s, at + l);
        FloatVector a2 = FloatVector.fromArray(f, s, at + 2 * l), a3 = FloatVector.fromArray(f, s, at + 3 * l);
        FloatVector b0 = FloatVector.fromArray(f, s, au), b1 = FloatVector.fromArray(f, s, au + l);
        FloatVector b2 = FloatVector.fromArray(f, s, au + 2 * l), b3 = FloatVector.fromArray(f, s, au + 3 * l);
        for (int i = 0; i < m; i += l) {
            FloatVector v = FloatVector.fromArray(f, x, xt + i), u = FloatVector.fromArray(f, x, xu + i);
            FloatVector w0 = FloatVector.fromArray(f, s, i), w1 = FloatVector.fromArray(f, s, CHUNK + i);
            FloatVector w2 = FloatVector.fromArray(f, s, 2 * CHUNK + i), w3 = FloatVector.fromArray(f, s, 3 * CHUNK + i);
            a0 = w0.fma(v, a0);
            a1 = w1.fma(v, a1);
            a2 = w2.fma(v, a2);
            a3 = w3.fma(v, a3);
            b0 = w0.fma(u, b0);
            b1 = w1.fma(u, b1);
            b2 = w2.fma(u, b2);
            b3 = w3.fma(u, b3);
        }
        a0.intoArray(s, at);
        a1.intoArray(s, at + l);
        a2.intoArray(s, at + 2 * l);
        a3.intoArray(s, at + 3 * l);
        b0.intoArray(s, au);
        b1.intoArray(s, au + l);
        b2.intoArray(s, au + 2 * l);
        b3.intoArray(s, au + 3 * l);
    }

    /** One token of {@link #dotRows} over one widened chunk, its input from {@code x[xt]}, its sums from {@code s[at]}. */
    private static void oneToken(float[] x, int xt, int m, float[] s, int at) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        FloatVector a0 = FloatVector.fromArray(f, s, at), a1 = FloatVector.fromArray(f, s, at + l);
        FloatVector a2 = FloatVector.fromArray(f, s, at + 2 * l), a3 = FloatVector.fromArray(f, s, at + 3 * l);
        for (int i = 0; i < m; i += l) {
            FloatVector v = FloatVector.fromArray(f, x, xt + i);
            a0 = FloatVector.fromArray(f, s, i).fma(v, a0);
            a1 = FloatVector.fromArray(f, s, CHUNK + i).fma(v, a1);
            a2 = FloatVector.fromArray(f, s, 2 * CHUNK + i).fma(v, a2);
            a3 = FloatVector.fromArray(f, s, 3 * CHUNK + i).fma(v, a3);
        }
        a0.intoArray(s, at);
        a1.intoArray(s, at + l);
        a2.intoArray(s, at + 2 * l);
        a3.intoArray(s, at + 3 * l);
    }

    /**
     * Tokens 0, 1 and 2 of {@link #dotRows} over one widened chunk of {@code m} elements, their
     * inputs from {@code x[xc]}, {@code xStride} apart.
     */
    private static void threeTokens(float[] x, int xc, int xStride, int m, float[] s, int acc) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        int xu = xc + xStride, xv = xu + xStride;
        int at = acc, au = at + ROWS * l, av = au + ROWS * l;
        FloatVector a0 = FloatVector.fromArray(f, s, at), a1 = FloatVector.fromArray(f, s, at + l);
        FloatVector a2 = FloatVector.fromArray(f, s, at + 2 * l), a3 = FloatVector.fromArray(f, s, at + 3 * l);
        FloatVector b0 = FloatVector.fromArray(f, s, au), b1 = FloatVector.fromArray(f, s, au + l);
        FloatVector b2 = FloatVector.fromArray(f, s, au + 2 * l), b3 = FloatVector.fromArray(f, s, au + 3 * l);
        FloatVector c0 = FloatVector.fromArray(f, s, av), c1 = FloatVector.fromArray(f, s, av + l);
        FloatVector c2 = FloatVector.fromArray(f, s, av + 2 * l), c3 = FloatVector.fromArray(f, s, av + 3 * l);
        for (int i = 0; i < m; i += l) {
            FloatVector p = FloatVector.fromArray(f, x, xc + i), q = FloatVector.fromArray(f, x, xu + i);
            FloatVector r = FloatVector.fromArray(f, x, xv + i);
            FloatVector w0 = FloatVector.fromArray(f, s, i), w1 = FloatVector.fromArray(f, s, CHUNK + i);
            FloatVector w2 = FloatVector.fromArray(f, s, 2 * CHUNK + i), w3 = FloatVector.fromArray(f, s, 3 * CHUNK + i);
            a0 = w0.fma(p, a0);
            a1 = w1.fma(p, a1);
            a2 = w2.fma(p, a2);
            a3 = w3.fma(p, a3);
            b0 = w0.fma(q, b0);
            b1 = w1.fma(q, b1);
            b2 = w2.fma(q, b2);
            b3 = w3.fma(q, b3);
            c0 = w0.fma(r, c0);
            c1 = w1.fma(r, c1);
            c2 = w2.fma(r, c2);
            c3 = w3.fma(r, c3);
        }
        a0.intoArray(s, at);
        a1.intoArray(s, at + l);
        a2.intoArray(s, at + 2 * l);
        a3.intoArray(s, at + 3 * l);
        b0.intoArray(s, au);
        b1.intoArray(s, au + l);
        b2.intoArray(s, au + 2 * l);
        b3.intoArray(s, au + 3 * l);
        c0.intoArray(s, av);
        c1.intoArray(s, av + l);
        c2.intoArray(s, av + 2 * l);
        c3.intoArray(s, av + 3 * l);
    }

    /** {@link #dotRows} of one row: token {@code t}'s vector sum at {@code s[acc + t * L]}. */
    private void dotRow(MemorySegment w, long row, float[] x, int xOff, int xStride, int tokens, int end,
            float[] s, int acc) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        Arrays.fill(s, acc, acc + tokens * l, 0f);
        for (int c = 0; c < end; c += CHUNK) {
            int m = Math.min(CHUNK, end - c);
            widen(w, row + 2L * c, s, 0, m);
            for (int t = 0; t < tokens; t++) {
                int xt = xOff + t * xStride + c;
                FloatVector a = FloatVector.fromArray(f, s, acc + t * l);
                for (int i = 0; i < m; i += l) {
                    a = FloatVector.fromArray(f, s, i).fma(FloatVector.fromArray(f, x, xt + i), a);
                }
                a.intoArray(s, acc + t * l);
            }
        }
    }

    @Override
    public final void dequantize(MemorySegment w, long offset, float[] dst, int dstOff, int n) {
        widen(w, offset, dst, dstOff, n);
    }
}
