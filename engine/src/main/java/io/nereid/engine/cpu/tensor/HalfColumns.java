package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.mmap.HugePages;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * F16 and BF16 matrices for the matmuls of fewer than {@link WeightMatrix#PANEL_TOKENS} tokens in
 * the faster order, from a copy in column order: the rows in groups of {@link #ROWS}, each group's columns one after
 * the other ({@code ROWS} 16-bit values each; the last group may be shorter). A matmul walks the
 * copy front to back and adds each column, times the token's input there, into the rows' sums:
 * {@code acc[r] = fma(w[r][k], x[k], acc[r])} for {@code k = 0, 1, ...}. F16 runs as one plain loop
 * over a column's rows that C2 compiles to {@code vcvtph2ps} and {@code vfmadd} (the Vector API has
 * no half-float lanes); BF16, whose plain loop C2 does not vectorize ({@code Float.intBitsToFloat}),
 * in the lanes (a shift).
 *
 * <p>Why: {@link WideningKernel} widens a chunk of four rows into a buffer and then multiplies it,
 * so the core reads memory only while it widens: out of cache (every decode: a model does not fit)
 * one thread streamed F16 at 9-10 GB/s, against 23-27 GB/s here where the loads are spread evenly
 * over the multiplies (AMD EPYC, 2026-12-06, {@code 2048 x 768}, twenty copies; in cache the buffer
 * is faster, 32 against 24-27 GB/s). 1.1B F16 decode on two threads 7.9 -> 15.8 tok/s. llama.cpp's
 * F16 dot, loads and FMAs interleaved, streams like this. Where a thread's rows hold two whole groups,
 * one to three tokens (BF16: one) walk both in one loop, two sequential streams, which keep more of
 * memory's bandwidth busy than one (two threads, 5632 x 2048 out of cache: 27.5-30.9 -> 31.6-35.6 GB/s).
 *
 * <p>Order: each (row, token) is one FMA chain over the columns in order from zero, which is
 * {@code PanelDot}'s order: a token gets the same bits here (up to {@link #MAX_TOKENS} tokens in the
 * column loops, more in {@link #multiplyMany}), in the panels (from {@link WeightMatrix#PANEL_TOKENS}
 * tokens), alone or with others, on any row range (the rows do not interact). The inputs are the format's
 * {@link MatmulInput.Form} values (rounded to halves or bfloat16, as ggml's dots take them), and
 * each weight widens exactly.
 *
 * <p>Thread-safety: the copy is immutable; each thread sums into arrays of its own.
 */
final class HalfColumns {

    /**
     * Rows per group (the last may have fewer): the plain loop's vector part dominates from here. With
     * 128 rows, so that a 768-row matrix splits into more groups for the threads, 110M F16 decode on
     * two threads ran at 73-80 tok/s against 126-146 with 256 (the short loops' scalar ends and set-up
     * outweigh the balance), so a matrix with few groups leaves a thread idle for part of its matmul,
     * and a matrix of 2048 rows keeps at most 8 threads busy in decode (threads split matmuls on the
     * groups, {@link WeightMatrix#rowAlignment}).
     */
    static final int ROWS = 256;

    /**
     * Tokens the column loops ({@link #multiply}) take; from here to {@link WeightMatrix#PANEL_TOKENS}
     * {@link #multiplyMany}, then the panels. F16 2048 x 768, one thread, out of cache: three tokens
     * 265 against 315 us for the many-token kernel, four 370 against 293.
     */
    static final int MAX_TOKENS = 3;

    private static final VectorWidth W = VectorWidth.current();
    private static final VectorSpecies<Float> F = W.floats();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * Each thread's sums, one array per token: the loop's stores to three arrays C2 keeps apart
     * (offsets into one array it cannot prove disjoint, and then it does not vectorize).
     */
    private static final ThreadLocal<float[][]> SUMS = ThreadLocal.withInitial(() -> new float[][] {
        new float[ROWS], new float[ROWS], new float[ROWS]});

    /** The second group's sums of the two-group loops. */
    private static final ThreadLocal<float[][]> SUMS2 = ThreadLocal.withInitial(() -> new float[][] {
        new float[ROWS], new float[ROWS], new float[ROWS]});

    private HalfColumns() {
    }

    /** Whether {@code type} has this layout. */
    static boolean supports(GgmlType type) {
        return type == GgmlType.F16 || type == GgmlType.BF16;
    }

    /** Bytes of the copy of a {@code rows x cols} matrix: as many as the weights'. */
    static long bytes(int rows, int cols) {
        return 2L * rows * cols;
    }

    /** The copy of {@code rows} rows of {@code cols} 16-bit weights at {@code data} (row-major), in new off-heap memory. */
    static MemorySegment pack(MemorySegment data, int rows, int cols) {
        MemorySegment copy = HugePages.allocate(bytes(rows, cols));
        int groups = (rows + ROWS - 1) / ROWS;
        // at load, on the common pool: disjoint groups
        IntStream.range(0, groups).parallel().forEach(g -> {
            int r0 = g * ROWS;
            int n = Math.min(ROWS, rows - r0);
            long base = 2L * r0 * cols;
            short[] row = new short[cols];
            for (int j = 0; j < n; j++) {
                MemorySegment.copy(data, Bytes.SHORT, 2L * (r0 + j) * cols, row, 0, cols);
                for (int k = 0; k < cols; k++) {
                    copy.set(Bytes.SHORT, base + 2L * ((long) k * n + j), row[k]);
                }
            }
        });
        return copy;
    }

    /**
     * {@code out[t * outStride + r] = W[r] · x[t * cols, (t + 1) * cols)} for
     * {@code t < tokens <= MAX_TOKENS} and rows {@code r} in {@code [rowStart, rowEnd)}, from the
     * copy {@link #pack} made of a {@code type} matrix.
     */
    static void multiply(GgmlType type, MemorySegment copy, int rows, int cols, float[] x, int tokens, int rowStart,
            int rowEnd, float[] out, int outStride) {
        if (tokens < 1 || tokens > MAX_TOKENS) {
            throw new IllegalArgumentException("tokens " + tokens + " not in 1.." + MAX_TOKENS);
        }
        boolean bf16 = type == GgmlType.BF16;
        float[][] s = SUMS.get();
        float[][] s2 = SUMS2.get();
        for (int r = rowStart; r < rowEnd; ) {
            if ((tokens == 1 || !bf16) && r % ROWS == 0 && r + 2 * ROWS <= rowEnd) {
                // two whole groups in one loop: two sequential streams
                for (int t = 0; t < tokens; t++) {
                    Arrays.fill(s[t], 0f);
                    Arrays.fill(s2[t], 0f);
                }
                long a0 = 2L * r * cols, b0 = 2L * (r + ROWS) * cols;
                switch (tokens) {
                    case 1 -> {
                        if (bf16) {
                            bf16OneTwoGroups(copy, a0, b0, cols, x, s[0], s2[0]);
                        } else {
                            f16OneTwoGroups(copy, a0, b0, cols, x, s[0], s2[0]);
                        }
                    }
                    case 2 -> f16TwoTwoGroups(copy, a0, b0, cols, x, s[0], s[1], s2[0], s2[1]);
                    default -> f16ThreeTwoGroups(copy, a0, b0, cols, x, s[0], s[1], s[2], s2[0], s2[1], s2[2]);
                }
                for (int t = 0; t < tokens; t++) {
                    System.arraycopy(s[t], 0, out, t * outStride + r, ROWS);
                    System.arraycopy(s2[t], 0, out, t * outStride + r + ROWS, ROWS);
                }
                r += 2 * ROWS;
                continue;
            }
            int g0 = r / ROWS * ROWS;
            int n = Math.min(ROWS, rows - g0);    // the group's rows
            int end = Math.min(rowEnd, g0 + n);
            long base = 2L * g0 * cols;
            int from = r - g0, to = end - g0;
            for (int t = 0; t < tokens; t++) {
                Arrays.fill(s[t], from, to, 0f);
            }
            if (bf16) {
                // tokens in pairs, a pass over the group each
                int t = 0;
                for (; t + 2 <= tokens; t += 2) {
                    bf16Two(copy, base, n, cols, from, to, x, t * cols, s[t], s[t + 1]);
                }
                if (t < tokens) {
                    bf16One(copy, base, n, cols, from, to, x, t * cols, s[t]);
                }
            } else {
                switch (tokens) { // all the tokens in one pass
                    case 1 -> f16One(copy, base, n, cols, from, to, x, s[0]);
                    case 2 -> f16Two(copy, base, n, cols, from, to, x, s[0], s[1]);
                    default -> f16Three(copy, base, n, cols, from, to, x, s[0], s[1], s[2]);
                }
            }
            for (int t = 0; t < tokens; t++) {
                System.arraycopy(s[t], from, out, t * outStride + r, to - from);
            }
            r = end;
        }
    }

    /** Columns of a group the many-token kernel widens at a time: {@code KC * ROWS} floats (32 KiB) stay in L1. */
    static final int KC = 32;

    /** Tokens the many-token kernel multiplies at a time: four accumulators a row vector. */
    private static final int TOKEN_GROUP = 4;

    /** The most tokens {@link #multiplyMany} takes: fewer than the panels'. */
    static final int MANY_TOKENS = WeightMatrix.PANEL_TOKENS - 1;

    /**
     * Each thread's widened columns and many-token sums ({@code t * ROWS + r}, for up to
     * {@link #MANY_TOKENS} tokens rounded up to a multiple of four).
     */
    private static final ThreadLocal<float[][]> MANY = ThreadLocal.withInitial(() -> new float[][] {
        new float[KC * ROWS], new float[(MANY_TOKENS + TOKEN_GROUP - 1) / TOKEN_GROUP * TOKEN_GROUP * ROWS]});

    /**
     * As {@link #multiply}, for up to {@link #MANY_TOKENS} tokens, in the same order:
     * each group's columns {@link #KC} at a time widened by {@code widener} (the format's kernel) into
     * the thread's buffer, then four row vectors ({@code 4L} rows) against four tokens at a time, in
     * registers, over those columns (a weight vector loaded once for four FMAs; the column loops above
     * load and store each token's sums at every column). A last group of one or two tokens takes kernels
     * of its own (five tokens, padded to eight, 141 against 128 us; four 95; 1024 x 1024 in cache, one thread;
     * out of cache 5632 x 2048 2,826 against 2,668); of three, and the rows past the last four vectors, are
     * computed with the last token's input again into sums nobody reads.
     */
    static void multiplyMany(RowKernel widener, MemorySegment copy, int rows, int cols, float[] x, int tokens,
            int rowStart, int rowEnd, float[] out, int outStride) {
        if (tokens < 1 || tokens > MANY_TOKENS) {
            throw new IllegalArgumentException("tokens " + tokens + " not in 1.." + MANY_TOKENS);
        }
        float[][] many = MANY.get();
        float[] wide = many[0];
        float[] acc = many[1];
        int l = F.length();
        int padded = (tokens + TOKEN_GROUP - 1) / TOKEN_GROUP * TOKEN_GROUP;
        for (int r = rowStart; r < rowEnd; ) {
            int g0 = r / ROWS * ROWS;
            int n = Math.min(ROWS, rows - g0);
            int end = Math.min(rowEnd, g0 + n);
            long base = 2L * g0 * cols;
            int from = r - g0, to = end - g0;
            for (int t = 0; t < padded; t++) {
                Arrays.fill(acc, t * ROWS + from, t * ROWS + to, 0f);
            }
            for (int k0 = 0; k0 < cols; k0 += KC) {
                int kn = Math.min(KC, cols - k0);
                widener.dequantize(copy, base + 2L * k0 * n, wide, 0, kn * n);
                for (int t0 = 0; t0 < padded; t0 += TOKEN_GROUP) {
                    // the four tokens' inputs, from column k0: past the last token, the last token's again
                    int x0 = Math.min(t0, tokens - 1) * cols + k0, x1 = Math.min(t0 + 1, tokens - 1) * cols + k0;
                    int x2 = Math.min(t0 + 2, tokens - 1) * cols + k0, x3 = Math.min(t0 + 3, tokens - 1) * cols + k0;
                    int a = t0 * ROWS;
                    int i = from;
                    int nt = Math.min(TOKEN_GROUP, tokens - t0);
                    for (; i + 4 * l <= to; i += 4 * l) {
                        switch (nt) { // a last group of one or two tokens without the padding's FMAs
                            case 1 -> rows4x1(wide, n, i, kn, x, x0, acc, a + i);
                            case 2 -> rows4x2(wide, n, i, kn, x, x0, x1, acc, a + i);
                            default -> rows4(wide, n, i, kn, x, x0, x1, x2, x3, acc, a + i);
                        }
                    }
                    for (; i + l <= to; i += l) {
                        rows1(wide, n, i, kn, x, x0, x1, x2, x3, acc, a + i);
                    }
                    for (; i < to; i++) { // the rows past the last whole vector, the same chains one by one
                        for (int k = 0; k < kn; k++) {
                            float w = wide[k * n + i];
                            acc[a + i] = Math.fma(w, x[x0 + k], acc[a + i]);
                            acc[a + ROWS + i] = Math.fma(w, x[x1 + k], acc[a + ROWS + i]);
                            acc[a + 2 * ROWS + i] = Math.fma(w, x[x2 + k], acc[a + 2 * ROWS + i]);
                            acc[a + 3 * ROWS + i] = Math.fma(w, x[x3 + k], acc[a + 3 * ROWS + i]);
                        }
                    }
                }
            }
            for (int t = 0; t < tokens; t++) {
                System.arraycopy(acc, t * ROWS + from, out, t * outStride + r, to - from);
            }
            r = end;
        }
    }

    /**
     * Rows {@code [i, i + 4L)} of a widened block ({@code kn} columns of {@code n} floats) against four
     * tokens' inputs, their sums at {@code acc[at + j * ROWS]} for token {@code j}: sixteen accumulators.
     */
    private static void rows4(float[] w, int n, int i, int kn, float[] x, int x0, int x1, int x2, int x3, float[] acc,
            int at) {
        int l = F.length();
        int b = at + ROWS, c = b + ROWS, d = c + ROWS;
        FloatVector a00 = FloatVector.fromArray(F, acc, at), a01 = FloatVector.fromArray(F, acc, at + l);
        FloatVector a02 = FloatVector.fromArray(F, acc, at + 2 * l), a03 = FloatVector.fromArray(F, acc, at + 3 * l);
        FloatVector a10 = FloatVector.fromArray(F, acc, b), a11 = FloatVector.fromArray(F, acc, b + l);
        FloatVector a12 = FloatVector.fromArray(F, acc, b + 2 * l), a13 = FloatVector.fromArray(F, acc, b + 3 * l);
        FloatVector a20 = FloatVector.fromArray(F, acc, c), a21 = FloatVector.fromArray(F, acc, c + l);
        FloatVector a22 = FloatVector.fromArray(F, acc, c + 2 * l), a23 = FloatVector.fromArray(F, acc, c + 3 * l);
        FloatVector a30 = FloatVector.fromArray(F, acc, d), a31 = FloatVector.fromArray(F, acc, d + l);
        FloatVector a32 = FloatVector.fromArray(F, acc, d + 2 * l), a33 = FloatVector.fromArray(F, acc, d + 3 * l);
        for (int k = 0; k < kn; k++) {
            int p = k * n + i;
            FloatVector w0 = FloatVector.fromArray(F, w, p), w1 = FloatVector.fromArray(F, w, p + l);
            FloatVector w2 = FloatVector.fromArray(F, w, p + 2 * l), w3 = FloatVector.fromArray(F, w, p + 3 * l);
            FloatVector v = FloatVector.broadcast(F, x[x0 + k]);
            a00 = w0.fma(v, a00);
            a01 = w1.fma(v, a01);
            a02 = w2.fma(v, a02);
            a03 = w3.fma(v, a03);
            v = FloatVector.broadcast(F, x[x1 + k]);
            a10 = w0.fma(v, a10);
            a11 = w1.fma(v, a11);
            a12 = w2.fma(v, a12);
            a13 = w3.fma(v, a13);
            v = FloatVector.broadcast(F, x[x2 + k]);
            a20 = w0.fma(v, a20);
            a21 = w1.fma(v, a21);
            a22 = w2.fma(v, a22);
            a23 = w3.fma(v, a23);
            v = FloatVector.broadcast(F, x[x3 + k]);
            a30 = w0.fma(v, a30);
            a31 = w1.fma(v, a31);
            a32 = w2.fma(v, a32);
            a33 = w3.fma(v, a33);
        }
        a00.intoArray(acc, at);
        a01.intoArray(acc, at + l);
        a02.intoArray(acc, at + 2 * l);
        a03.intoArray(acc, at + 3 * l);
        a10.intoArray(acc, b);
        a11.intoArray(acc, b + l);
        a12.intoArray(acc, b + 2 * l);
        a13.intoArray(acc, b + 3 * l);
        a20.intoArray(acc, c);
        a21.intoArray(acc, c + l);
        a22.intoArray(acc, c + 2 * l);
        a23.intoArray(acc, c + 3 * l);
        a30.intoArray(acc, d);
        a31.intoArray(acc, d + l);
        a32.intoArray(acc, d + 2 * l);
        a33.intoArray(acc, d + 3 * l);
    }

    /** {@link #rows4} for one token. */
    private static void rows4x1(float[] w, int n, int i, int kn, float[] x, int x0, float[] acc, int at) {
        int l = F.length();
        FloatVector a00 = FloatVector.fromArray(F, acc, at), a01 = FloatVector.fromArray(F, acc, at + l);
        FloatVector a02 = FloatVector.fromArray(F, acc, at + 2 * l), a03 = FloatVector.fromArray(F, acc, at + 3 * l);
        for (int k = 0; k < kn; k++) {
            int p = k * n + i;
            FloatVector v = FloatVector.broadcast(F, x[x0 + k]);
            a00 = FloatVector.fromArray(F, w, p).fma(v, a00);
            a01 = FloatVector.fromArray(F, w, p + l).fma(v, a01);
            a02 = FloatVector.fromArray(F, w, p + 2 * l).fma(v, a02);
            a03 = FloatVector.fromArray(F, w, p + 3 * l).fma(v, a03);
        }
        a00.intoArray(acc, at);
        a01.intoArray(acc, at + l);
        a02.intoArray(acc, at + 2 * l);
        a03.intoArray(acc, at + 3 * l);
    }

    /** {@link #rows4} for two tokens. */
    private static void rows4x2(float[] w, int n, int i, int kn, float[] x, int x0, int x1, float[] acc, int at) {
        int l = F.length();
        int b = at + ROWS;
        FloatVector a00 = FloatVector.fromArray(F, acc, at), a01 = FloatVector.fromArray(F, acc, at + l);
        FloatVector a02 = FloatVector.fromArray(F, acc, at + 2 * l), a03 = FloatVector.fromArray(F, acc, at + 3 * l);
        FloatVector a10 = FloatVector.fromArray(F, acc, b), a11 = FloatVector.fromArray(F, acc, b + l);
        FloatVector a12 = FloatVector.fromArray(F, acc, b + 2 * l), a13 = FloatVector.fromArray(F, acc, b + 3 * l);
        for (int k = 0; k < kn; k++) {
            int p = k * n + i;
            FloatVector w0 = FloatVector.fromArray(F, w, p), w1 = FloatVector.fromArray(F, w, p + l);
            FloatVector w2 = FloatVector.fromArray(F, w, p + 2 * l), w3 = FloatVector.fromArray(F, w, p + 3 * l);
            FloatVector v = FloatVector.broadcast(F, x[x0 + k]);
            a00 = w0.fma(v, a00);
            a01 = w1.fma(v, a01);
            a02 = w2.fma(v, a02);
            a03 = w3.fma(v, a03);
            v = FloatVector.broadcast(F, x[x1 + k]);
            a10 = w0.fma(v, a10);
            a11 = w1.fma(v, a11);
            a12 = w2.fma(v, a12);
            a13 = w3.fma(v, a13);
        }
        a00.intoArray(acc, at);
        a01.intoArray(acc, at + l);
        a02.intoArray(acc, at + 2 * l);
        a03.intoArray(acc, at + 3 * l);
        a10.intoArray(acc, b);
        a11.intoArray(acc, b + l);
        a12.intoArray(acc, b + 2 * l);
        a13.intoArray(acc, b + 3 * l);
    }

    /** {@link #rows4} for one row vector. */
    private static void rows1(float[] w, int n, int i, int kn, float[] x, int x0, int x1, int x2, int x3, float[] acc,
            int at) {
        FloatVector a0 = FloatVector.fromArray(F, acc, at), a1 = FloatVector.fromArray(F, acc, at + ROWS);
        FloatVector a2 = FloatVector.fromArray(F, acc, at + 2 * ROWS), a3 = FloatVector.fromArray(F, acc, at + 3 * ROWS);
        for (int k = 0; k < kn; k++) {
            FloatVector v = FloatVector.fromArray(F, w, k * n + i);
            a0 = v.fma(FloatVector.broadcast(F, x[x0 + k]), a0);
            a1 = v.fma(FloatVector.broadcast(F, x[x1 + k]), a1);
            a2 = v.fma(FloatVector.broadcast(F, x[x2 + k]), a2);
            a3 = v.fma(FloatVector.broadcast(F, x[x3 + k]), a3);
        }
        a0.intoArray(acc, at);
        a1.intoArray(acc, at + ROWS);
        a2.intoArray(acc, at + 2 * ROWS);
        a3.intoArray(acc, at + 3 * ROWS);
    }

    /*
     * A group's rows [from, to) of n against one to three tokens, each token's sums (zeroed by the
     * caller) at s[t][from]. F16: one plain loop a token count, written out as PanelDot's kernels
     * are (one statement a token in one loop body is what C2 vectorizes; counted from 0, since with
     * the loop starting at from it did not vectorize it).
     */

    private static float f16(MemorySegment w, long at) {
        return Float.float16ToFloat(w.get(Bytes.SHORT, at));
    }

    private static void f16One(MemorySegment w, long base, int n, int cols, int from, int to, float[] x, float[] a) {
        int m = to - from;
        for (int k = 0; k < cols; k++) {
            float x0 = x[k];
            long col = base + 2L * ((long) k * n + from);
            for (int i = 0; i < m; i++) {
                a[from + i] = Math.fma(f16(w, col + 2L * i), x0, a[from + i]);
            }
        }
    }

    /**
     * One token against two whole groups at {@code a0} and {@code b0}, each column of both in one loop: two
     * sequential streams keep more of memory's bandwidth busy than one (one thread, 4096 x 2048 out of cache:
     * 26.6 against 20.6 GB/s). The same chains as {@link #f16One}.
     */
    private static void f16OneTwoGroups(MemorySegment w, long a0, long b0, int cols, float[] x, float[] a, float[] b) {
        for (int k = 0; k < cols; k++) {
            float x0 = x[k];
            long ca = a0 + 2L * k * ROWS, cb = b0 + 2L * k * ROWS;
            for (int i = 0; i < ROWS; i++) {
                a[i] = Math.fma(f16(w, ca + 2L * i), x0, a[i]);
                b[i] = Math.fma(f16(w, cb + 2L * i), x0, b[i]);
            }
        }
    }

    /** {@link #f16Two} against two whole groups at {@code a0} and {@code b0}: two streams. */
    private static void f16TwoTwoGroups(MemorySegment w, long a0, long b0, int cols, float[] x, float[] a, float[] b,
            float[] c, float[] d) {
        for (int k = 0; k < cols; k++) {
            float x0 = x[k], x1 = x[cols + k];
            long ca = a0 + 2L * k * ROWS, cb = b0 + 2L * k * ROWS;
            for (int i = 0; i < ROWS; i++) {
                float v = f16(w, ca + 2L * i), u = f16(w, cb + 2L * i);
                a[i] = Math.fma(v, x0, a[i]);
                b[i] = Math.fma(v, x1, b[i]);
                c[i] = Math.fma(u, x0, c[i]);
                d[i] = Math.fma(u, x1, d[i]);
            }
        }
    }

    /** {@link #f16Three} against two whole groups at {@code a0} and {@code b0}: two streams. */
    private static void f16ThreeTwoGroups(MemorySegment w, long a0, long b0, int cols, float[] x, float[] a, float[] b,
            float[] c, float[] d, float[] e, float[] f) {
        for (int k = 0; k < cols; k++) {
            float x0 = x[k], x1 = x[cols + k], x2 = x[2 * cols + k];
            long ca = a0 + 2L * k * ROWS, cb = b0 + 2L * k * ROWS;
            for (int i = 0; i < ROWS; i++) {
                float v = f16(w, ca + 2L * i), u = f16(w, cb + 2L * i);
                a[i] = Math.fma(v, x0, a[i]);
                b[i] = Math.fma(v, x1, b[i]);
                c[i] = Math.fma(v, x2, c[i]);
                d[i] = Math.fma(u, x0, d[i]);
                e[i] = Math.fma(u, x1, e[i]);
                f[i] = Math.fma(u, x2, f[i]);
            }
        }
    }

    private static void f16Two(MemorySegment w, long base, int n, int cols, int from, int to, float[] x, float[] a,
            float[] b) {
        int m = to - from;
        for (int k = 0; k < cols; k++) {
            float x0 = x[k], x1 = x[cols + k];
            long col = base + 2L * ((long) k * n + from);
            for (int i = 0; i < m; i++) {
                float v = f16(w, col + 2L * i);
                a[from + i] = Math.fma(v, x0, a[from + i]);
                b[from + i] = Math.fma(v, x1, b[from + i]);
            }
        }
    }

    private static void f16Three(MemorySegment w, long base, int n, int cols, int from, int to, float[] x,
            float[] a, float[] b, float[] c) {
        int m = to - from;
        for (int k = 0; k < cols; k++) {
            float x0 = x[k], x1 = x[cols + k], x2 = x[2 * cols + k];
            long col = base + 2L * ((long) k * n + from);
            for (int i = 0; i < m; i++) {
                float v = f16(w, col + 2L * i);
                a[from + i] = Math.fma(v, x0, a[from + i]);
                b[from + i] = Math.fma(v, x1, b[from + i]);
                c[from + i] = Math.fma(v, x2, c[from + i]);
            }
        }
    }

    /*
     * BF16: the same sums in the lanes (a bfloat16 widens by a shift), the rows past the last whole
     * vector one by one with the same fma.
     */

    /** {@code L} bfloat16 values at {@code at} as floats. */
    private static FloatVector bf16(MemorySegment w, long at) {
        IntVector h = (IntVector) ShortVector.fromMemorySegment(W.shorts(), w, at, LE).castShape(W.ints(), 0);
        return h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats(); // the sign extension shifted out
    }

    private static float bf16At(MemorySegment w, long at) {
        return BF16Format.toFloat(w.get(Bytes.SHORT, at));
    }

    /** One token, its input at {@code x[xt]}. */
    private static void bf16One(MemorySegment w, long base, int n, int cols, int from, int to, float[] x, int xt,
            float[] a) {
        int m = to - from;
        int l = F.length();
        int end = F.loopBound(m);
        for (int k = 0; k < cols; k++) {
            FloatVector x0 = FloatVector.broadcast(F, x[xt + k]);
            long col = base + 2L * ((long) k * n + from);
            for (int i = 0; i < end; i += l) {
                bf16(w, col + 2L * i).fma(x0, FloatVector.fromArray(F, a, from + i)).intoArray(a, from + i);
            }
            for (int i = end; i < m; i++) {
                a[from + i] = Math.fma(bf16At(w, col + 2L * i), x[xt + k], a[from + i]);
            }
        }
    }

    /** {@link #f16OneTwoGroups} for BF16: one token ({@code x[0, cols)}) against two whole groups. */
    private static void bf16OneTwoGroups(MemorySegment w, long a0, long b0, int cols, float[] x, float[] a, float[] b) {
        int l = F.length();
        for (int k = 0; k < cols; k++) {
            FloatVector x0 = FloatVector.broadcast(F, x[k]);
            long ca = a0 + 2L * k * ROWS, cb = b0 + 2L * k * ROWS;
            for (int i = 0; i < ROWS; i += l) {
                bf16(w, ca + 2L * i).fma(x0, FloatVector.fromArray(F, a, i)).intoArray(a, i);
                bf16(w, cb + 2L * i).fma(x0, FloatVector.fromArray(F, b, i)).intoArray(b, i);
            }
        }
    }

    /** Two tokens, their inputs at {@code x[xt]} and {@code x[xt + cols]}. */
    private static void bf16Two(MemorySegment w, long base, int n, int cols, int from, int to, float[] x, int xt,
            float[] a, float[] b) {
        int m = to - from;
        int l = F.length();
        int end = F.loopBound(m);
        for (int k = 0; k < cols; k++) {
            FloatVector x0 = FloatVector.broadcast(F, x[xt + k]), x1 = FloatVector.broadcast(F, x[xt + cols + k]);
            long col = base + 2L * ((long) k * n + from);
            for (int i = 0; i < end; i += l) {
                FloatVector v = bf16(w, col + 2L * i);
                v.fma(x0, FloatVector.fromArray(F, a, from + i)).intoArray(a, from + i);
                v.fma(x1, FloatVector.fromArray(F, b, from + i)).intoArray(b, from + i);
            }
            for (int i = end; i < m; i++) {
                float v = bf16At(w, col + 2L * i);
                a[from + i] = Math.fma(v, x[xt + k], a[from + i]);
                b[from + i] = Math.fma(v, x[xt + cols + k], b[from + i]);
            }
        }
    }
}
