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
 * in blocks of {@link #ROWS} rows ({@code 4L}), each block's columns one after the other ({@code ROWS} 16-bit values each, in {@link #slot} order; a last block short
 * of rows padded with zeros). A matmul walks a block front to back with its rows in four vectors of
 * accumulators a token, up to {@link #PASS} tokens at once: each column's weights are loaded and
 * widened once and serve every token of the pass ({@code acc = fma(w, x[k], acc)}), in registers;
 * more tokens take more passes over the block (from L2). One token walks two blocks in one loop.
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
 * <p>Why: the copy this replaces (groups of 256 rows, plain loops C2 vectorized to
 * {@code vcvtph2ps}, the sums in arrays) loaded and stored each token's sums at every column, so
 * beyond three tokens it widened 32 columns into a buffer and multiplied that, which read memory
 * only while it widened. 1.1B F16, two threads, one sequence with 200 tokens of context, ms a step
 * of 1 / 2 / 3 / 4 / 5 tokens (a decode and a verification of 1-4 drafts; AMD EPYC, 2026-12-06, the
 * two in turn): 57.8 / 82.6 / 107.1 / 114.8 / 134.9 before, 45.5 / 59.9 / 58.9 / 61.1 / 65.5 here;
 * 110M F16 7.7 / 10.5 / 13.1 / 14.0 / 16.5 against 5.1 / 6.6 / 7.0 / 7.2 / 8.5. The loads of one
 * token's decode leave the cores idle enough for four more tokens' FMAs, which is what a
 * speculative verification and a small batch's decode step need. (A first version that widened
 * each vector with a conversion of 16-bit lanes to ints and a multiply passed C2's node budget in
 * the two-block loop, {@code NodeCountInliningCutoff}, and its vectors went to the heap; so did a
 * helper that took vectors as arguments to store them.)
 *
 * <p>Order: each (row, token) is one FMA chain over the columns in order from zero, which is
 * {@code PanelDot}'s order: a token gets the same bits here (any count up to {@link #MAX_TOKENS},
 * in any pass, alone or in the two-block loop), in the panels (more tokens), alone or with others, on any row range (the rows do not interact; a block a range cuts
 * is computed whole). The inputs are the format's {@link MatmulInput.Form} values (rounded to halves
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
     * Rows per block: four vectors, the accumulators of a token. Threads split a matmul on the blocks
     * ({@link WeightMatrix#rowAlignment}), so a 768-row matrix splits evenly on two threads (the
     * 256-row groups before this split it 256 / 512).
     */
    static final int ROWS = 4 * L;

    /**
     * The most tokens one pass over a block takes: {@code 4 * PASS} accumulators, four weight
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

    /** Each thread's sums: {@code acc[t * ROWS + r]}. */
    private static final ThreadLocal<float[]> ACC = ThreadLocal.withInitial(() -> new float[MAX_TOKENS * ROWS]);

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
     * first {@code 2L} values' int lanes and {@code [L, 2L)} in their high halves, then the same for
     * rows {@code [2L, 4L)}, so that one int load serves two vectors of rows ({@link #low}, {@link #high}).
     */
    static int slot(int j) {
        return j / (2 * L) * 2 * L + 2 * (j % L) + j / L % 2;
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
        int b = first;
        if (tokens == 1) {
            // blocks i and i + half of the range in one loop: two streams
            int half = (end - first) / 2;
            for (; b < first + half; b++) {
                int r0 = b * ROWS, r1 = (b + half) * ROWS;
                pass1TwoBlocks(copy, 2L * r0 * cols, 2L * r1 * cols, cols, x, acc, shift, mask, scale);
                emit(acc, 0, r0, 1, rowStart, rowEnd, out, outStride);
                emit(acc, ROWS, r1, 1, rowStart, rowEnd, out, outStride);
            }
            b += half;
        }
        int passes = (tokens + PASS - 1) / PASS;
        for (; b < end; b++) {
            int r0 = b * ROWS;
            long p = 2L * r0 * cols;
            int t0 = 0;
            for (int pass = 0; pass < passes; pass++) {
                int n = (tokens - t0) / (passes - pass); // the tokens as evenly over the passes as they go
                int xt = t0 * cols;
                int a = t0 * ROWS;
                switch (n) {
                    case 1 -> pass1(copy, p, cols, x, xt, acc, a, shift, mask, scale);
                    case 2 -> pass2(copy, p, cols, x, xt, cols, acc, a, shift, mask, scale);
                    case 3 -> pass3(copy, p, cols, x, xt, cols, acc, a, shift, mask, scale);
                    case 4 -> pass4(copy, p, cols, x, xt, cols, acc, a, shift, mask, scale);
                    default -> pass5(copy, p, cols, x, xt, cols, acc, a, shift, mask, scale);
                }
                t0 += n;
            }
            emit(acc, 0, r0, tokens, rowStart, rowEnd, out, outStride);
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
     * The passes: kn columns of a block from p (a column every 2 * ROWS bytes) against n tokens, token
     * j's input at x[xt + j * xs + k] (times scale, the weights' missing factor), its sums into
     * acc[a + j * ROWS, + ROWS). One method a token count, each token's four chains written out: C2
     * keeps vectors in registers only where no array of them exists, and where no call that is not
     * inlined takes them.
     */

    private static void pass1(MemorySegment c, long p, int kn, float[] x, int xt, float[] acc, int a,
            int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        FloatVector a2 = a0, a3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS) {
            FloatVector v = FloatVector.broadcast(F, x[xt + k] * scale);
            IntVector u = load(c, p), z = load(c, p + 4 * L);
            a0 = low(u, shift, mask).fma(v, a0);
            a1 = high(u, shift, mask).fma(v, a1);
            a2 = low(z, shift, mask).fma(v, a2);
            a3 = high(z, shift, mask).fma(v, a3);
        }
        a0.intoArray(acc, a);
        a1.intoArray(acc, a + L);
        a2.intoArray(acc, a + 2 * L);
        a3.intoArray(acc, a + 3 * L);
    }

    /**
     * One token against the blocks at {@code p} and {@code q}, each column of both in one loop: two
     * sequential streams keep more of memory's bandwidth busy than one (1.1B F16 decode, two threads,
     * {@code bench/models/verify.sh}, alternated: 33.0-34.5 ms a token, against 51.0-54.6 with
     * {@link #pass1} on one block at a time, and 43-47 for two tokens on one). Their sums at
     * {@code acc[0, ROWS)} and {@code acc[ROWS, 2 ROWS)}; the same chains as {@link #pass1}. Two tokens
     * the same way passed C2's node budget ({@code NodeCountInliningCutoff}) and ran 8x slower.
     */
    private static void pass1TwoBlocks(MemorySegment c, long p, long q, int kn, float[] x, float[] acc,
            int shift, int mask, float scale) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS, q += 2 * ROWS) {
            FloatVector v = FloatVector.broadcast(F, x[k] * scale);
            IntVector u = load(c, p), z = load(c, p + 4 * L), s = load(c, q), t = load(c, q + 4 * L);
            a0 = low(u, shift, mask).fma(v, a0);
            b0 = low(s, shift, mask).fma(v, b0);
            a1 = high(u, shift, mask).fma(v, a1);
            b1 = high(s, shift, mask).fma(v, b1);
            a2 = low(z, shift, mask).fma(v, a2);
            b2 = low(t, shift, mask).fma(v, b2);
            a3 = high(z, shift, mask).fma(v, a3);
            b3 = high(t, shift, mask).fma(v, b3);
        }
        a0.intoArray(acc, 0);
        a1.intoArray(acc, L);
        a2.intoArray(acc, 2 * L);
        a3.intoArray(acc, 3 * L);
        b0.intoArray(acc, ROWS);
        b1.intoArray(acc, ROWS + L);
        b2.intoArray(acc, ROWS + 2 * L);
        b3.intoArray(acc, ROWS + 3 * L);
    }

    private static void pass2(MemorySegment c, long p, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        int b = a + ROWS;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        FloatVector a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0;
        FloatVector b2 = a0, b3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS) {
            IntVector u = load(c, p), z = load(c, p + 4 * L);
            FloatVector w0 = low(u, shift, mask), w1 = high(u, shift, mask);
            FloatVector w2 = low(z, shift, mask), w3 = high(z, shift, mask);
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
        a2.intoArray(acc, a + 2 * L);
        a3.intoArray(acc, a + 3 * L);
        b0.intoArray(acc, b);
        b1.intoArray(acc, b + L);
        b2.intoArray(acc, b + 2 * L);
        b3.intoArray(acc, b + 3 * L);
    }

    private static void pass3(MemorySegment c, long p, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        int b = a + ROWS, d = b + ROWS;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        FloatVector a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0;
        FloatVector b2 = a0, b3 = a0;
        FloatVector d0 = a0, d1 = a0;
        FloatVector d2 = a0, d3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS) {
            IntVector u = load(c, p), z = load(c, p + 4 * L);
            FloatVector w0 = low(u, shift, mask), w1 = high(u, shift, mask);
            FloatVector w2 = low(z, shift, mask), w3 = high(z, shift, mask);
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
        a2.intoArray(acc, a + 2 * L);
        a3.intoArray(acc, a + 3 * L);
        b0.intoArray(acc, b);
        b1.intoArray(acc, b + L);
        b2.intoArray(acc, b + 2 * L);
        b3.intoArray(acc, b + 3 * L);
        d0.intoArray(acc, d);
        d1.intoArray(acc, d + L);
        d2.intoArray(acc, d + 2 * L);
        d3.intoArray(acc, d + 3 * L);
    }

    private static void pass4(MemorySegment c, long p, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        int b = a + ROWS, d = b + ROWS, e = d + ROWS;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        FloatVector a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0;
        FloatVector b2 = a0, b3 = a0;
        FloatVector d0 = a0, d1 = a0;
        FloatVector d2 = a0, d3 = a0;
        FloatVector e0 = a0, e1 = a0;
        FloatVector e2 = a0, e3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS) {
            IntVector u = load(c, p), z = load(c, p + 4 * L);
            FloatVector w0 = low(u, shift, mask), w1 = high(u, shift, mask);
            FloatVector w2 = low(z, shift, mask), w3 = high(z, shift, mask);
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
        a2.intoArray(acc, a + 2 * L);
        a3.intoArray(acc, a + 3 * L);
        b0.intoArray(acc, b);
        b1.intoArray(acc, b + L);
        b2.intoArray(acc, b + 2 * L);
        b3.intoArray(acc, b + 3 * L);
        d0.intoArray(acc, d);
        d1.intoArray(acc, d + L);
        d2.intoArray(acc, d + 2 * L);
        d3.intoArray(acc, d + 3 * L);
        e0.intoArray(acc, e);
        e1.intoArray(acc, e + L);
        e2.intoArray(acc, e + 2 * L);
        e3.intoArray(acc, e + 3 * L);
    }

    private static void pass5(MemorySegment c, long p, int kn, float[] x, int xt, int xs, float[] acc, int a,
            int shift, int mask, float scale) {
        int b = a + ROWS, d = b + ROWS, e = d + ROWS, f = e + ROWS;
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        FloatVector a2 = a0, a3 = a0;
        FloatVector b0 = a0, b1 = a0;
        FloatVector b2 = a0, b3 = a0;
        FloatVector d0 = a0, d1 = a0;
        FloatVector d2 = a0, d3 = a0;
        FloatVector e0 = a0, e1 = a0;
        FloatVector e2 = a0, e3 = a0;
        FloatVector f0 = a0, f1 = a0;
        FloatVector f2 = a0, f3 = a0;
        for (int k = 0; k < kn; k++, p += 2 * ROWS) {
            IntVector u = load(c, p), z = load(c, p + 4 * L);
            FloatVector w0 = low(u, shift, mask), w1 = high(u, shift, mask);
            FloatVector w2 = low(z, shift, mask), w3 = high(z, shift, mask);
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
        a2.intoArray(acc, a + 2 * L);
        a3.intoArray(acc, a + 3 * L);
        b0.intoArray(acc, b);
        b1.intoArray(acc, b + L);
        b2.intoArray(acc, b + 2 * L);
        b3.intoArray(acc, b + 3 * L);
        d0.intoArray(acc, d);
        d1.intoArray(acc, d + L);
        d2.intoArray(acc, d + 2 * L);
        d3.intoArray(acc, d + 3 * L);
        e0.intoArray(acc, e);
        e1.intoArray(acc, e + L);
        e2.intoArray(acc, e + 2 * L);
        e3.intoArray(acc, e + 3 * L);
        f0.intoArray(acc, f);
        f1.intoArray(acc, f + L);
        f2.intoArray(acc, f + 2 * L);
        f3.intoArray(acc, f + 3 * L);
    }
}
