package io.nereid.engine.cpu.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The prompt-processing product: six rows against up to {@code 4 L} tokens ({@code L} the
 * vector's lanes) in outer-product form. The rows are decoded weights ({@code WeightMatrix}), or
 * in attention a prompt's keys against its queries and its probabilities against the values
 * ({@link KernelSupport#attentionF16Panels}). The activations come transposed
 * ({@code MatmulInput.transposed}: for each column {@code k}, the group's tokens side by side), so
 * one load gives {@code L} tokens' {@code x[k]}, and each row's weight {@code w[k]} is broadcast
 * to all of them: per column, {@code nv} vector loads and six broadcasts feed {@code 6 nv}
 * multiply-adds into {@code 6 nv} accumulators whose lanes are tokens, so no lane sums at the end.
 *
 * <p>Why: {@code FloatDot.dot4x4} loads two vectors per multiply-add pair and its operands (four
 * rows of 4,096 floats, four tokens) do not fit L1, which held the batched matmul at ~80 GFLOP/s
 * on one core here; this form loads 0.42 per multiply-add at four vectors and streams the
 * transposed group from L2 (155–169 GFLOP/s in a probe; the README's Measured, "CPU runtime").
 *
 * <p>Order: each product is one sequential chain over {@code k} (a lane's FMAs in column order),
 * not {@code F32Vector}'s, so this is only for the faster order (not batch invariant); it is the
 * same bits whatever the row range and however many tokens share the group.
 *
 * <p>With one vector of tokens each broadcast weight feeds one multiply-add; {@link #multiplyPairs} puts two
 * columns in a vector instead, for the formats where a different order costs no promise.
 *
 * <p>The four kernels (one to four token vectors) are written out, accumulator by accumulator:
 * C2 keeps vectors in registers only as named locals (an array of them, or a loop over them, is
 * memory and boxing), and one body per width keeps each kernel's profile its own.
 */
public final class PanelDot {

    /** Weight rows one call multiplies. */
    public static final int ROWS = 6;

    /** Token vectors one call multiplies, at most. */
    public static final int MAX_VECTORS = 4;

    /**
     * Rows of sums a caller collects before it writes them out ({@code WeightMatrix}): a multiple of
     * {@link #ROWS}, so that a group of rows is never split.
     */
    public static final int CHUNK = 16 * ROWS;

    /** Floats of a chunk's sums: {@link #CHUNK} rows of up to {@code 4 * 16} tokens. */
    public static final int CHUNK_SUMS = CHUNK * MAX_VECTORS * 16;

    /** Token groups a caller multiplies with each decoded row at most, each with its chunk of sums. */
    public static final int SHARED_GROUPS = 4;

    /** This JVM's width, a static final so that every species read from it is a constant. */
    private static final VectorWidth W = VectorWidth.current();

    private PanelDot() {}

    /** Lanes of a token vector: tokens are grouped and padded in multiples of this. */
    public static int lanes() {
        return W.floats().length();
    }

    /**
     * {@code sums[sumsOff + j * tg + t] = sum over k < cols of w[wOff + j * wStride + k] * xt[xtOff + k * tg + t]}
     * for the six rows {@code j < 6} and the group's tokens {@code t < tg = nv L}, the
     * group's transposed activations being {@code cols * tg} floats from {@code xtOff}. Rows
     * {@code j >= nRows} repeat row 0 (what they store is not a product of the caller's).
     *
     * @param nv token vectors in the group, 1 to 4
     */
    public static void multiply(int nv, float[] w, int wOff, int wStride, int cols, int nRows, float[] xt, int xtOff,
            float[] sums, int sumsOff) {
        switch (nv) {
            case 1 -> multiply1(w, wOff, wStride, cols, nRows, xt, xtOff, sums, sumsOff);
            case 2 -> multiply2(w, wOff, wStride, cols, nRows, xt, xtOff, sums, sumsOff);
            case 3 -> multiply3(w, wOff, wStride, cols, nRows, xt, xtOff, sums, sumsOff);
            case 4 -> multiply4(w, wOff, wStride, cols, nRows, xt, xtOff, sums, sumsOff);
            default -> throw new IllegalArgumentException("token vectors " + nv + " not in 1..4");
        }
    }

    /** {@link #multiply} with 1 vector of tokens. */
    private static void multiply1(float[] w, int wOff, int wStride, int cols, int nRows, float[] xt, int xtOff,
            float[] sums, int sumsOff) {
        VectorSpecies<Float> f = W.floats();
        int tg = f.length();
        // rows past nRows read row 0 again, into sums the caller does not use
        int w1 = nRows > 1 ? wOff + wStride : wOff;
        int w2 = nRows > 2 ? wOff + 2 * wStride : wOff;
        int w3 = nRows > 3 ? wOff + 3 * wStride : wOff;
        int w4 = nRows > 4 ? wOff + 4 * wStride : wOff;
        int w5 = nRows > 5 ? wOff + 5 * wStride : wOff;
        FloatVector a00 = FloatVector.zero(f), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00;
        for (int k = 0; k < cols; k++) {
            int xi = xtOff + k * tg;
            FloatVector x0 = FloatVector.fromArray(f, xt, xi);
            FloatVector b = FloatVector.broadcast(f, w[wOff + k]);
            a00 = x0.fma(b, a00);
            b = FloatVector.broadcast(f, w[w1 + k]);
            a01 = x0.fma(b, a01);
            b = FloatVector.broadcast(f, w[w2 + k]);
            a02 = x0.fma(b, a02);
            b = FloatVector.broadcast(f, w[w3 + k]);
            a03 = x0.fma(b, a03);
            b = FloatVector.broadcast(f, w[w4 + k]);
            a04 = x0.fma(b, a04);
            b = FloatVector.broadcast(f, w[w5 + k]);
            a05 = x0.fma(b, a05);
        }
        int l = f.length();
        a00.intoArray(sums, sumsOff);
        a01.intoArray(sums, sumsOff + tg);
        a02.intoArray(sums, sumsOff + 2 * tg);
        a03.intoArray(sums, sumsOff + 3 * tg);
        a04.intoArray(sums, sumsOff + 4 * tg);
        a05.intoArray(sums, sumsOff + 5 * tg);
    }

    /** {@link #multiply} with 2 vectors of tokens. */
    private static void multiply2(float[] w, int wOff, int wStride, int cols, int nRows, float[] xt, int xtOff,
            float[] sums, int sumsOff) {
        VectorSpecies<Float> f = W.floats();
        int tg = 2 * f.length();
        // rows past nRows read row 0 again, into sums the caller does not use
        int w1 = nRows > 1 ? wOff + wStride : wOff;
        int w2 = nRows > 2 ? wOff + 2 * wStride : wOff;
        int w3 = nRows > 3 ? wOff + 3 * wStride : wOff;
        int w4 = nRows > 4 ? wOff + 4 * wStride : wOff;
        int w5 = nRows > 5 ? wOff + 5 * wStride : wOff;
        FloatVector a00 = FloatVector.zero(f), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00, a14 = a00, a15 = a00;
        for (int k = 0; k < cols; k++) {
            int xi = xtOff + k * tg;
            FloatVector x0 = FloatVector.fromArray(f, xt, xi);
            FloatVector x1 = FloatVector.fromArray(f, xt, xi + f.length());
            FloatVector b = FloatVector.broadcast(f, w[wOff + k]);
            a00 = x0.fma(b, a00);
            a10 = x1.fma(b, a10);
            b = FloatVector.broadcast(f, w[w1 + k]);
            a01 = x0.fma(b, a01);
            a11 = x1.fma(b, a11);
            b = FloatVector.broadcast(f, w[w2 + k]);
            a02 = x0.fma(b, a02);
            a12 = x1.fma(b, a12);
            b = FloatVector.broadcast(f, w[w3 + k]);
            a03 = x0.fma(b, a03);
            a13 = x1.fma(b, a13);
            b = FloatVector.broadcast(f, w[w4 + k]);
            a04 = x0.fma(b, a04);
            a14 = x1.fma(b, a14);
            b = FloatVector.broadcast(f, w[w5 + k]);
            a05 = x0.fma(b, a05);
            a15 = x1.fma(b, a15);
        }
        int l = f.length();
        a00.intoArray(sums, sumsOff);
        a10.intoArray(sums, sumsOff + l);
        a01.intoArray(sums, sumsOff + tg);
        a11.intoArray(sums, sumsOff + tg + l);
        a02.intoArray(sums, sumsOff + 2 * tg);
        a12.intoArray(sums, sumsOff + 2 * tg + l);
        a03.intoArray(sums, sumsOff + 3 * tg);
        a13.intoArray(sums, sumsOff + 3 * tg + l);
        a04.intoArray(sums, sumsOff + 4 * tg);
        a14.intoArray(sums, sumsOff + 4 * tg + l);
        a05.intoArray(sums, sumsOff + 5 * tg);
        a15.intoArray(sums, sumsOff + 5 * tg + l);
    }

    /** {@link #multiply} with 3 vectors of tokens. */
    private static void multiply3(float[] w, int wOff, int wStride, int cols, int nRows, float[] xt, int xtOff,
            float[] sums, int sumsOff) {
        VectorSpecies<Float> f = W.floats();
        int tg = 3 * f.length();
        // rows past nRows read row 0 again, into sums the caller does not use
        int w1 = nRows > 1 ? wOff + wStride : wOff;
        int w2 = nRows > 2 ? wOff + 2 * wStride : wOff;
        int w3 = nRows > 3 ? wOff + 3 * wStride : wOff;
        int w4 = nRows > 4 ? wOff + 4 * wStride : wOff;
        int w5 = nRows > 5 ? wOff + 5 * wStride : wOff;
        FloatVector a00 = FloatVector.zero(f), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00, a14 = a00, a15 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a24 = a00, a25 = a00;
        for (int k = 0; k < cols; k++) {
            int xi = xtOff + k * tg;
            FloatVector x0 = FloatVector.fromArray(f, xt, xi);
            FloatVector x1 = FloatVector.fromArray(f, xt, xi + f.length());
            FloatVector x2 = FloatVector.fromArray(f, xt, xi + 2 * f.length());
            FloatVector b = FloatVector.broadcast(f, w[wOff + k]);
            a00 = x0.fma(b, a00);
            a10 = x1.fma(b, a10);
            a20 = x2.fma(b, a20);
            b = FloatVector.broadcast(f, w[w1 + k]);
            a01 = x0.fma(b, a01);
            a11 = x1.fma(b, a11);
            a21 = x2.fma(b, a21);
            b = FloatVector.broadcast(f, w[w2 + k]);
            a02 = x0.fma(b, a02);
            a12 = x1.fma(b, a12);
            a22 = x2.fma(b, a22);
            b = FloatVector.broadcast(f, w[w3 + k]);
            a03 = x0.fma(b, a03);
            a13 = x1.fma(b, a13);
            a23 = x2.fma(b, a23);
            b = FloatVector.broadcast(f, w[w4 + k]);
            a04 = x0.fma(b, a04);
            a14 = x1.fma(b, a14);
            a24 = x2.fma(b, a24);
            b = FloatVector.broadcast(f, w[w5 + k]);
            a05 = x0.fma(b, a05);
            a15 = x1.fma(b, a15);
            a25 = x2.fma(b, a25);
        }
        int l = f.length();
        a00.intoArray(sums, sumsOff);
        a10.intoArray(sums, sumsOff + l);
        a20.intoArray(sums, sumsOff + 2 * l);
        a01.intoArray(sums, sumsOff + tg);
        a11.intoArray(sums, sumsOff + tg + l);
        a21.intoArray(sums, sumsOff + tg + 2 * l);
        a02.intoArray(sums, sumsOff + 2 * tg);
        a12.intoArray(sums, sumsOff + 2 * tg + l);
        a22.intoArray(sums, sumsOff + 2 * tg + 2 * l);
        a03.intoArray(sums, sumsOff + 3 * tg);
        a13.intoArray(sums, sumsOff + 3 * tg + l);
        a23.intoArray(sums, sumsOff + 3 * tg + 2 * l);
        a04.intoArray(sums, sumsOff + 4 * tg);
        a14.intoArray(sums, sumsOff + 4 * tg + l);
        a24.intoArray(sums, sumsOff + 4 * tg + 2 * l);
        a05.intoArray(sums, sumsOff + 5 * tg);
        a15.intoArray(sums, sumsOff + 5 * tg + l);
        a25.intoArray(sums, sumsOff + 5 * tg + 2 * l);
    }

    /** {@link #multiply} with 4 vectors of tokens. */
    private static void multiply4(float[] w, int wOff, int wStride, int cols, int nRows, float[] xt, int xtOff,
            float[] sums, int sumsOff) {
        VectorSpecies<Float> f = W.floats();
        int tg = 4 * f.length();
        // rows past nRows read row 0 again, into sums the caller does not use
        int w1 = nRows > 1 ? wOff + wStride : wOff;
        int w2 = nRows > 2 ? wOff + 2 * wStride : wOff;
        int w3 = nRows > 3 ? wOff + 3 * wStride : wOff;
        int w4 = nRows > 4 ? wOff + 4 * wStride : wOff;
        int w5 = nRows > 5 ? wOff + 5 * wStride : wOff;
        FloatVector a00 = FloatVector.zero(f), a01 = a00, a02 = a00, a03 = a00, a04 = a00, a05 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00, a14 = a00, a15 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a24 = a00, a25 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00, a34 = a00, a35 = a00;
        for (int k = 0; k < cols; k++) {
            int xi = xtOff + k * tg;
            FloatVector x0 = FloatVector.fromArray(f, xt, xi);
            FloatVector x1 = FloatVector.fromArray(f, xt, xi + f.length());
            FloatVector x2 = FloatVector.fromArray(f, xt, xi + 2 * f.length());
            FloatVector x3 = FloatVector.fromArray(f, xt, xi + 3 * f.length());
            FloatVector b = FloatVector.broadcast(f, w[wOff + k]);
            a00 = x0.fma(b, a00);
            a10 = x1.fma(b, a10);
            a20 = x2.fma(b, a20);
            a30 = x3.fma(b, a30);
            b = FloatVector.broadcast(f, w[w1 + k]);
            a01 = x0.fma(b, a01);
            a11 = x1.fma(b, a11);
            a21 = x2.fma(b, a21);
            a31 = x3.fma(b, a31);
            b = FloatVector.broadcast(f, w[w2 + k]);
            a02 = x0.fma(b, a02);
            a12 = x1.fma(b, a12);
            a22 = x2.fma(b, a22);
            a32 = x3.fma(b, a32);
            b = FloatVector.broadcast(f, w[w3 + k]);
            a03 = x0.fma(b, a03);
            a13 = x1.fma(b, a13);
            a23 = x2.fma(b, a23);
            a33 = x3.fma(b, a33);
            b = FloatVector.broadcast(f, w[w4 + k]);
            a04 = x0.fma(b, a04);
            a14 = x1.fma(b, a14);
            a24 = x2.fma(b, a24);
            a34 = x3.fma(b, a34);
            b = FloatVector.broadcast(f, w[w5 + k]);
            a05 = x0.fma(b, a05);
            a15 = x1.fma(b, a15);
            a25 = x2.fma(b, a25);
            a35 = x3.fma(b, a35);
        }
        int l = f.length();
        a00.intoArray(sums, sumsOff);
        a10.intoArray(sums, sumsOff + l);
        a20.intoArray(sums, sumsOff + 2 * l);
        a30.intoArray(sums, sumsOff + 3 * l);
        a01.intoArray(sums, sumsOff + tg);
        a11.intoArray(sums, sumsOff + tg + l);
        a21.intoArray(sums, sumsOff + tg + 2 * l);
        a31.intoArray(sums, sumsOff + tg + 3 * l);
        a02.intoArray(sums, sumsOff + 2 * tg);
        a12.intoArray(sums, sumsOff + 2 * tg + l);
        a22.intoArray(sums, sumsOff + 2 * tg + 2 * l);
        a32.intoArray(sums, sumsOff + 2 * tg + 3 * l);
        a03.intoArray(sums, sumsOff + 3 * tg);
        a13.intoArray(sums, sumsOff + 3 * tg + l);
        a23.intoArray(sums, sumsOff + 3 * tg + 2 * l);
        a33.intoArray(sums, sumsOff + 3 * tg + 3 * l);
        a04.intoArray(sums, sumsOff + 4 * tg);
        a14.intoArray(sums, sumsOff + 4 * tg + l);
        a24.intoArray(sums, sumsOff + 4 * tg + 2 * l);
        a34.intoArray(sums, sumsOff + 4 * tg + 3 * l);
        a05.intoArray(sums, sumsOff + 5 * tg);
        a15.intoArray(sums, sumsOff + 5 * tg + l);
        a25.intoArray(sums, sumsOff + 5 * tg + 2 * l);
        a35.intoArray(sums, sumsOff + 5 * tg + 3 * l);
    }

    /**
     * {@link #multiply} for one vector of tokens (a decode step of up to {@code L} sequences), with the
     * columns in pairs: lanes {@code 2u} and {@code 2u + 1} of a token vector hold one token's inputs at
     * columns {@code k} and {@code k + 1}, and each row's two weights there are broadcast as one 64-bit
     * value, so one broadcast feeds two multiply-adds (two vectors of {@code L / 2} tokens) where
     * {@link #multiply}, with one vector of tokens, spends a broadcast on each: seven loads for six FMAs held
     * it at 145 GFLOP/s on one core against 203 for this (six rows, 768 columns in L1, AMD EPYC).
     * Each product is two FMA chains, the even columns' and the odd ones', added at the end: not
     * {@link #multiply}'s order, so a caller takes it only where a step's bits already differ from a
     * lone token's (the formats whose few tokens take integer kernels).
     *
     * @param xp the tokens' inputs in pairs ({@code MatmulInput}'s paired layout): for each even column {@code k},
     *     {@code 2L} floats from {@code xpOff + k * L}, token {@code t}'s {@code x[k]} at {@code 2t} and
     *     {@code x[k + 1]} at {@code 2t + 1}
     * @param cols even
     * @param sums {@code sums[sumsOff + j * L + t]} receives row {@code j}'s product with token {@code t}
     *     for {@code j < RO        long w1 = nRows > 1 ? 4L * (wOff + 1 * wStride) : w0;
        long w2 = nRows > 2 ? 4L * (wOff + 2 * wStride) : w0;
        long w3 = nRows > 3 ? 4L * (wOff + 3 * wStride) : w0;
        long w4 = nRows > 4 ? 4L * (wOff + 4 * wStride) : w0;
        long w5 = nRows > 5 ? 4L * (wOff + 5 * wStride) : w0;} (rows {@code j >= nRows} repeat row 0); the call writes {@code 12 L} floats
     *     from {@code sumsOff}
     */
    public static void multiplyPairs(float[] w, int wOff, int wStride, int cols, int nRows, float[] xp, int xpOff,
            float[] sums, int sumsOff) {
        VectorSpecies<Float> f = W.floats();
        int l = f.length();
        MemorySegment ws = MemorySegment.ofArray(w);
        long w0 = 4L * wOff;
        long w1 = nRows > 1 ? 4L * (wOff + 1 * wStride) : w0;
        long w2 = nRows > 2 ? 4L * (wOff + 2 * wStride) : w0;
        long w3 = nRows > 3 ? 4L * (wOff + 3 * wStride) : w0;
        long w4 = nRows > 4 ? 4L * (wOff + 4 * wStride) : w0;
        long w5 = nRows > 5 ? 4L * (wOff + 5 * wStride) : w0;
        FloatVector a00 = FloatVector.zero(f), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00;
        FloatVector b;
        for (int k = 0; k < cols; k += 2) {
            int xi = xpOff + k * l;
            FloatVector x0 = FloatVector.fromArray(f, xp, xi), x1 = FloatVector.fromArray(f, xp, xi + l);
            long at = 4L * k;
            b = pair(ws, w0 + at);
            a00 = x0.fma(b, a00);
            a01 = x1.fma(b, a01);
            b = pair(ws, w1 + at);
            a10 = x0.fma(b, a10);
            a11 = x1.fma(b, a11);
            b = pair(ws, w2 + at);
            a20 = x0.fma(b, a20);
            a21 = x1.fma(b, a21);
            b = pair(ws, w3 + at);
            a30 = x0.fma(b, a30);
            a31 = x1.fma(b, a31);
            b = pair(ws, w4 + at);
            a40 = x0.fma(b, a40);
            a41 = x1.fma(b, a41);
            b = pair(ws, w5 + at);
            a50 = x0.fma(b, a50);
            a51 = x1.fma(b, a51);
        }
        a00.intoArray(sums, sumsOff + 0 * l);
        a01.intoArray(sums, sumsOff + 1 * l);
        a10.intoArray(sums, sumsOff + 2 * l);
        a11.intoArray(sums, sumsOff + 3 * l);
        a20.intoArray(sums, sumsOff + 4 * l);
        a21.intoArray(sums, sumsOff + 5 * l);
        a30.intoArray(sums, sumsOff + 6 * l);
        a31.intoArray(sums, sumsOff + 7 * l);
        a40.intoArray(sums, sumsOff + 8 * l);
        a41.intoArray(sums, sumsOff + 9 * l);
        a50.intoArray(sums, sumsOff + 10 * l);
        a51.intoArray(sums, sumsOff + 11 * l);
        // lanes 2t and 2t + 1 of row j's two vectors are its even and odd chains for token t (in place: each
        // sum is stored at or below the pair it reads, after every lower pair was read)
        for (int j = 0; j < ROWS; j++) {
            for (int t = 0; t < l; t++) {
                int p = sumsOff + 2 * j * l + 2 * t;
                sums[sumsOff + j * l + t] = sums[p] + sums[p + 1];
            }
        }
    }

    private static final VectorSpecies<Double> PAIRS = VectorSpecies.of(double.class, W.floats().vectorShape());

    private static final ValueLayout.OfDouble PAIR = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    /** The two floats of {@code w} at byte {@code at} in every pair of lanes. */
    private static FloatVector pair(MemorySegment w, long at) {
        return DoubleVector.broadcast(PAIRS, w.get(PAIR, at)).reinterpretAsFloats();
    }
}
