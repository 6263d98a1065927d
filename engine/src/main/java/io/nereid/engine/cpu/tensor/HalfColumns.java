package io.nereid.engine.cpu.tensor;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.mmap.HugePages;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * F16 and BF16 matrices for the matmuls of up to {@link #MAX_TOKENS} tokens in the faster order (a
 * decode step of that many sequences, a speculative verification, a short prompt chunk), from a copy
 * in blocks of {@link #ROWS} rows ({@code 2L}), each block's columns one after the other ({@code ROWS}
 * 16-bit values each, in {@link #slot} order, 64 bytes at 512 bits; a last block short of rows padded
 * with zeros). A pass walks two blocks front to back in one loop (two memory streams), each block's
 * rows in two vectors of accumulators a token, up to {@link #PASS} tokens at once: each column's
 * weights are loaded and widened once and serve every token of the pass
 * ({@code acc = fma(w, x[k], acc)}), in registers; more tokens take more passes over the blocks (from
 * L2). One token walks four blocks a loop (four streams).
 *
 * <p>Widening in the lanes (the Vector API has no half-float lanes; {@code vcvtph2ps} is reached
 * only by C2's auto-vectorized loops, whose sums live in arrays): an int lane holds two values, one
 * of each of two row vectors. A half in the high 16 bits, shifted right by 3 (arithmetic) and
 * masked to the sign and the 15 bits below it ({@code 0x8FFFE000}), is a float {@code 2^-112} times
 * the half (its exponent rebiased by the shift; a subnormal half lands on a float of the same
 * significand, subnormal or not); the half in the low 16 bits takes one shift left first. The
 * factor goes on the input instead, {@code x * 2^112}, exact for the half-rounded inputs (at most
 * 65504, so below {@code 2^128}), and an FMA rounds {@code (w 2^-112)(x 2^112) + acc} as it rounds
 * {@code w x + acc}: the bits are those of the widened weights. Two or three integer operations a
 * vector. Infinities and NaNs would come out finite, so an F16 matrix holding one gets no copy
 * ({@link #pack} answers null) and takes the row kernels. A bfloat16 is the same with a shift of 0,
 * a mask that clears the low half and no factor: one kernel for both formats.
 *
 * <p>Why: the copy before these (groups of 256 rows, plain loops C2 vectorized to {@code vcvtph2ps},
 * the sums in arrays) loaded and stored each token's sums at every column, so beyond three tokens it
 * widened 32 columns into a buffer and multiplied that, which read memory only while it widened. 1.1B
 * F16, two threads, one sequence with 200 tokens of context, ms a step of 1 / 2 / 3 / 4 / 5 tokens (a
 * decode and a verification of 1-4 drafts; AMD EPYC, 2026-12-06, the builds in turn): 57.8 / 82.6 /
 * 107.1 / 114.8 / 134.9 with that copy; 45.5 / 59.9 / 58.9 / 61.1 / 65.5 with blocks of 4L rows, one
 * stream a pass and two for one token; with these blocks of 2L rows, two streams a pass and four for one
 * token, over three alternations against that: 35.7-42.0 / 44.5-54.6 / 47.5-59.8 / 51.1-63.0 /
 * 53.6-69.5 against 41.5-57.2 / 58.6-83.5 / 61.1-81.4 / 62.9-84.1 / 66.4-85.1 (the VM's speed drifts
 * within minutes). A token's decode is bound by memory, and one stream a core left it idle: one token on
 * one stream took 51.0-54.6 ms where two took 33.0-34.5. (A first version that widened each vector with
 * a conversion of 16-bit lanes to ints and a multiply passed C2's node budget in a two-block loop,
 * {@code NodeCountInliningCutoff}, and its vectors went to the heap; so did a helper that took vectors
 * as arguments to store them, and a two-block loop over blocks of 4L rows for two tokens.)
 *
 * <p>Order: each (row, token) is one FMA chain over the columns in order from zero, which is
 * {@code PanelDot}'s order: a token gets the same bits here (any count up to {@link #MAX_TOKENS},
 * in any pass), in the panels (more tokens), alone or with others, on any row range (the rows do not
 * interact; a block a range cuts is computed whole, and a block computed twice gets the same bits). The inputs are the format's {@link MatmulInput.Form} values (rounded to halves
 * or bfloat16, as ggml's dots take them).
 *
 * <p>Thread-safety: the copy is immutable; each thread sums into an array of its own.
 */
final class HalfColumns {

    private static final VectorWidth W = VectorWidth.current();
    private static final VectorSpecies<Float> F = W.floats();
    private static final VectorSpecies<Integer> I = W.ints();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final int L = F.length();

    /**
     * Rows per block: two vectors, one int load a column (64 bytes at 512 bits). Threads split a matmul on
     * the blocks ({@link WeightMatrix#rowAlignment}), so a 768-row matrix splits evenly on two threads.
     */
    static final int ROWS = 2 * L;

    /**
     * The most tokens one pass over two blocks takes: {@code 4 * PASS} accumulators, four weight
     * vectors and a broadcast in 32 registers (512-bit; AVX2 has 16, where C2 spills some).
     */
    static final int PASS = 5;

    /**
     * The most tokens {@link #multiply} takes; more take the panels ({@code PanelDot}, the same order).
     * Each pass streams the block from L2, at about the FMA peak: F16 2048 x 768, one thread, out of
     * cache, against the panels (AMD EPYC, 2026-12-06): 16 tokens 372 against 634 us, 32 856 / 1,060,
     * 40 1,049 / 1,193, 48 1,317 / 1,485, 64 1,576 / 1,397, 128 3,121 / 3,026.
     */
    static final int MAX_TOKENS = 48;

    /** Where a pass's second block's sums start in the thread's array. */
    private static final int Q = MAX_TOKENS * ROWS;

    /**
     * Each thread's sums: {@code acc[t * ROWS + r]} for a pass's first block, from {@link #Q} for its second;
     * block {@code i}'s at {@code acc[i * ROWS]} in the one-token loop over four.
     */
    private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[2 * Q]);

    private HalfColumns() {
    }

    /** Whether {@code type} has this layout. */
    static boolean supports(GgmlType type) {
        return type == GgmlType.F16 || type == GgmlType.BF16;
    }

    /** Bytes of the copy of a {@code rows x cols} matrix: the weights', the last block padded to {@link #ROWS} rows. */
    static long bytes(int rows, int cols) {
        return 2L * blocks(rows) * ROWS * cols;
    }

    private static int blocks(int rows) {
        return (rows + ROWS - 1) / ROWS;
    }

    /**
     * The copy of {@code rows} rows of {@code cols} {@code type} weights at {@code data} (row-major),
     * in new off-heap memory; null for an F16 matrix holding an infinity or a NaN, which the lanes
     * would widen to a finite value.
     */
    static MemorySegment pack(GgmlType type, MemorySegment data, int rows, int cols) {
        MemorySegment copy = HugePages.allocate(bytes(rows, cols)); // zeroed: the padding rows
        AtomicBoolean nonFinite = new AtomicBoolean();
        boolean f16 = type == GgmlType.F16;
        // at load, on the common pool: disjoint blocks
        IntStream.range(0, blocks(rows)).parallel().forEach(b -> {
            int r0 = b * ROWS;
            int n = Math.min(ROWS, rows - r0);
            long base = 2L * r0 * cols;
            short[] row = new short[cols];
            for (int j = 0; j < n; j++) {
                MemorySegment.copy(data, Bytes.SHORT, 2L * (r0 + j) * cols, row, 0, cols);
                for (int k = 0; k < cols; k++) {
                    if (f16 && (row[k] & 0x7C00) == 0x7C00) {
                        nonFinite.set(true);
                    }
                    copy.set(Bytes.SHORT, base + 2L * ((long) k * ROWS + slot(j)), row[k]);
                }
            }
        });
        return nonFinite.get() ? null : copy;
    }

    /**
     * Where row {@code j} of a block lies in a column: rows {@code [0, L)} in the low halves of the
     * column's int lanes and {@code [L, 2L)} in their high halves, so that one int load serves both
     * vectors of rows ({@link #low}, {@link #high}).
     */
    static int slot(int j) {
        return 2 * (j % L) + j / L;
    }

    /**
     * {@code out[t * outStride + r] = W[r] · x[t * cols, (t + 1) * cols)} for
     * {@code t < tokens <= MAX_TOKENS} and rows {@code r} in {@code [rowStart, rowEnd)}, from the
     * copy {@link #pack} made of a {@code type} matrix; the other elements of {@code out} are left as they are.
     */
    static void multiply(GgmlType type, MemorySegment copy, int rows, int cols, float[] x, int tokens, int rowStart,
            int rowEnd, float[] out, int outStride) {
        if (tokens < 1 || tokens > MAX_TOKENS) {
            throw new IllegalArgumentException("tokens " + tokens + " not in 1.." + MAX_TOKENS);
        }
        boolean bf16 = type == GgmlType.BF16;
        int shift = bf16 ? 0 : 3;
        int mask = bf16 ? 0xFFFF0000 : 0x8FFFE000;
        float scale = bf16 ? 1f : 0x1p112f;
        float[] acc = ACC.get();
        int first = rowStart / ROWS, end = (rowEnd + ROWS - 1) / ROWS;
        if (tokens == 1) {
            // blocks b, b + quarter, b + 2 quarter, b + 3 quarter in one loop: four streams (a short range's
            // last blocks run more than once: computed again, the same bits)
            int quarter = (end - first + 3) / 4;
            for (int b = first; b < first + quarter; b++) {
                int b1 = Math.min(b + quarter, end - 1), b2 = Math.min(b + 2 * quarter, end - 1);
                int b3 = Math.min(b + 3 * quarter, end - 1);
                pass1FourBlocks(copy, 2L * b * ROWS * cols, 2L * b1 * ROWS * cols, 2L * b2 * ROWS * cols,
                        2L * b3 * ROWS * cols, cols, x, acc, shift, mask, scale);
                emit(acc, 0, b * ROWS, 1, rowStart, rowEnd, out, outStride);
                emit(acc, ROWS, b1 * ROWS, 1, rowStart, rowEnd, out, outStride);
                emit(acc, 2 * ROWS, b2 * ROWS, 1, rowStart, rowEnd, out, outStride);
                emit(acc, 3 * ROWS, b3 * ROWS, 1, rowStart, rowEnd, out, outStride);
            }
            return;
        }
        int half = (end - first + 1) / 2;   // blocks b and b + half in one loop: two streams
        int passes = (tokens + PASS - 1) / PASS;
        for (int b = first; b < first + half; b++) {
            // an odd count's last block runs against itself: computed twice, written once
            int b2 = Math.min(b + half, end - 1);
            int r0 = b * ROWS, r1 = b2 * ROWS;
            long p = 2L * r0 * cols, q = 2L * r1 * cols;
            int t0 = 0;
            for (int pass = 0; pass < passes; pass++) {
                // the tokens as evenly over the passes as they go: two to five each (one token took the four-block loop)
                int n = (tokens - t0) / (passes - pass);
                int xt = t0 * cols;
                int a = t0 * ROWS;
                switch (n) {
                    case 2 -> pass2(copy, p, q, cols, x, xt, cols, acc, a, shift, mask, scale);
                    case 3 -> pass3(copy, p, q, cols, x, xt, cols, acc, a, shift, mask, scale);
                    case 4 -> pass4(copy, p, q, cols, x, xt, cols, acc, a, shift, mask, scale);
                    default -> pass5(copy, p, q, cols, x, xt, cols, acc, a, shift, mask, scale);
                }
                t0 += n;
            }
            emit(acc, 0, r0, tokens, rowStart, rowEnd, out, outStride);
            if (b2 != b) {
                emit(acc, Q, r1, tokens, rowStart, rowEnd, out, outStride);
            }
        }
    }

    /** The rows of the block at {@code r0} in {@code [rowStart, rowEnd)}: token {@code t}'s from {@code acc[a + t * ROWS]}. */
    private static void emit(float[] acc, int a, int r0, int tokens, int rowStart, int rowEnd, float[] out,
            int outStride) {
        int from = Math.max(rowStart, r0), to = Math.min(rowEnd, r0 + ROWS);
        for (int t = 0; t < tokens; t++) {
            System.arraycopy(acc, a + t * ROWS + from - r0, out, t * outStride + from, to - from);
        }
    }

    /** The {@code L} int lanes at {@code at}: two vectors of rows ({@link #slot}). */
    private static IntVector load(MemorySegment c, long at) {
        return IntVector.fromMemorySegment(I, c, at, LE);
    }

    /**
     * The values in the low halves of {@code v}'s lanes, widened (the class doc): moved to the high
     * half, shifted right (arithmetic) by {@code shift} and masked; F16's times {@code 2^-112}.
     */
    private static FloatVector low(IntVector v, int shift, int mask) {
        return v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, shift)
                .lanewise(VectorOperators.AND, mask).reinterpretAsFloats();
    }

    /** The values in the high halves of {@code v}'s lanes, widened as {@link #low} widens. */
    private static FloatVector high(IntVector v, int shift, int mask) {
        return v.lanewise(VectorOperators.ASHR, shift).lanewise(VectorOperators.AND, mask).reinterpretAsFloats();
    }

    /*
     * The passes of two to five tokens: kn columns of the blocks at p and q (a column every 2 * ROWS bytes, one int load each)
     * against n tokens, token j's input at x[xt + j * xs + k] (times scale, the weights' missing factor),
     * p's sums into acc[a + j * ROWS, + ROWS) and q's into acc[Q + a + j * ROWS, + ROWS). One method a token
     * count, each token's four chains written out: C2 keeps vectors in registers only where no array of
     * them exists, and where no call that is not inlined takes them.
     */

    /**
     * One token against the blocks at {@code p}, {@code q}, {@code r} and {@code s}, each column of all four in
     * one loop (four streams, 256 bytes an iteration); their sums at {@code acc[i * ROWS]} for the i-th. The
     * same chains as a pass of more tokens.
     */
    private static void pass1FourBlocks(MemorySegment c, long p, long q, long r, long s, int kn, float[] x,
            float[] acc, int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, b0 = a0, b1 = a0, d0 = a0, d1 = a0, e0 = a0, e1 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS, q += 2 * ROWS, r += 2 * ROWS, s += 2 * ROWS) {
            FloatVector v = FloatVector.broadcast(F, x[k] * scale);
            IntVector g = load(c, p), h = load(c, q), u = load(c, r), z = load(c, s);
            a0 = low(g, shift, mask).fma(v, a0);
            b0 = low(h, shift, mask).fma(v, b0);
            d0 = low(u, shift, mask).fma(v, d0);
            e0 = low(z, shift, mask).fma(v, e0);
            a1 = high(g, shift, mask).fma(v, a1);
            b1 = high(h, shift, mask).fma(v, b1);
            d1 = high(u, shift, mask).fma(v, d1);
            e1 = high(z, shift, mask).fma(v, e1);
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, L);
        b0.intoArray(acc, ROWS);
        b1.intoArray(acc, ROWS + L);
        d0.intoArray(acc, 2 * ROWS);
        d1.intoArray(acc, 2 * ROWS + L);
        e0.intoArray(acc, 3 * ROWS);
        e1.intoArray(acc, 3 * ROWS + L);
    }

    private static void pass2(MemorySegment c, long p, long q, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = a0, a2 = a0, a3 = a0, b0 = a0;
        FloatVector b1 = a0, b2 = a0, b3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS, q += 2 * ROWS) {
            IntVector g = load(c, p), s = load(c, q);
            FloatVector w0 = low(g, shift, mask), w1 = high(g, shift, mask);
            FloatVector w2 = low(s, shift, mask), w3 = high(s, shift, mask);
            FloatVector v = FloatVector.broadcast(F, x[xt + k] * scale);
            a0 = w0.fma(v, a0);
            a1 = w1.fma(v, a1);
            a2 = w2.fma(v, a2);
            a3 = w3.fma(v, a3);
            v = FloatVector.broadcast(F, x[xt + xs + k] * scale);
            b0 = w0.fma(v, b0);
            b1 = w1.fma(v, b1);
            b2 = w2.fma(v, b2);
            b3 = w3.fma(v, b3);
        }
        a0.intoArray(acc, a);
        a1.intoArray(acc, a + L);
        a2.intoArray(acc, a + Q);
        a3.intoArray(acc, a + Q + L);
        b0.intoArray(acc, a + ROWS);
        b1.intoArray(acc, a + ROWS + L);
        b2.intoArray(acc, a + ROWS + Q);
        b3.intoArray(acc, a + ROWS + Q + L);
    }

    private static void pass3(MemorySegment c, long p, long q, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = a0, a2 = a0, a3 = a0, b0 = a0;
        FloatVector b1 = a0, b2 = a0, b3 = a0, d0 = a0;
        FloatVector d1 = a0, d2 = a0, d3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS, q += 2 * ROWS) {
            IntVector g = load(c, p), s = load(c, q);
            FloatVector w0 = low(g, shift, mask), w1 = high(g, shift, mask);
            FloatVector w2 = low(s, shift, mask), w3 = high(s, shift, mask);
            FloatVector v = FloatVector.broadcast(F, x[xt + k] * scale);
            a0 = w0.fma(v, a0);
            a1 = w1.fma(v, a1);
            a2 = w2.fma(v, a2);
            a3 = w3.fma(v, a3);
            v = FloatVector.broadcast(F, x[xt + xs + k] * scale);
            b0 = w0.fma(v, b0);
            b1 = w1.fma(v, b1);
            b2 = w2.fma(v, b2);
            b3 = w3.fma(v, b3);
            v = FloatVector.broadcast(F, x[xt + 2 * xs + k] * scale);
            d0 = w0.fma(v, d0);
            d1 = w1.fma(v, d1);
            d2 = w2.fma(v, d2);
            d3 = w3.fma(v, d3);
        }
        a0.intoArray(acc, a);
        a1.intoArray(acc, a + L);
        a2.intoArray(acc, a + Q);
        a3.intoArray(acc, a + Q + L);
        b0.intoArray(acc, a + ROWS);
        b1.intoArray(acc, a + ROWS + L);
        b2.intoArray(acc, a + ROWS + Q);
        b3.intoArray(acc, a + ROWS + Q + L);
        d0.intoArray(acc, a + 2 * ROWS);
        d1.intoArray(acc, a + 2 * ROWS + L);
        d2.intoArray(acc, a + 2 * ROWS + Q);
        d3.intoArray(acc, a + 2 * ROWS + Q + L);
    }

    private static void pass4(MemorySegment c, long p, long q, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = a0, a2 = a0, a3 = a0, b0 = a0;
        FloatVector b1 = a0, b2 = a0, b3 = a0, d0 = a0;
        FloatVector d1 = a0, d2 = a0, d3 = a0, e0 = a0;
        FloatVector e1 = a0, e2 = a0, e3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS, q += 2 * ROWS) {
            IntVector g = load(c, p), s = load(c, q);
            FloatVector w0 = low(g, shift, mask), w1 = high(g, shift, mask);
            FloatVector w2 = low(s, shift, mask), w3 = high(s, shift, mask);
            FloatVector v = FloatVector.broadcast(F, x[xt + k] * scale);
            a0 = w0.fma(v, a0);
            a1 = w1.fma(v, a1);
            a2 = w2.fma(v, a2);
            a3 = w3.fma(v, a3);
            v = FloatVector.broadcast(F, x[xt + xs + k] * scale);
            b0 = w0.fma(v, b0);
            b1 = w1.fma(v, b1);
            b2 = w2.fma(v, b2);
            b3 = w3.fma(v, b3);
            v = FloatVector.broadcast(F, x[xt + 2 * xs + k] * scale);
            d0 = w0.fma(v, d0);
            d1 = w1.fma(v, d1);
            d2 = w2.fma(v, d2);
            d3 = w3.fma(v, d3);
            v = FloatVector.broadcast(F, x[xt + 3 * xs + k] * scale);
            e0 = w0.fma(v, e0);
            e1 = w1.fma(v, e1);
            e2 = w2.fma(v, e2);
            e3 = w3.fma(v, e3);
        }
        a0.intoArray(acc, a);
        a1.intoArray(acc, a + L);
        a2.intoArray(acc, a + Q);
        a3.intoArray(acc, a + Q + L);
        b0.intoArray(acc, a + ROWS);
        b1.intoArray(acc, a + ROWS + L);
        b2.intoArray(acc, a + ROWS + Q);
        b3.intoArray(acc, a + ROWS + Q + L);
        d0.intoArray(acc, a + 2 * ROWS);
        d1.intoArray(acc, a + 2 * ROWS + L);
        d2.intoArray(acc, a + 2 * ROWS + Q);
        d3.intoArray(acc, a + 2 * ROWS + Q + L);
        e0.intoArray(acc, a + 3 * ROWS);
        e1.intoArray(acc, a + 3 * ROWS + L);
        e2.intoArray(acc, a + 3 * ROWS + Q);
        e3.intoArray(acc, a + 3 * ROWS + Q + L);
    }

    private static void pass5(MemorySegment c, long p, long q, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F);
        FloatVector a1 = a0, a2 = a0, a3 = a0, b0 = a0;
        FloatVector b1 = a0, b2 = a0, b3 = a0, d0 = a0;
        FloatVector d1 = a0, d2 = a0, d3 = a0, e0 = a0;
        FloatVector e1 = a0, e2 = a0, e3 = a0, f0 = a0;
        FloatVector f1 = a0, f2 = a0, f3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS, q += 2 * ROWS) {
            IntVector g = load(c, p), s = load(c, q);
            FloatVector w0 = low(g, shift, mask), w1 = high(g, shift, mask);
            FloatVector w2 = low(s, shift, mask), w3 = high(s, shift, mask);
            FloatVector v = FloatVector.broadcast(F, x[xt + k] * scale);
            a0 = w0.fma(v, a0);
            a1 = w1.fma(v, a1);
            a2 = w2.fma(v, a2);
            a3 = w3.fma(v, a3);
            v = FloatVector.broadcast(F, x[xt + xs + k] * scale);
            b0 = w0.fma(v, b0);
            b1 = w1.fma(v, b1);
            b2 = w2.fma(v, b2);
            b3 = w3.fma(v, b3);
            v = FloatVector.broadcast(F, x[xt + 2 * xs + k] * scale);
            d0 = w0.fma(v, d0);
            d1 = w1.fma(v, d1);
            d2 = w2.fma(v, d2);
            d3 = w3.fma(v, d3);
            v = FloatVector.broadcast(F, x[xt + 3 * xs + k] * scale);
            e0 = w0.fma(v, e0);
            e1 = w1.fma(v, e1);
            e2 = w2.fma(v, e2);
            e3 = w3.fma(v, e3);
            v = FloatVector.broadcast(F, x[xt + 4 * xs + k] * scale);
            f0 = w0.fma(v, f0);
            f1 = w1.fma(v, f1);
            f2 = w2.fma(v, f2);
            f3 = w3.fma(v, f3);
        }
        a0.intoArray(acc, a);
        a1.intoArray(acc, a + L);
        a2.intoArray(acc, a + Q);
        a3.intoArray(acc, a + Q + L);
        b0.intoArray(acc, a + ROWS);
        b1.intoArray(acc, a + ROWS + L);
        b2.intoArray(acc, a + ROWS + Q);
        b3.intoArray(acc, a + ROWS + Q + L);
        d0.intoArray(acc, a + 2 * ROWS);
        d1.intoArray(acc, a + 2 * ROWS + L);
        d2.intoArray(acc, a + 2 * ROWS + Q);
        d3.intoArray(acc, a + 2 * ROWS + Q + L);
        e0.intoArray(acc, a + 3 * ROWS);
        e1.intoArray(acc, a + 3 * ROWS + L);
        e2.intoArray(acc, a + 3 * ROWS + Q);
        e3.intoArray(acc, a + 3 * ROWS + Q + L);
        f0.intoArray(acc, a + 4 * ROWS);
        f1.intoArray(acc, a + 4 * ROWS + L);
        f2.intoArray(acc, a + 4 * ROWS + Q);
        f3.intoArray(acc, a + 4 * ROWS + Q + L);
    }
}
