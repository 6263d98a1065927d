package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.mmap.HugePages;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.stream.IntStream;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * One token against Q8_0, Q4_0, Q4_K, Q5_K or Q6_K weights with {@link #GROUP} rows in the
 * lanes (two to fifteen: {@link InterleavedPasses}, the same bits): a copy of the matrix interleaved so that one load holds one column of {@code GROUP} rows,
 * multiplied on 16-bit lanes by the input's Q8 integers ({@link MatmulInput.Quants}), each column's
 * integer broadcast once for all the rows. The products are summed on 16-bit lanes for as many
 * columns as cannot overflow there (the 4-bit kernels broadcast the input's integers as ints, {@link #broadcast}), then widened and scaled per block as llama.cpp scales its
 * integer sums. No lane sums: each lane ends as one row's output.
 *
 * <p>Why: the row kernels ({@link RowKernel#dotFast}) widen every weight to a float and end each
 * row in a lane sum; the Vector API has no {@code vpmaddubsw} / {@code vpdpbusd} for a row's
 * integer dot, and an integer dot along a row measured only 1.1-1.3x (bench/MEASUREMENTS.md,
 * "Integer dots"). Across rows, one 16-bit multiply serves {@code 2L} weights and one byte load
 * with one widening serves {@code 4L} nibbles: {@code bench/kernels/InterleavedProbe.java}
 * measured 1024 x 4096 on one thread at 155 against 340 us for Q4_0, 186 against 307 for Q8_0
 * and 175 against 325 for a Q6_K-like layout (512-bit).
 *
 * <p>Exactness: the weights' integers are stored signed ({@code q - 8}, {@code q - 32}; a 4-bit low
 * nibble as it is, its {@code -8} restored by the sum's start, {@link #nibbleSums}) and the
 * input's are in {@code [-127, 127]}, so a product is at most 1016 (4-bit), 2032 (5-bit), 4064
 * (6-bit) or 16256 (8-bit) in magnitude: 32, 16, 8 or 2 of them sum to at most 32512,
 * which 16 bits hold (Q8_0's pairs then go on on int lanes). Each block's integer sum is then
 * exact, and the float steps are llama.cpp's ({@code ggml_vec_dot_q4_0_q8_0} and
 * {@code _q8_0_q8_0}: {@code (d_w * d_x) * sumi}; Q4_K:
 * {@code d * d_x * sum(sc * sumi) - dmin * d_x * sum(m * bsum)}; Q6_K: {@code d * d_x * sum(sc * sumi)}),
 * with the blocks summed in order, one chain per row. A token's results are the same bits
 * whether it runs alone or with up to 14 others ({@link InterleavedPasses}), and on any row range: a group is always
 * computed whole.
 *
 * <p>Layouts, per group of {@code GROUP} rows (group {@code g} at {@code g * groupBytes}), floats
 * little-endian; a column holds row {@code GROUP * g + r} at byte {@link #lane}{@code (r)}, and
 * the scales row {@code GROUP * g + r} at element {@code r}:
 * <ul>
 *   <li>Q8_0, per block of 32 columns: {@code GROUP} floats {@code d}, then 32 columns of
 *       {@code GROUP} bytes (36 bytes per 32 weights; the file has 34);
 *   <li>Q4_0, per block of 32 columns: {@code GROUP} floats {@code d}, then 16 columns of
 *       {@code GROUP} bytes, the byte of row {@code r} in column {@code c} holding its
 *       {@code q[c]} in its low nibble and {@code q[c + 16] - 8} in its high one (20 bytes per
 *       32 weights; the file has 18: the scales as halves, widened in the kernel as
 *       {@link F16Vector} widens them, ran 6x slower for reasons not found);
 *   <li>Q4_K, per super-block of 256: {@code GROUP} floats {@code d}, {@code GROUP} floats
 *       {@code dmin}, then per sub-block of 32 its 6-bit scale and its min ({@code GROUP} bytes
 *       each) and its 16 columns as Q4_0's (152 bytes per 256 weights per row; the file has 144);
 *   <li>Q5_K, as Q4_K but each sub-block's 32 columns are bytes {@code q - 16}, stored in the order
 *       0, 16, 1, 17, ... ({@link #pairOrder}; 280 bytes per 256 weights per row; the file has 176);
 *   <li>Q6_K, per super-block: {@code GROUP} floats {@code d}, then per sub-block of 16 its int8
 *       scale ({@code GROUP} bytes) and its 16 columns of {@code GROUP} bytes {@code q - 32}, stored
 *       in the order 0, 8, 1, 9, ... (276 bytes per 256; the file has 210).
 * </ul>
 * Every layout is in the order its kernel reads it, front to back with no gap: a K-quant
 * super-block that kept its scales and mins ahead of all its columns (read a sub-block at a time,
 * the mins and {@code d} after the columns) streamed from memory at a third of its speed in cache
 * (Q6_K 32,000 x 768 out of cache on one thread 9.7 weights/ns against 31 in cache; laid out in
 * the order it is read, 25-34; AMD EPYC, 2026-12-06; the Q4_0 and Q8_0 layouts, read in order,
 * kept their speed).
 * The copy is made once when a matrix is bound ({@link WeightMatrix}), on top of the data and
 * any other repacked copy: it serves the matmuls of up to 15 tokens in the faster order
 * ({@link WeightMatrix#interleavedTokens}; more than one in {@link InterleavedPasses}' passes, which
 * decode each column once for up to five tokens), so that every token of a decode step, a
 * speculative verification or a small batch gets the bits it gets alone (it served one to four
 * before, and the decoded tiles' bits for five drafts' verification changed 110M Q4_0's greedy
 * output at its 37th token).
 */
final class Interleaved {

    private static final VectorWidth W = VectorWidth.current();
    private static final VectorSpecies<Short> S = W.shortPairs();
    private static final VectorSpecies<Byte> B = W.bytePairs();
    private static final VectorSpecies<Float> F = W.floats();
    private static final VectorSpecies<Integer> I = W.ints();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Rows per group: the 16-bit lanes of a vector, {@code 2L}. */
    static final int GROUP = S.length();

    private static final int L = F.length();

    /** Floats of work space {@link #multiply} takes: four vectors a token of a pass ({@link InterleavedPasses}). */
    static final int WORK = 4 * InterleavedPasses.PASS * L;

    private Interleaved() {
    }

    /** Whether {@code type} has interleaved kernels. */
    static boolean supports(GgmlType type) {
        return type == GgmlType.Q8_0 || type == GgmlType.Q4_0 || type == GgmlType.Q4_K || type == GgmlType.Q5_K
                || type == GgmlType.Q6_K;
    }

    /** Bytes of one group of rows of {@code cols} weights. */
    static long groupBytes(GgmlType type, int cols) {
        return switch (type) {
            case Q8_0 -> (long) cols / 32 * 36 * GROUP;
            case Q4_0 -> (long) cols / 32 * 20 * GROUP;
            case Q4_K -> (long) cols / QK_K * 152 * GROUP;
            case Q5_K -> (long) cols / QK_K * 280 * GROUP;
            case Q6_K -> (long) cols / QK_K * 276 * GROUP;
            default -> throw new IllegalArgumentException(type + " has no interleaved layout");
        };
    }

    /**
     * The first {@code rows / GROUP} groups of the matrix at {@code data} ({@code rows} rows of
     * {@code cols} in the format's own layout) interleaved into a new off-heap segment, freed when
     * it is no longer reachable; rows after the last whole group are left out.
     */
    static MemorySegment pack(GgmlType type, MemorySegment data, int rows, int cols) {
        int groups = rows / GROUP;
        long gb = groupBytes(type, cols);
        MemorySegment il = HugePages.allocate(groups * gb);
        long rowBytes = (long) cols / type.blockSize() * type.bytesPerBlock();
        // at load, on the common pool: ~1 s a thread for 1.1B weights, disjoint groups
        IntStream.range(0, groups).parallel().forEach(g -> {
            long at = g * gb;
            long row0 = (long) g * GROUP * rowBytes;
            switch (type) {
                case Q8_0 -> packQ8_0(data, row0, rowBytes, cols, il, at);
                case Q4_0 -> packQ4_0(data, row0, rowBytes, cols, il, at);
                case Q4_K -> packQ4_K(data, row0, rowBytes, cols, il, at);
                case Q5_K -> packQ5_K(data, row0, rowBytes, cols, il, at);
                case Q6_K -> packQ6_K(data, row0, rowBytes, cols, il, at);
                default -> throw new IllegalArgumentException(type + " has no interleaved layout");
            }
        });
        return il;
    }

    private static void packQ8_0(MemorySegment w, long row0, long rowBytes, int cols, MemorySegment il, long at) {
        for (int b = 0; b < cols / 32; b++) {
            for (int r = 0; r < GROUP; r++) {
                long block = row0 + r * rowBytes + b * 34L;
                il.set(Bytes.FLOAT, at + 4L * r, Bytes.f16(w, block));
                for (int c = 0; c < 32; c++) {
                    Bytes.putByte(il, at + 4L * GROUP + (long) c * GROUP + lane(r), Bytes.s8(w, block + 2 + c));
                }
            }
            at += 36L * GROUP;
        }
    }

    private static void packQ4_0(MemorySegment w, long row0, long rowBytes, int cols, MemorySegment il, long at) {
        for (int b = 0; b < cols / 32; b++) {
            for (int r = 0; r < GROUP; r++) {
                long block = row0 + r * rowBytes + b * 18L;
                il.set(Bytes.FLOAT, at + 4L * r, Bytes.f16(w, block));
                for (int c = 0; c < 16; c++) {
                    int q = Bytes.u8(w, block + 2 + c);
                    Bytes.putByte(il, at + 4L * GROUP + (long) c * GROUP + lane(r), nibbles(q & 0xF, (q >>> 4) - 8));
                }
            }
            at += 20L * GROUP;
        }
    }

    /** A byte of {@code lo} in {@code [0, 16)} and {@code hi} in {@code [-8, 8)}: signed, it is {@code lo + 16 * hi}. */
    private static int nibbles(int lo, int hi) {
        return lo | hi << 4;
    }

    private static void packQ4_K(MemorySegment w, long row0, long rowBytes, int cols, MemorySegment il, long at) {
        for (int sb = 0; sb < cols / QK_K; sb++) {
            for (int r = 0; r < GROUP; r++) {
                long block = row0 + r * rowBytes + sb * (long) Q4_KFormat.BLOCK_BYTES;
                il.set(Bytes.FLOAT, at + 4L * r, Bytes.f16(w, block));
                il.set(Bytes.FLOAT, at + 4L * (GROUP + r), Bytes.f16(w, block + 2));
                for (int j = 0; j < 8; j++) {
                    long sub = at + (8L + 18 * j) * GROUP;
                    Bytes.putByte(il, sub + r, KScales.scale(w, block + 4, j));
                    Bytes.putByte(il, sub + GROUP + r, KScales.min(w, block + 4, j));
                    long columns = sub + 2L * GROUP;
                    long qs = block + 16 + 32L * (j / 2);
                    int shift = 4 * (j % 2);
                    for (int c = 0; c < 16; c++) {
                        int lo = Bytes.u8(w, qs + c) >>> shift & 0xF;
                        int hi = Bytes.u8(w, qs + 16 + c) >>> shift & 0xF;
                        Bytes.putByte(il, columns + (long) c * GROUP + lane(r), nibbles(lo, hi - 8));
                    }
                }
            }
            at += 152L * GROUP;
        }
    }

    private static void packQ5_K(MemorySegment w, long row0, long rowBytes, int cols, MemorySegment il, long at) {
        for (int sb = 0; sb < cols / QK_K; sb++) {
            for (int r = 0; r < GROUP; r++) {
                long block = row0 + r * rowBytes + sb * (long) Q5_KFormat.BLOCK_BYTES;
                il.set(Bytes.FLOAT, at + 4L * r, Bytes.f16(w, block));
                il.set(Bytes.FLOAT, at + 4L * (GROUP + r), Bytes.f16(w, block + 2));
                for (int j = 0; j < 8; j++) {
                    long sub = at + (8L + 34 * j) * GROUP;
                    Bytes.putByte(il, sub + r, KScales.scale(w, block + 4, j));
                    Bytes.putByte(il, sub + GROUP + r, KScales.min(w, block + 4, j));
                    long columns = sub + 2L * GROUP;
                    long qs = block + 48 + 32L * (j / 2);
                    int shift = 4 * (j % 2);
                    for (int c = 0; c < 32; c++) {
                        int q = (Bytes.u8(w, qs + c) >>> shift & 0xF) | (Bytes.u8(w, block + 16 + c) >>> j & 1) << 4;
                        Bytes.putByte(il, columns + (long) pairOrder(c, 16) * GROUP + lane(r), q - 16);
                    }
                }
            }
            at += 280L * GROUP;
        }
    }

    private static void packQ6_K(MemorySegment w, long row0, long rowBytes, int cols, MemorySegment il, long at) {
        for (int sb = 0; sb < cols / QK_K; sb++) {
            for (int r = 0; r < GROUP; r++) {
                long block = row0 + r * rowBytes + sb * (long) Q6_KFormat.BLOCK_BYTES;
                il.set(Bytes.FLOAT, at + 4L * r, Bytes.f16(w, block + 208));
                for (int j = 0; j < 16; j++) {
                    long sub = at + (4L + 17 * j) * GROUP;
                    Bytes.putByte(il, sub + r, Bytes.s8(w, block + 192 + j));
                    long columns = sub + GROUP;
                    for (int c = 0; c < 16; c++) {
                        Bytes.putByte(il, columns + (long) pairOrder(c, 8) * GROUP + lane(r), Q6_KFormat.quant(w, block, 16 * j + c));
                    }
                }
            }
            at += 276L * GROUP;
        }
    }

    /**
     * {@code out[t * outStride + outOff + r]} for {@code t < tokens} and {@code r < GROUP}:
     * group {@code g}'s rows against the tokens of {@code x} (one token here, more in
     * {@link InterleavedPasses}).
     *
     * @param work {@link #WORK} floats at {@code workOff} the kernels may use
     */
    static void multiply(GgmlType type, MemorySegment il, int cols, int g, MatmulInput.Quants x, int tokens,
            float[] out, int outOff, int outStride, float[] work, int workOff) {
        long at = g * groupBytes(type, cols);
        if (tokens > 1) { // each column decoded once for several tokens, on float lanes
            InterleavedPasses.multiply(type, il, at, cols, x, tokens, out, outOff, outStride, work, workOff);
            return;
        }
        switch (type) {
            case Q8_0 -> q8_0(il, at, cols, x, out, outOff);
            case Q4_0 -> q4_0(il, at, cols, x, out, outOff);
            case Q4_K -> q4_K(il, at, cols, x, out, outOff, work, workOff);
            case Q5_K -> q5_K(il, at, cols, x, out, outOff, work, workOff);
            default -> q6_K(il, at, cols, x, out, outOff, work, workOff);
        }
    }

    private static ShortVector column(MemorySegment il, long at) {
        return (ShortVector) ByteVector.fromMemorySegment(B, il, at, LE).convertShape(VectorOperators.B2S, S, 0);
    }

    /** The {@code L} signed bytes at {@code at} as floats: the K-quants' integer scales and mins. */
    private static FloatVector bytes(MemorySegment il, long at) {
        return W.toFloats(W.loadBytes(il, at));
    }

    private static FloatVector floats(MemorySegment il, long at) {
        return FloatVector.fromMemorySegment(F, il, at, LE);
    }

    private static FloatVector toFloat(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    /**
     * Rows {@code [0, L)} (part 0) or {@code [L, 2L)} (part 1) of 16-bit sums on int lanes. The
     * columns hold row {@code r} at {@link #lane}{@code (r)}: the even lanes are the first rows and
     * the odd ones the others, so each half is two shifts of the sums' int view (a conversion of
     * the upper half, {@code S2I} part 1, fell back to Java code in the forward pass, boxed).
     */
    private static IntVector widen(ShortVector v, int part) {
        IntVector pairs = v.reinterpretAsInts();
        return part == 0 ? pairs.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)
                : pairs.lanewise(VectorOperators.ASHR, 16);
    }

    /** The 16-bit lane of row {@code r} in a column: even lanes for rows {@code [0, L)}, odd ones for the rest. */
    private static int lane(int r) {
        return r < L ? 2 * r : 2 * (r - L) + 1;
    }

    /**
     * Where column {@code c} of a sub-block whose kernel sums its two halves apart ({@code c} and
     * {@code c + half} side by side) is stored: {@code 2 (c mod half) + c / half}, so the kernel
     * reads the columns front to back (Q5_K's halves 512 bytes apart streamed from memory at half
     * its in-cache speed).
     */
    private static int pairOrder(int c, int half) {
        return 2 * (c % half) + c / half;
    }

    /** {@code q[i]}, a 16-bit value in both halves of an int, in every 16-bit lane. */
    private static ShortVector broadcast(int[] q, int i) {
        return IntVector.broadcast(I, q[i]).reinterpretAsShorts();
    }

    /**
     * 16 columns of nibble pairs at {@code at} against {@code q[x0 + c]} (low) and
     * {@code q[x0 + 16 + c]} (high): {@code sum((lo - 8) * q + hi * q)}, the low nibbles stored as
     * they are ({@code [0, 16)}, one mask) and the high ones less 8 (one arithmetic shift of the
     * signed byte), the sum started at {@code low}, the block's {@code -8 * sum(q[x0, x0 + 16))}
     * ({@link MatmulInput.Quants#lows}). The 16-bit sums may wrap on the way; the total is exact,
     * since it is one of at most 32512 in magnitude. (Both nibbles less 8 took two shifts for the
     * low one, on the port the multiplies need.)
     */
    private static ShortVector nibbleSums(MemorySegment il, long at, int[] q, int x0, int low) {
        ShortVector acc = IntVector.broadcast(I, low).reinterpretAsShorts();
        for (int c = 0; c < 16; c++) {
            ShortVector v = column(il, at + (long) c * GROUP);
            ShortVector hi = v.lanewise(VectorOperators.ASHR, 4);
            ShortVector lo = v.lanewise(VectorOperators.AND, (short) 0xF);
            acc = acc.add(lo.mul(broadcast(q, x0 + c))).add(hi.mul(broadcast(q, x0 + 16 + c)));
        }
        return acc;
    }

    private static void q8_0(MemorySegment il, long at, int cols, MatmulInput.Quants x, float[] out, int o) {
        short[] q = x.q16();
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        int blocks = cols / 32;
        for (int b = 0; b < blocks; b++) {
            FloatVector d = FloatVector.broadcast(F, x.d()[b]);
            FloatVector s0 = floats(il, at).mul(d), s1 = floats(il, at + 4L * L).mul(d);
            long cAt = at + 4L * GROUP;
            int x0 = 32 * b;
            IntVector i0 = IntVector.zero(I), i1 = i0;
            for (int c = 0; c < 32; c += 2) {
                // two products of at most 127 * 127 each fit 16 bits; then on to int lanes
                ShortVector p = column(il, cAt + (long) c * GROUP).mul(q[x0 + c])
                        .add(column(il, cAt + (long) (c + 1) * GROUP).mul(q[x0 + c + 1]));
                i0 = i0.add(widen(p, 0));
                i1 = i1.add(widen(p, 1));
            }
            a0 = toFloat(i0).fma(s0, a0);
            a1 = toFloat(i1).fma(s1, a1);
            at += 36L * GROUP;
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + L);
    }

    private static void q4_0(MemorySegment il, long at, int cols, MatmulInput.Quants x, float[] out, int o) {
        int[] q = x.q();
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        int blocks = cols / 32;
        for (int b = 0; b < blocks; b++) {
            FloatVector d = FloatVector.broadcast(F, x.d()[b]);
            FloatVector s0 = floats(il, at).mul(d), s1 = floats(il, at + 4L * L).mul(d);
            int x0 = 32 * b;
            ShortVector acc = nibbleSums(il, at + 4L * GROUP, q, x0, x.lows()[x0 / 32]);
            a0 = toFloat(widen(acc, 0)).fma(s0, a0);
            a1 = toFloat(widen(acc, 1)).fma(s1, a1);
            at += 20L * GROUP;
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + L);
    }

    private static void q4_K(MemorySegment il, long at, int cols, MatmulInput.Quants x, float[] out, int o,
            float[] work, int w) {
        int[] sums = x.sums();
        FloatVector a0 = FloatVector.zero(F), a1 = a0, m0 = a0, m1 = a0;
        int supers = cols / QK_K;
        for (int sb = 0; sb < supers; sb++) {
            int x0 = sb * QK_K;
            FloatVector dx = FloatVector.broadcast(F, x.d()[sb]);
            FloatVector d0 = floats(il, at).mul(dx), d1 = floats(il, at + 4L * L).mul(dx);
            FloatVector n0 = floats(il, at + 8L * L).mul(dx), n1 = floats(il, at + 12L * L).mul(dx);
            q4_KScaledSums(il, at + 8L * GROUP, x.q(), x0, sums, x.lows(), work, w);
            a0 = FloatVector.fromArray(F, work, w).fma(d0, a0);
            a1 = FloatVector.fromArray(F, work, w + L).fma(d1, a1);
            m0 = FloatVector.fromArray(F, work, w + 2 * L).fma(n0, m0);
            m1 = FloatVector.fromArray(F, work, w + 3 * L).fma(n1, m1);
            at += 152L * GROUP;
        }
        a0.sub(m0).intoArray(out, o);
        a1.sub(m1).intoArray(out, o + L);
    }

    /**
     * One Q4_K super-block's sub-blocks from {@code at}: {@code sum(scale[j] * sum(q * x))} over
     * the eight, lanes into {@code work[w, w + 2L)}, and {@code sum(min[j] * bsum[j])} into
     * {@code work[w + 2L, w + 4L)}. A method of its own, since with the rest of the kernel it
     * passed C2's inlining budget (NodeCountInliningCutoff) and its vectors were boxed.
     */
    private static void q4_KScaledSums(MemorySegment il, long at, int[] q, int x0, int[] sums, int[] lows,
            float[] work, int w) {
        FloatVector t0 = FloatVector.zero(F), t1 = t0, u0 = t0, u1 = t0;
        for (int j = 0; j < 8; j++) {
            // the scales loaded before the columns: loaded after them, Q6_K's kernel ran 1.26x slower
            long scales = at + 18L * j * GROUP;
            FloatVector sc0 = bytes(il, scales), sc1 = bytes(il, scales + L);
            FloatVector mn0 = bytes(il, scales + GROUP), mn1 = bytes(il, scales + GROUP + L);
            int bsum = sums[x0 / 32 + j];
            ShortVector acc = nibbleSums(il, scales + 2L * GROUP, q, x0 + 32 * j, lows[x0 / 32 + j]);
            // sum(q * x) = sum((q - 8) * x) + 8 * sum(x), exact on int lanes
            t0 = toFloat(widen(acc, 0).add(8 * bsum)).fma(sc0, t0);
            t1 = toFloat(widen(acc, 1).add(8 * bsum)).fma(sc1, t1);
            FloatVector bs = FloatVector.broadcast(F, bsum);
            u0 = mn0.fma(bs, u0);
            u1 = mn1.fma(bs, u1);
        }
        t0.intoArray(work, w);
        t1.intoArray(work, w + L);
        u0.intoArray(work, w + 2 * L);
        u1.intoArray(work, w + 3 * L);
    }

    /**
     * Q5_K: {@link #q4_K} with 32 byte columns of {@code q - 16} per sub-block. A copy of that
     * driver rather than one with a flag for the two.
     */
    private static void q5_K(MemorySegment il, long at, int cols, MatmulInput.Quants x, float[] out, int o,
            float[] work, int w) {
        int[] sums = x.sums();
        FloatVector a0 = FloatVector.zero(F), a1 = a0, m0 = a0, m1 = a0;
        int supers = cols / QK_K;
        for (int sb = 0; sb < supers; sb++) {
            int x0 = sb * QK_K;
            FloatVector dx = FloatVector.broadcast(F, x.d()[sb]);
            FloatVector d0 = floats(il, at).mul(dx), d1 = floats(il, at + 4L * L).mul(dx);
            FloatVector n0 = floats(il, at + 8L * L).mul(dx), n1 = floats(il, at + 12L * L).mul(dx);
            q5_KScaledSums(il, at + 8L * GROUP, x.q16(), x0, sums, work, w);
            a0 = FloatVector.fromArray(F, work, w).fma(d0, a0);
            a1 = FloatVector.fromArray(F, work, w + L).fma(d1, a1);
            m0 = FloatVector.fromArray(F, work, w + 2 * L).fma(n0, m0);
            m1 = FloatVector.fromArray(F, work, w + 3 * L).fma(n1, m1);
            at += 280L * GROUP;
        }
        a0.sub(m0).intoArray(out, o);
        a1.sub(m1).intoArray(out, o + L);
    }

    /**
     * One Q5_K super-block's sub-blocks from {@code at}, into {@code work} as {@link #q4_KScaledSums}:
     * per sub-block two runs of 16 columns, each at most 16 * 2032 on 16 bits, as
     * {@link #q6_KScaledSums} sums its halves.
     */
    private static void q5_KScaledSums(MemorySegment il, long at, short[] q, int x0, int[] sums, float[] work,
            int w) {
        FloatVector t0 = FloatVector.zero(F), t1 = t0, u0 = t0, u1 = t0;
        for (int j = 0; j < 8; j++) {
            long scales = at + 34L * j * GROUP;
            FloatVector sc0 = bytes(il, scales), sc1 = bytes(il, scales + L);
            FloatVector mn0 = bytes(il, scales + GROUP), mn1 = bytes(il, scales + GROUP + L);
            int bsum = sums[x0 / 32 + j];
            int bsum16 = 16 * bsum;
            long cAt = scales + 2L * GROUP;
            int y = x0 + 32 * j;
            ShortVector e = ShortVector.zero(S), f = e;
            for (int c = 0; c < 16; c++) {
                long p = cAt + 2L * c * GROUP;
                e = e.add(column(il, p).mul(q[y + c]));
                f = f.add(column(il, p + GROUP).mul(q[y + 16 + c]));
            }
            // sum(q * x) = sum((q - 16) * x) + 16 * sum(x), exact on int lanes
            t0 = toFloat(widen(e, 0).add(widen(f, 0)).add(bsum16)).fma(sc0, t0);
            t1 = toFloat(widen(e, 1).add(widen(f, 1)).add(bsum16)).fma(sc1, t1);
            FloatVector bs = FloatVector.broadcast(F, bsum);
            u0 = mn0.fma(bs, u0);
            u1 = mn1.fma(bs, u1);
        }
        t0.intoArray(work, w);
        t1.intoArray(work, w + L);
        u0.intoArray(work, w + 2 * L);
        u1.intoArray(work, w + 3 * L);
    }

    private static void q6_K(MemorySegment il, long at, int cols, MatmulInput.Quants x, float[] out, int o,
            float[] work, int w) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0;
        int supers = cols / QK_K;
        for (int sb = 0; sb < supers; sb++) {
            FloatVector dx = FloatVector.broadcast(F, x.d()[sb]);
            FloatVector d0 = floats(il, at).mul(dx), d1 = floats(il, at + 4L * L).mul(dx);
            q6_KScaledSums(il, at + 4L * GROUP, x.q16(), sb * QK_K, work, w);
            a0 = FloatVector.fromArray(F, work, w).fma(d0, a0);
            a1 = FloatVector.fromArray(F, work, w + L).fma(d1, a1);
            at += 276L * GROUP;
        }
        a0.intoArray(out, o);
        a1.intoArray(out, o + L);
    }

    /**
     * One Q6_K super-block's {@code sum(scale[j] * sum(q * x))} over its sixteen sub-blocks, lanes
     * into {@code work[w, w + 2L)}: a method of its own for C2's inlining budget, as
     * {@link #q4_KScaledSums}.
     */
    private static void q6_KScaledSums(MemorySegment il, long at, short[] q, int x0, float[] work, int w) {
        FloatVector t0 = FloatVector.zero(F), t1 = t0;
        for (int j = 0; j < 16; j++) {
            long scales = at + 17L * j * GROUP;
            FloatVector sc0 = bytes(il, scales), sc1 = bytes(il, scales + L);
            long cAt = scales + GROUP;
            int y = x0 + 16 * j;
            ShortVector e = ShortVector.zero(S), f = e;   // eight columns each: at most 8 * 4064 in magnitude
            for (int c = 0; c < 8; c++) {
                long p = cAt + 2L * c * GROUP;
                e = e.add(column(il, p).mul(q[y + c]));
                f = f.add(column(il, p + GROUP).mul(q[y + 8 + c]));
            }
            t0 = toFloat(widen(e, 0).add(widen(f, 0))).fma(sc0, t0);
            t1 = toFloat(widen(e, 1).add(widen(f, 1))).fma(sc1, t1);
        }
        t0.intoArray(work, w);
        t1.intoArray(work, w + L);
    }
}
