package io.nereid.engine.cpu.tensor;

import static io.nereid.engine.cpu.tensor.KScales.QK_K;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Two to fifteen tokens against an {@link Interleaved} copy (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K), each
 * block's integer sum taken on float lanes: each column of a group is loaded and widened to floats
 * once and serves up to {@link #PASS} tokens ({@code acc = fma(w, x, acc)}, the weights' and the
 * input's integers as floats), in registers; more tokens take more passes over the group (from L1
 * and L2), as evenly as they go.
 *
 * <p>Exactness: every product of a weight's integer and an input's ({@code [-127, 127]}) is an
 * integer, and so is every partial sum of a block, at most (with the start a block's sum takes,
 * {@link MatmulInput.Quants#lows} for Q4_0's nibbles, those plus {@code 8 * sum(x)} for Q4_K's and
 * {@code 16 * sum(x)} for Q5_K's) 32 * 16,256 (Q8_0), 16,256 + 16 * (1,905 + 1,016) (Q4_0), 16 * 4,064 (Q6_K's
 * sub-blocks), 16,256 + 32,512 + 32 * 1,905 (Q4_K) or 65,024 + 32 * 2,032 (Q5_K) in magnitude: all
 * below {@code 2^24}, so every float operation on them is exact, in whatever order. A block's sum
 * is thus the integer {@link Interleaved}'s one-token kernel computes on 16-bit and int lanes, as a
 * float, and it is then scaled with the same float operations in the same order (Q8_0 / Q4_0
 * {@code fma(sum, s * d_x, acc)}; the K-quants {@code fma(sum, scale, t)} over the sub-blocks, then
 * {@code fma(t, d * d_x, acc)} and the mins as {@link Interleaved} takes them), so each token gets
 * the bits it gets alone: a speculative verification scores its drafts as plain decoding would.
 *
 * <p>Why: the integer kernels of several tokens shared a column's decoding but spent a 16-bit
 * multiply, an add and a broadcast on each token's {@code 2L} products, and ran at a half to a
 * third of the FMA peak; on float lanes a token costs two FMAs and a broadcast for the same
 * products. One thread, 2048 x 768 (Q6_K 4096 x 768), us for 2 / 3 / 5 tokens (AMD EPYC,
 * 2026-12-06, against the integer kernels of the build before, alternated): Q4_0 53 / 66 / 97
 * against 66 / 98 / 155, Q8_0 60 / 72 / 102 against 72 / 115 / 185, Q4_K 72 / 90 / 135 against
 * 77 / 115 / 187, Q6_K 163 / 212 / 289 against 197 / 287 / 491 (one token 32-48, 40, 37-39, 86).
 * (The Vector API reaches neither {@code vpmaddubsw} nor {@code vpdpbusd}, which take four
 * products an instruction.)
 *
 * <p>A column's load: {@code L} shorts widened to ints, int lane {@code j} holding row {@code j}'s
 * byte in bits 0-7 and row {@code L + j}'s in bits 8-15 (the copy's {@code lane} order),
 * sign-extended from bit 15; each row's byte, or each of its nibbles, is then a shift or two (or a
 * mask) and a conversion.
 *
 * <p>Code: one method a format and token count, each token's chains written out: C2 keeps
 * vectors in registers only where no array of them exists, and where no call it does not inline
 * takes them (as {@link HalfColumns}); the K-quants' passes work a sub-block a call and keep
 * their running sums in {@code work} (a super-block's pass in one method passed C2's node budget,
 * {@code NodeCountInliningCutoff}, and its vectors were boxed). Passes of two or three tokens sum a
 * block's two halves of columns in chains of their own, so that the chains are not bound by the
 * FMA's latency. The methods are alike on purpose: one method a pass size for all five formats
 * (the column decoding and the inputs' offsets as arguments, each block's sums through
 * {@code work}) measured 1.6-2.6x slower (Q4_0 five tokens 187-190 against 94-95 us, Q6_K 416-746
 * against 289-294).
 */
final class InterleavedPasses {

    private static final VectorWidth W = VectorWidth.current();
    private static final VectorSpecies<Float> F = W.floats();
    private static final VectorSpecies<Integer> I = W.ints();
    private static final VectorSpecies<Short> SH = W.shorts();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final int L = F.length();
    private static final int GROUP = Interleaved.GROUP;

    /** The most tokens a pass over a group takes: {@code 4 * PASS} accumulators and a column in 32 registers. */
    static final int PASS = 5;

    private InterleavedPasses() {
    }

    /**
     * {@code out[o + t * stride + r]} for {@code t < tokens} (at least 2) and {@code r < GROUP}: the group
     * at {@code at} against the tokens of {@code x}, in passes of two to five tokens, as evenly as they go.
     */
    static void multiply(GgmlType type, MemorySegment il, long at, int cols, MatmulInput.Quants x, int tokens,
            float[] out, int o, int stride, float[] work, int wo) {
        if (tokens < 2) {
            throw new IllegalArgumentException("tokens " + tokens + " < 2");
        }
        int passes = (tokens + PASS - 1) / PASS;
        int t = 0;
        for (int pass = 0; pass < passes; pass++) {
            int n = (tokens - t) / (passes - pass);
            int to = o + t * stride;
            switch (type) {
                case Q8_0 -> {
                    switch (n) {
                        case 2 -> q8_0x2(il, at, cols, x, t, out, to, stride);
                        case 3 -> q8_0x3(il, at, cols, x, t, out, to, stride);
                        case 4 -> q8_0x4(il, at, cols, x, t, out, to, stride);
                        default -> q8_0x5(il, at, cols, x, t, out, to, stride);
                    }
                }
                case Q4_0 -> {
                    switch (n) {
                        case 2 -> q4_0x2(il, at, cols, x, t, out, to, stride);
                        case 3 -> q4_0x3(il, at, cols, x, t, out, to, stride);
                        case 4 -> q4_0x4(il, at, cols, x, t, out, to, stride);
                        default -> q4_0x5(il, at, cols, x, t, out, to, stride);
                    }
                }
                case Q4_K, Q5_K, Q6_K -> superBlocks(type, il, at, cols, x, t, n, out, to, stride, work, wo);
                default -> throw new IllegalArgumentException(type + " has no interleaved copy");
            }
            t += n;
        }
    }

    private static FloatVector floats(MemorySegment il, long at) {
        return FloatVector.fromMemorySegment(F, il, at, LE);
    }

    /** A column's {@code 2L} bytes as {@code L} ints, rows {@code j} and {@code L + j} in lane {@code j}. */
    private static IntVector pairs(MemorySegment il, long at) {
        return (IntVector) ShortVector.fromMemorySegment(SH, il, at, LE).convertShape(VectorOperators.S2I, I, 0);
    }

    private static FloatVector toFloat(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    /** The signed bytes of rows {@code [0, L)} (part 0) or {@code [L, 2L)} (part 1), as floats. */
    private static FloatVector bytes(IntVector v, int part) {
        return toFloat(part == 0 ? v.lanewise(VectorOperators.LSHL, 24).lanewise(VectorOperators.ASHR, 24)
                : v.lanewise(VectorOperators.ASHR, 8));
    }

    /** The low nibbles ({@code [0, 16)}) of rows {@code [0, L)} (part 0) or {@code [L, 2L)} (part 1). */
    private static FloatVector lowNibbles(IntVector v, int part) {
        return toFloat((part == 0 ? v : v.lanewise(VectorOperators.ASHR, 8)).lanewise(VectorOperators.AND, 0xF));
    }

    /** The high nibbles (signed, {@code [-8, 8)}) of rows {@code [0, L)} (part 0) or {@code [L, 2L)} (part 1). */
    private static FloatVector highNibbles(IntVector v, int part) {
        return toFloat(part == 0 ? v.lanewise(VectorOperators.LSHL, 24).lanewise(VectorOperators.ASHR, 28)
                : v.lanewise(VectorOperators.ASHR, 12));
    }

    /** A Q4_0 block's sums' start: {@link MatmulInput.Quants#lows} of the block holding element {@code i}. */
    private static FloatVector low(int[] lows, int i) {
        return FloatVector.broadcast(F, (float) (short) lows[i / 32]);
    }

    /** The K-quants' integer scales (and mins) of rows {@code [0, L)} at {@code at}, as floats. */
    private static FloatVector scales(MemorySegment il, long at) {
        return W.toFloats(W.loadBytes(il, at));
    }

    /** A Q4_K sub-block's sums' start: {@link #low}'s plus {@code 8 * sum(x)} (the 8 taken off its high nibbles). */
    private static FloatVector nibbleStart(int[] lows, int[] sums, int i) {
        return FloatVector.broadcast(F, (float) ((short) lows[i / 32] + 8 * sums[i / 32]));
    }

    /** Zeros in {@code n} tokens' {@code GROUP} outputs from {@code o}, {@code stride} apart. */
    private static void clear(float[] out, int o, int stride, int n) {
        for (int i = 0; i < n; i++) {
            Arrays.fill(out, o + i * stride, o + i * stride + GROUP, 0f);
        }
    }

    /**
     * A K-quant super-block's scaled sums ({@code 2L} floats at {@code work[w]}) into a token's outputs at
     * {@code o}: {@code out = fma(t, d * d_x, out)}, the super-block's {@code d} at {@code at}. (The sums go
     * through {@code work}: a method that took them as vectors was not inlined, C2's node budget, and boxed them.)
     */
    private static void scale(MemorySegment il, long at, float[] work, int w, float dx, float[] out, int o) {
        FloatVector t0 = FloatVector.fromArray(F, work, w), t1 = FloatVector.fromArray(F, work, w + L);
        t0.fma(floats(il, at).mul(dx), FloatVector.fromArray(F, out, o)).intoArray(out, o);
        t1.fma(floats(il, at + 4L * L).mul(dx), FloatVector.fromArray(F, out, o + L)).intoArray(out, o + L);
    }

    /**
     * A Q4_K / Q5_K super-block's mins term into {@code work[w, w + 2L)}: {@code sum(min[j] * bsum[j])} over
     * its eight sub-blocks ({@code subStride} groups of bytes apart, the sums from {@code sums[s]}) times
     * {@code dmin * d_x}, added; the one-token kernel's operations in its order.
     */
    private static void mins(MemorySegment il, long at, int subStride, int[] sums, int s, float dx, float[] work,
            int w) {
        FloatVector u0 = FloatVector.zero(F), u1 = u0;
        for (int j = 0; j < 8; j++) {
            long mins = at + (8L + subStride * j) * GROUP + GROUP;
            FloatVector bs = FloatVector.broadcast(F, (float) sums[s + j]);
            u0 = scales(il, mins).fma(bs, u0);
            u1 = scales(il, mins + L).fma(bs, u1);
        }
        u0.fma(floats(il, at + 8L * L).mul(dx), FloatVector.fromArray(F, work, w)).intoArray(work, w);
        u1.fma(floats(il, at + 12L * L).mul(dx), FloatVector.fromArray(F, work, w + L)).intoArray(work, w + L);
    }

    /** Each token's outputs less its mins term ({@link #mins}, {@code 2L} floats a token from {@code wo}). */
    private static void subtract(float[] out, int o, int stride, float[] work, int wo, int n) {
        for (int i = 0; i < n; i++) {
            int at = o + i * stride;
            for (int h = 0; h < 2; h++) {
                FloatVector.fromArray(F, out, at + h * L).sub(FloatVector.fromArray(F, work, wo + 2 * i * L + h * L))
                        .intoArray(out, at + h * L);
            }
        }
    }

    /*
     * The passes: n tokens from token t (token i's integers at qf[y_i + column], y_i = (t + i) * cols) against the
     * group at `at`, token i's rows into out[o + i * stride, + GROUP). p_i0 / p_i1 sum a block's rows [0, L) and
     * [L, 2L) (q_i0 / q_i1 the high columns where they have chains of their own), r_i0 / r_i1 the blocks' scaled sums.
     */

    private static void q8_0x2(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int y0 = t * cols, y1 = y0 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00;
        for (int b = 0; b < cols / 32; b++, at += 36L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = FloatVector.zero(F), p01 = p00, q00 = p00, q01 = p00;
            FloatVector p10 = FloatVector.zero(F), p11 = p10, q10 = p10, q11 = p10;
            for (int c = 0; c < 32; c += 2) {
                IntVector v = pairs(il, cAt + (long) c * GROUP), z = pairs(il, cAt + (long) (c + 1) * GROUP);
                FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + c + 1]);
                p00 = e0.fma(u, p00);
                p01 = e1.fma(u, p01);
                q00 = f0.fma(g, q00);
                q01 = f1.fma(g, q01);
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + c + 1]);
                p10 = e0.fma(u, p10);
                p11 = e1.fma(u, p11);
                q10 = f0.fma(g, q10);
                q11 = f1.fma(g, q11);
            }
            r00 = p00.add(q00).fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.add(q01).fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.add(q10).fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.add(q11).fma(s1.mul(d[y1 / 32 + b]), r11);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
    }

    private static void q8_0x3(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int y0 = t * cols, y1 = y0 + cols, y2 = y1 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00, r20 = r00, r21 = r00;
        for (int b = 0; b < cols / 32; b++, at += 36L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = FloatVector.zero(F), p01 = p00, q00 = p00, q01 = p00;
            FloatVector p10 = FloatVector.zero(F), p11 = p10, q10 = p10, q11 = p10;
            FloatVector p20 = FloatVector.zero(F), p21 = p20, q20 = p20, q21 = p20;
            for (int c = 0; c < 32; c += 2) {
                IntVector v = pairs(il, cAt + (long) c * GROUP), z = pairs(il, cAt + (long) (c + 1) * GROUP);
                FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + c + 1]);
                p00 = e0.fma(u, p00);
                p01 = e1.fma(u, p01);
                q00 = f0.fma(g, q00);
                q01 = f1.fma(g, q01);
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + c + 1]);
                p10 = e0.fma(u, p10);
                p11 = e1.fma(u, p11);
                q10 = f0.fma(g, q10);
                q11 = f1.fma(g, q11);
                u = FloatVector.broadcast(F, qf[y2 + k + c]);
                g = FloatVector.broadcast(F, qf[y2 + k + c + 1]);
                p20 = e0.fma(u, p20);
                p21 = e1.fma(u, p21);
                q20 = f0.fma(g, q20);
                q21 = f1.fma(g, q21);
            }
            r00 = p00.add(q00).fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.add(q01).fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.add(q10).fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.add(q11).fma(s1.mul(d[y1 / 32 + b]), r11);
            r20 = p20.add(q20).fma(s0.mul(d[y2 / 32 + b]), r20);
            r21 = p21.add(q21).fma(s1.mul(d[y2 / 32 + b]), r21);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
        r20.intoArray(out, o + 2 * stride);
        r21.intoArray(out, o + 2 * stride + L);
    }

    private static void q8_0x4(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int y0 = t * cols, y1 = y0 + cols, y2 = y1 + cols, y3 = y2 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00, r20 = r00, r21 = r00;
        FloatVector r30 = r00, r31 = r00;
        for (int b = 0; b < cols / 32; b++, at += 36L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = FloatVector.zero(F), p01 = p00;
            FloatVector p10 = FloatVector.zero(F), p11 = p10;
            FloatVector p20 = FloatVector.zero(F), p21 = p20;
            FloatVector p30 = FloatVector.zero(F), p31 = p30;
            for (int c = 0; c < 32; c += 2) {
                IntVector v = pairs(il, cAt + (long) c * GROUP), z = pairs(il, cAt + (long) (c + 1) * GROUP);
                FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + c + 1]);
                p00 = f0.fma(g, e0.fma(u, p00));
                p01 = f1.fma(g, e1.fma(u, p01));
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + c + 1]);
                p10 = f0.fma(g, e0.fma(u, p10));
                p11 = f1.fma(g, e1.fma(u, p11));
                u = FloatVector.broadcast(F, qf[y2 + k + c]);
                g = FloatVector.broadcast(F, qf[y2 + k + c + 1]);
                p20 = f0.fma(g, e0.fma(u, p20));
                p21 = f1.fma(g, e1.fma(u, p21));
                u = FloatVector.broadcast(F, qf[y3 + k + c]);
                g = FloatVector.broadcast(F, qf[y3 + k + c + 1]);
                p30 = f0.fma(g, e0.fma(u, p30));
                p31 = f1.fma(g, e1.fma(u, p31));
            }
            r00 = p00.fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.fma(s1.mul(d[y1 / 32 + b]), r11);
            r20 = p20.fma(s0.mul(d[y2 / 32 + b]), r20);
            r21 = p21.fma(s1.mul(d[y2 / 32 + b]), r21);
            r30 = p30.fma(s0.mul(d[y3 / 32 + b]), r30);
            r31 = p31.fma(s1.mul(d[y3 / 32 + b]), r31);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
        r20.intoArray(out, o + 2 * stride);
        r21.intoArray(out, o + 2 * stride + L);
        r30.intoArray(out, o + 3 * stride);
        r31.intoArray(out, o + 3 * stride + L);
    }

    private static void q8_0x5(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int y0 = t * cols, y1 = y0 + cols, y2 = y1 + cols, y3 = y2 + cols, y4 = y3 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00, r20 = r00, r21 = r00;
        FloatVector r30 = r00, r31 = r00, r40 = r00, r41 = r00;
        for (int b = 0; b < cols / 32; b++, at += 36L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = FloatVector.zero(F), p01 = p00;
            FloatVector p10 = FloatVector.zero(F), p11 = p10;
            FloatVector p20 = FloatVector.zero(F), p21 = p20;
            FloatVector p30 = FloatVector.zero(F), p31 = p30;
            FloatVector p40 = FloatVector.zero(F), p41 = p40;
            for (int c = 0; c < 32; c += 2) {
                IntVector v = pairs(il, cAt + (long) c * GROUP), z = pairs(il, cAt + (long) (c + 1) * GROUP);
                FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + c + 1]);
                p00 = f0.fma(g, e0.fma(u, p00));
                p01 = f1.fma(g, e1.fma(u, p01));
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + c + 1]);
                p10 = f0.fma(g, e0.fma(u, p10));
                p11 = f1.fma(g, e1.fma(u, p11));
                u = FloatVector.broadcast(F, qf[y2 + k + c]);
                g = FloatVector.broadcast(F, qf[y2 + k + c + 1]);
                p20 = f0.fma(g, e0.fma(u, p20));
                p21 = f1.fma(g, e1.fma(u, p21));
                u = FloatVector.broadcast(F, qf[y3 + k + c]);
                g = FloatVector.broadcast(F, qf[y3 + k + c + 1]);
                p30 = f0.fma(g, e0.fma(u, p30));
                p31 = f1.fma(g, e1.fma(u, p31));
                u = FloatVector.broadcast(F, qf[y4 + k + c]);
                g = FloatVector.broadcast(F, qf[y4 + k + c + 1]);
                p40 = f0.fma(g, e0.fma(u, p40));
                p41 = f1.fma(g, e1.fma(u, p41));
            }
            r00 = p00.fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.fma(s1.mul(d[y1 / 32 + b]), r11);
            r20 = p20.fma(s0.mul(d[y2 / 32 + b]), r20);
            r21 = p21.fma(s1.mul(d[y2 / 32 + b]), r21);
            r30 = p30.fma(s0.mul(d[y3 / 32 + b]), r30);
            r31 = p31.fma(s1.mul(d[y3 / 32 + b]), r31);
            r40 = p40.fma(s0.mul(d[y4 / 32 + b]), r40);
            r41 = p41.fma(s1.mul(d[y4 / 32 + b]), r41);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
        r20.intoArray(out, o + 2 * stride);
        r21.intoArray(out, o + 2 * stride + L);
        r30.intoArray(out, o + 3 * stride);
        r31.intoArray(out, o + 3 * stride + L);
        r40.intoArray(out, o + 4 * stride);
        r41.intoArray(out, o + 4 * stride + L);
    }

    private static void q4_0x2(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int[] lows = x.lows();
        int y0 = t * cols, y1 = y0 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00;
        for (int b = 0; b < cols / 32; b++, at += 20L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = low(lows, y0 + k), p01 = p00;
            FloatVector q00 = FloatVector.zero(F), q01 = q00;
            FloatVector p10 = low(lows, y1 + k), p11 = p10;
            FloatVector q10 = FloatVector.zero(F), q11 = q10;
            for (int c = 0; c < 16; c++) {
                IntVector v = pairs(il, cAt + (long) c * GROUP);
                FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
                FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + 16 + c]);
                p00 = e0.fma(u, p00);
                p01 = e1.fma(u, p01);
                q00 = f0.fma(g, q00);
                q01 = f1.fma(g, q01);
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + 16 + c]);
                p10 = e0.fma(u, p10);
                p11 = e1.fma(u, p11);
                q10 = f0.fma(g, q10);
                q11 = f1.fma(g, q11);
            }
            r00 = p00.add(q00).fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.add(q01).fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.add(q10).fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.add(q11).fma(s1.mul(d[y1 / 32 + b]), r11);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
    }

    private static void q4_0x3(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int[] lows = x.lows();
        int y0 = t * cols, y1 = y0 + cols, y2 = y1 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00, r20 = r00, r21 = r00;
        for (int b = 0; b < cols / 32; b++, at += 20L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = low(lows, y0 + k), p01 = p00;
            FloatVector q00 = FloatVector.zero(F), q01 = q00;
            FloatVector p10 = low(lows, y1 + k), p11 = p10;
            FloatVector q10 = FloatVector.zero(F), q11 = q10;
            FloatVector p20 = low(lows, y2 + k), p21 = p20;
            FloatVector q20 = FloatVector.zero(F), q21 = q20;
            for (int c = 0; c < 16; c++) {
                IntVector v = pairs(il, cAt + (long) c * GROUP);
                FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
                FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + 16 + c]);
                p00 = e0.fma(u, p00);
                p01 = e1.fma(u, p01);
                q00 = f0.fma(g, q00);
                q01 = f1.fma(g, q01);
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + 16 + c]);
                p10 = e0.fma(u, p10);
                p11 = e1.fma(u, p11);
                q10 = f0.fma(g, q10);
                q11 = f1.fma(g, q11);
                u = FloatVector.broadcast(F, qf[y2 + k + c]);
                g = FloatVector.broadcast(F, qf[y2 + k + 16 + c]);
                p20 = e0.fma(u, p20);
                p21 = e1.fma(u, p21);
                q20 = f0.fma(g, q20);
                q21 = f1.fma(g, q21);
            }
            r00 = p00.add(q00).fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.add(q01).fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.add(q10).fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.add(q11).fma(s1.mul(d[y1 / 32 + b]), r11);
            r20 = p20.add(q20).fma(s0.mul(d[y2 / 32 + b]), r20);
            r21 = p21.add(q21).fma(s1.mul(d[y2 / 32 + b]), r21);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
        r20.intoArray(out, o + 2 * stride);
        r21.intoArray(out, o + 2 * stride + L);
    }

    private static void q4_0x4(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int[] lows = x.lows();
        int y0 = t * cols, y1 = y0 + cols, y2 = y1 + cols, y3 = y2 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00, r20 = r00, r21 = r00;
        FloatVector r30 = r00, r31 = r00;
        for (int b = 0; b < cols / 32; b++, at += 20L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = low(lows, y0 + k), p01 = p00;
            FloatVector p10 = low(lows, y1 + k), p11 = p10;
            FloatVector p20 = low(lows, y2 + k), p21 = p20;
            FloatVector p30 = low(lows, y3 + k), p31 = p30;
            for (int c = 0; c < 16; c++) {
                IntVector v = pairs(il, cAt + (long) c * GROUP);
                FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
                FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + 16 + c]);
                p00 = f0.fma(g, e0.fma(u, p00));
                p01 = f1.fma(g, e1.fma(u, p01));
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + 16 + c]);
                p10 = f0.fma(g, e0.fma(u, p10));
                p11 = f1.fma(g, e1.fma(u, p11));
                u = FloatVector.broadcast(F, qf[y2 + k + c]);
                g = FloatVector.broadcast(F, qf[y2 + k + 16 + c]);
                p20 = f0.fma(g, e0.fma(u, p20));
                p21 = f1.fma(g, e1.fma(u, p21));
                u = FloatVector.broadcast(F, qf[y3 + k + c]);
                g = FloatVector.broadcast(F, qf[y3 + k + 16 + c]);
                p30 = f0.fma(g, e0.fma(u, p30));
                p31 = f1.fma(g, e1.fma(u, p31));
            }
            r00 = p00.fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.fma(s1.mul(d[y1 / 32 + b]), r11);
            r20 = p20.fma(s0.mul(d[y2 / 32 + b]), r20);
            r21 = p21.fma(s1.mul(d[y2 / 32 + b]), r21);
            r30 = p30.fma(s0.mul(d[y3 / 32 + b]), r30);
            r31 = p31.fma(s1.mul(d[y3 / 32 + b]), r31);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
        r20.intoArray(out, o + 2 * stride);
        r21.intoArray(out, o + 2 * stride + L);
        r30.intoArray(out, o + 3 * stride);
        r31.intoArray(out, o + 3 * stride + L);
    }

    private static void q4_0x5(MemorySegment il, long at, int cols, MatmulInput.Quants x, int t, float[] out, int o,
            int stride) {
        float[] qf = x.qf();
        float[] d = x.d();
        int[] lows = x.lows();
        int y0 = t * cols, y1 = y0 + cols, y2 = y1 + cols, y3 = y2 + cols, y4 = y3 + cols;
        FloatVector r00 = FloatVector.zero(F);
        FloatVector r01 = r00, r10 = r00, r11 = r00, r20 = r00, r21 = r00;
        FloatVector r30 = r00, r31 = r00, r40 = r00, r41 = r00;
        for (int b = 0; b < cols / 32; b++, at += 20L * GROUP) {
            FloatVector s0 = floats(il, at), s1 = floats(il, at + 4L * L);
            long cAt = at + 4L * GROUP;
            int k = 32 * b;
            FloatVector p00 = low(lows, y0 + k), p01 = p00;
            FloatVector p10 = low(lows, y1 + k), p11 = p10;
            FloatVector p20 = low(lows, y2 + k), p21 = p20;
            FloatVector p30 = low(lows, y3 + k), p31 = p30;
            FloatVector p40 = low(lows, y4 + k), p41 = p40;
            for (int c = 0; c < 16; c++) {
                IntVector v = pairs(il, cAt + (long) c * GROUP);
                FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
                FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
                FloatVector u = FloatVector.broadcast(F, qf[y0 + k + c]);
                FloatVector g = FloatVector.broadcast(F, qf[y0 + k + 16 + c]);
                p00 = f0.fma(g, e0.fma(u, p00));
                p01 = f1.fma(g, e1.fma(u, p01));
                u = FloatVector.broadcast(F, qf[y1 + k + c]);
                g = FloatVector.broadcast(F, qf[y1 + k + 16 + c]);
                p10 = f0.fma(g, e0.fma(u, p10));
                p11 = f1.fma(g, e1.fma(u, p11));
                u = FloatVector.broadcast(F, qf[y2 + k + c]);
                g = FloatVector.broadcast(F, qf[y2 + k + 16 + c]);
                p20 = f0.fma(g, e0.fma(u, p20));
                p21 = f1.fma(g, e1.fma(u, p21));
                u = FloatVector.broadcast(F, qf[y3 + k + c]);
                g = FloatVector.broadcast(F, qf[y3 + k + 16 + c]);
                p30 = f0.fma(g, e0.fma(u, p30));
                p31 = f1.fma(g, e1.fma(u, p31));
                u = FloatVector.broadcast(F, qf[y4 + k + c]);
                g = FloatVector.broadcast(F, qf[y4 + k + 16 + c]);
                p40 = f0.fma(g, e0.fma(u, p40));
                p41 = f1.fma(g, e1.fma(u, p41));
            }
            r00 = p00.fma(s0.mul(d[y0 / 32 + b]), r00);
            r01 = p01.fma(s1.mul(d[y0 / 32 + b]), r01);
            r10 = p10.fma(s0.mul(d[y1 / 32 + b]), r10);
            r11 = p11.fma(s1.mul(d[y1 / 32 + b]), r11);
            r20 = p20.fma(s0.mul(d[y2 / 32 + b]), r20);
            r21 = p21.fma(s1.mul(d[y2 / 32 + b]), r21);
            r30 = p30.fma(s0.mul(d[y3 / 32 + b]), r30);
            r31 = p31.fma(s1.mul(d[y3 / 32 + b]), r31);
            r40 = p40.fma(s0.mul(d[y4 / 32 + b]), r40);
            r41 = p41.fma(s1.mul(d[y4 / 32 + b]), r41);
        }
        r00.intoArray(out, o);
        r01.intoArray(out, o + L);
        r10.intoArray(out, o + stride);
        r11.intoArray(out, o + stride + L);
        r20.intoArray(out, o + 2 * stride);
        r21.intoArray(out, o + 2 * stride + L);
        r30.intoArray(out, o + 3 * stride);
        r31.intoArray(out, o + 3 * stride + L);
        r40.intoArray(out, o + 4 * stride);
        r41.intoArray(out, o + 4 * stride + L);
    }


    /**
     * Q4_K / Q5_K / Q6_K: {@code n} tokens from token {@code t} against the group at {@code at}, into
     * {@code out[o + i * stride, + GROUP)}: each sub-block's sums ({@link #subBlock}) times its scale into
     * the super-block's sums in {@code work}, those times {@code d * d_x} into the outputs ({@link #scale}),
     * and Q4_K / Q5_K's mins ({@link #mins}) taken off at the end, as {@link Interleaved}'s one-token kernels
     * take them. Only the sub-block methods are per format and token count: this driver's work is a
     * sub-block's worth of calls.
     */
    private static void superBlocks(GgmlType type, MemorySegment il, long at, int cols, MatmulInput.Quants x, int t,
            int n, float[] out, int o, int stride, float[] work, int wo) {
        boolean q6 = type == GgmlType.Q6_K;
        int subs = q6 ? 16 : 8;
        int subLength = q6 ? 16 : 32;
        int subStride = q6 ? 17 : type == GgmlType.Q4_K ? 18 : 34;   // groups of bytes from one sub-block to the next
        long head = q6 ? 4L : 8L;   // d (and dmin) ahead of the sub-blocks, in groups of bytes
        long superBytes = (q6 ? 276L : type == GgmlType.Q4_K ? 152L : 280L) * GROUP;
        float[] d = x.d();
        int[] sums = x.sums();
        int wt = wo + 2 * PASS * L;   // the super-block's scaled sums, 2L floats a token
        clear(out, o, stride, n);
        if (!q6) {
            clear(work, wo, 2 * L, n);
        }
        for (int sb = 0; sb < cols / QK_K; sb++, at += superBytes) {
            Arrays.fill(work, wt, wt + 2 * n * L, 0f);
            for (int j = 0; j < subs; j++) {
                long sub = at + (head + subStride * j) * GROUP;
                subBlock(type, n, il, sub, x, t * cols + sb * QK_K + subLength * j, cols, work, wt);
            }
            for (int i = 0; i < n; i++) {
                int y = (t + i) * cols;
                scale(il, at, work, wt + 2 * i * L, d[y / QK_K + sb], out, o + i * stride);
                if (!q6) {
                    mins(il, at, subStride, sums, (y + sb * QK_K) / 32, d[y / QK_K + sb], work, wo + 2 * i * L);
                }
            }
        }
        if (!q6) {
            subtract(out, o, stride, work, wo, n);
        }
    }

    /** The sub-block at {@code sub} for {@code n} tokens, the first's integers from {@code x}'s element {@code y}. */
    private static void subBlock(GgmlType type, int n, MemorySegment il, long sub, MatmulInput.Quants x, int y, int ys,
            float[] work, int wt) {
        float[] qf = x.qf();
        int[] sums = x.sums();
        int[] lows = x.lows();
        switch (type) {
            case Q6_K -> {
                switch (n) {
                    case 2 -> q6_KSub2(il, sub, qf, sums, lows, y, ys, work, wt);
                    case 3 -> q6_KSub3(il, sub, qf, sums, lows, y, ys, work, wt);
                    case 4 -> q6_KSub4(il, sub, qf, sums, lows, y, ys, work, wt);
                    default -> q6_KSub5(il, sub, qf, sums, lows, y, ys, work, wt);
                }
            }
            case Q4_K -> {
                switch (n) {
                    case 2 -> q4_KSub2(il, sub, qf, sums, lows, y, ys, work, wt);
                    case 3 -> q4_KSub3(il, sub, qf, sums, lows, y, ys, work, wt);
                    case 4 -> q4_KSub4(il, sub, qf, sums, lows, y, ys, work, wt);
                    default -> q4_KSub5(il, sub, qf, sums, lows, y, ys, work, wt);
                }
            }
            default -> {
                switch (n) {
                    case 2 -> q5_KSub2(il, sub, qf, sums, lows, y, ys, work, wt);
                    case 3 -> q5_KSub3(il, sub, qf, sums, lows, y, ys, work, wt);
                    case 4 -> q5_KSub4(il, sub, qf, sums, lows, y, ys, work, wt);
                    default -> q5_KSub5(il, sub, qf, sums, lows, y, ys, work, wt);
                }
            }
        }
    }

    private static void q6_KSub2(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + GROUP;
        FloatVector p00 = FloatVector.zero(F), p01 = p00, q00 = p00, q01 = p00;
        FloatVector p10 = FloatVector.zero(F), p11 = p10, q10 = p10, q11 = p10;
        for (int c = 0; c < 8; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 8 + c]);
            p00 = e0.fma(u, p00);
            p01 = e1.fma(u, p01);
            q00 = f0.fma(g, q00);
            q01 = f1.fma(g, q01);
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 8 + c]);
            p10 = e0.fma(u, p10);
            p11 = e1.fma(u, p11);
            q10 = f0.fma(g, q10);
            q11 = f1.fma(g, q11);
        }
        p00.add(q00).fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.add(q01).fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.add(q10).fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.add(q11).fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
    }

    private static void q6_KSub3(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + GROUP;
        FloatVector p00 = FloatVector.zero(F), p01 = p00, q00 = p00, q01 = p00;
        FloatVector p10 = FloatVector.zero(F), p11 = p10, q10 = p10, q11 = p10;
        FloatVector p20 = FloatVector.zero(F), p21 = p20, q20 = p20, q21 = p20;
        for (int c = 0; c < 8; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 8 + c]);
            p00 = e0.fma(u, p00);
            p01 = e1.fma(u, p01);
            q00 = f0.fma(g, q00);
            q01 = f1.fma(g, q01);
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 8 + c]);
            p10 = e0.fma(u, p10);
            p11 = e1.fma(u, p11);
            q10 = f0.fma(g, q10);
            q11 = f1.fma(g, q11);
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 8 + c]);
            p20 = e0.fma(u, p20);
            p21 = e1.fma(u, p21);
            q20 = f0.fma(g, q20);
            q21 = f1.fma(g, q21);
        }
        p00.add(q00).fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.add(q01).fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.add(q10).fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.add(q11).fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.add(q20).fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.add(q21).fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
    }

    private static void q6_KSub4(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys, y3 = y2 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + GROUP;
        FloatVector p00 = FloatVector.zero(F), p01 = p00;
        FloatVector p10 = FloatVector.zero(F), p11 = p10;
        FloatVector p20 = FloatVector.zero(F), p21 = p20;
        FloatVector p30 = FloatVector.zero(F), p31 = p30;
        for (int c = 0; c < 8; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 8 + c]);
            p00 = f0.fma(g, e0.fma(u, p00));
            p01 = f1.fma(g, e1.fma(u, p01));
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 8 + c]);
            p10 = f0.fma(g, e0.fma(u, p10));
            p11 = f1.fma(g, e1.fma(u, p11));
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 8 + c]);
            p20 = f0.fma(g, e0.fma(u, p20));
            p21 = f1.fma(g, e1.fma(u, p21));
            u = FloatVector.broadcast(F, qf[y3 + c]);
            g = FloatVector.broadcast(F, qf[y3 + 8 + c]);
            p30 = f0.fma(g, e0.fma(u, p30));
            p31 = f1.fma(g, e1.fma(u, p31));
        }
        p00.fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
        p30.fma(sc0, FloatVector.fromArray(F, work, wt + 6 * L)).intoArray(work, wt + 6 * L);
        p31.fma(sc1, FloatVector.fromArray(F, work, wt + 7 * L)).intoArray(work, wt + 7 * L);
    }

    private static void q6_KSub5(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys, y3 = y2 + ys, y4 = y3 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + GROUP;
        FloatVector p00 = FloatVector.zero(F), p01 = p00;
        FloatVector p10 = FloatVector.zero(F), p11 = p10;
        FloatVector p20 = FloatVector.zero(F), p21 = p20;
        FloatVector p30 = FloatVector.zero(F), p31 = p30;
        FloatVector p40 = FloatVector.zero(F), p41 = p40;
        for (int c = 0; c < 8; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 8 + c]);
            p00 = f0.fma(g, e0.fma(u, p00));
            p01 = f1.fma(g, e1.fma(u, p01));
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 8 + c]);
            p10 = f0.fma(g, e0.fma(u, p10));
            p11 = f1.fma(g, e1.fma(u, p11));
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 8 + c]);
            p20 = f0.fma(g, e0.fma(u, p20));
            p21 = f1.fma(g, e1.fma(u, p21));
            u = FloatVector.broadcast(F, qf[y3 + c]);
            g = FloatVector.broadcast(F, qf[y3 + 8 + c]);
            p30 = f0.fma(g, e0.fma(u, p30));
            p31 = f1.fma(g, e1.fma(u, p31));
            u = FloatVector.broadcast(F, qf[y4 + c]);
            g = FloatVector.broadcast(F, qf[y4 + 8 + c]);
            p40 = f0.fma(g, e0.fma(u, p40));
            p41 = f1.fma(g, e1.fma(u, p41));
        }
        p00.fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
        p30.fma(sc0, FloatVector.fromArray(F, work, wt + 6 * L)).intoArray(work, wt + 6 * L);
        p31.fma(sc1, FloatVector.fromArray(F, work, wt + 7 * L)).intoArray(work, wt + 7 * L);
        p40.fma(sc0, FloatVector.fromArray(F, work, wt + 8 * L)).intoArray(work, wt + 8 * L);
        p41.fma(sc1, FloatVector.fromArray(F, work, wt + 9 * L)).intoArray(work, wt + 9 * L);
    }

    private static void q4_KSub2(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = nibbleStart(lows, sums, y0), p01 = p00;
        FloatVector q00 = FloatVector.zero(F), q01 = q00;
        FloatVector p10 = nibbleStart(lows, sums, y1), p11 = p10;
        FloatVector q10 = FloatVector.zero(F), q11 = q10;
        for (int c = 0; c < 16; c++) {
            IntVector v = pairs(il, cAt + (long) c * GROUP);
            FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
            FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = e0.fma(u, p00);
            p01 = e1.fma(u, p01);
            q00 = f0.fma(g, q00);
            q01 = f1.fma(g, q01);
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = e0.fma(u, p10);
            p11 = e1.fma(u, p11);
            q10 = f0.fma(g, q10);
            q11 = f1.fma(g, q11);
        }
        p00.add(q00).fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.add(q01).fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.add(q10).fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.add(q11).fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
    }

    private static void q4_KSub3(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = nibbleStart(lows, sums, y0), p01 = p00;
        FloatVector q00 = FloatVector.zero(F), q01 = q00;
        FloatVector p10 = nibbleStart(lows, sums, y1), p11 = p10;
        FloatVector q10 = FloatVector.zero(F), q11 = q10;
        FloatVector p20 = nibbleStart(lows, sums, y2), p21 = p20;
        FloatVector q20 = FloatVector.zero(F), q21 = q20;
        for (int c = 0; c < 16; c++) {
            IntVector v = pairs(il, cAt + (long) c * GROUP);
            FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
            FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = e0.fma(u, p00);
            p01 = e1.fma(u, p01);
            q00 = f0.fma(g, q00);
            q01 = f1.fma(g, q01);
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = e0.fma(u, p10);
            p11 = e1.fma(u, p11);
            q10 = f0.fma(g, q10);
            q11 = f1.fma(g, q11);
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 16 + c]);
            p20 = e0.fma(u, p20);
            p21 = e1.fma(u, p21);
            q20 = f0.fma(g, q20);
            q21 = f1.fma(g, q21);
        }
        p00.add(q00).fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.add(q01).fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.add(q10).fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.add(q11).fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.add(q20).fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.add(q21).fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
    }

    private static void q4_KSub4(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys, y3 = y2 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = nibbleStart(lows, sums, y0), p01 = p00;
        FloatVector p10 = nibbleStart(lows, sums, y1), p11 = p10;
        FloatVector p20 = nibbleStart(lows, sums, y2), p21 = p20;
        FloatVector p30 = nibbleStart(lows, sums, y3), p31 = p30;
        for (int c = 0; c < 16; c++) {
            IntVector v = pairs(il, cAt + (long) c * GROUP);
            FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
            FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = f0.fma(g, e0.fma(u, p00));
            p01 = f1.fma(g, e1.fma(u, p01));
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = f0.fma(g, e0.fma(u, p10));
            p11 = f1.fma(g, e1.fma(u, p11));
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 16 + c]);
            p20 = f0.fma(g, e0.fma(u, p20));
            p21 = f1.fma(g, e1.fma(u, p21));
            u = FloatVector.broadcast(F, qf[y3 + c]);
            g = FloatVector.broadcast(F, qf[y3 + 16 + c]);
            p30 = f0.fma(g, e0.fma(u, p30));
            p31 = f1.fma(g, e1.fma(u, p31));
        }
        p00.fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
        p30.fma(sc0, FloatVector.fromArray(F, work, wt + 6 * L)).intoArray(work, wt + 6 * L);
        p31.fma(sc1, FloatVector.fromArray(F, work, wt + 7 * L)).intoArray(work, wt + 7 * L);
    }

    private static void q4_KSub5(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys, y3 = y2 + ys, y4 = y3 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = nibbleStart(lows, sums, y0), p01 = p00;
        FloatVector p10 = nibbleStart(lows, sums, y1), p11 = p10;
        FloatVector p20 = nibbleStart(lows, sums, y2), p21 = p20;
        FloatVector p30 = nibbleStart(lows, sums, y3), p31 = p30;
        FloatVector p40 = nibbleStart(lows, sums, y4), p41 = p40;
        for (int c = 0; c < 16; c++) {
            IntVector v = pairs(il, cAt + (long) c * GROUP);
            FloatVector e0 = lowNibbles(v, 0), e1 = lowNibbles(v, 1);
            FloatVector f0 = highNibbles(v, 0), f1 = highNibbles(v, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = f0.fma(g, e0.fma(u, p00));
            p01 = f1.fma(g, e1.fma(u, p01));
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = f0.fma(g, e0.fma(u, p10));
            p11 = f1.fma(g, e1.fma(u, p11));
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 16 + c]);
            p20 = f0.fma(g, e0.fma(u, p20));
            p21 = f1.fma(g, e1.fma(u, p21));
            u = FloatVector.broadcast(F, qf[y3 + c]);
            g = FloatVector.broadcast(F, qf[y3 + 16 + c]);
            p30 = f0.fma(g, e0.fma(u, p30));
            p31 = f1.fma(g, e1.fma(u, p31));
            u = FloatVector.broadcast(F, qf[y4 + c]);
            g = FloatVector.broadcast(F, qf[y4 + 16 + c]);
            p40 = f0.fma(g, e0.fma(u, p40));
            p41 = f1.fma(g, e1.fma(u, p41));
        }
        p00.fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
        p30.fma(sc0, FloatVector.fromArray(F, work, wt + 6 * L)).intoArray(work, wt + 6 * L);
        p31.fma(sc1, FloatVector.fromArray(F, work, wt + 7 * L)).intoArray(work, wt + 7 * L);
        p40.fma(sc0, FloatVector.fromArray(F, work, wt + 8 * L)).intoArray(work, wt + 8 * L);
        p41.fma(sc1, FloatVector.fromArray(F, work, wt + 9 * L)).intoArray(work, wt + 9 * L);
    }

    private static void q5_KSub2(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = FloatVector.broadcast(F, 16f * sums[y0 / 32]), p01 = p00;
        FloatVector q00 = FloatVector.zero(F), q01 = q00;
        FloatVector p10 = FloatVector.broadcast(F, 16f * sums[y1 / 32]), p11 = p10;
        FloatVector q10 = FloatVector.zero(F), q11 = q10;
        for (int c = 0; c < 16; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = e0.fma(u, p00);
            p01 = e1.fma(u, p01);
            q00 = f0.fma(g, q00);
            q01 = f1.fma(g, q01);
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = e0.fma(u, p10);
            p11 = e1.fma(u, p11);
            q10 = f0.fma(g, q10);
            q11 = f1.fma(g, q11);
        }
        p00.add(q00).fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.add(q01).fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.add(q10).fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.add(q11).fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
    }

    private static void q5_KSub3(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = FloatVector.broadcast(F, 16f * sums[y0 / 32]), p01 = p00;
        FloatVector q00 = FloatVector.zero(F), q01 = q00;
        FloatVector p10 = FloatVector.broadcast(F, 16f * sums[y1 / 32]), p11 = p10;
        FloatVector q10 = FloatVector.zero(F), q11 = q10;
        FloatVector p20 = FloatVector.broadcast(F, 16f * sums[y2 / 32]), p21 = p20;
        FloatVector q20 = FloatVector.zero(F), q21 = q20;
        for (int c = 0; c < 16; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = e0.fma(u, p00);
            p01 = e1.fma(u, p01);
            q00 = f0.fma(g, q00);
            q01 = f1.fma(g, q01);
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = e0.fma(u, p10);
            p11 = e1.fma(u, p11);
            q10 = f0.fma(g, q10);
            q11 = f1.fma(g, q11);
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 16 + c]);
            p20 = e0.fma(u, p20);
            p21 = e1.fma(u, p21);
            q20 = f0.fma(g, q20);
            q21 = f1.fma(g, q21);
        }
        p00.add(q00).fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.add(q01).fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.add(q10).fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.add(q11).fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.add(q20).fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.add(q21).fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
    }

    private static void q5_KSub4(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys, y3 = y2 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = FloatVector.broadcast(F, 16f * sums[y0 / 32]), p01 = p00;
        FloatVector p10 = FloatVector.broadcast(F, 16f * sums[y1 / 32]), p11 = p10;
        FloatVector p20 = FloatVector.broadcast(F, 16f * sums[y2 / 32]), p21 = p20;
        FloatVector p30 = FloatVector.broadcast(F, 16f * sums[y3 / 32]), p31 = p30;
        for (int c = 0; c < 16; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = f0.fma(g, e0.fma(u, p00));
            p01 = f1.fma(g, e1.fma(u, p01));
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = f0.fma(g, e0.fma(u, p10));
            p11 = f1.fma(g, e1.fma(u, p11));
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 16 + c]);
            p20 = f0.fma(g, e0.fma(u, p20));
            p21 = f1.fma(g, e1.fma(u, p21));
            u = FloatVector.broadcast(F, qf[y3 + c]);
            g = FloatVector.broadcast(F, qf[y3 + 16 + c]);
            p30 = f0.fma(g, e0.fma(u, p30));
            p31 = f1.fma(g, e1.fma(u, p31));
        }
        p00.fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
        p30.fma(sc0, FloatVector.fromArray(F, work, wt + 6 * L)).intoArray(work, wt + 6 * L);
        p31.fma(sc1, FloatVector.fromArray(F, work, wt + 7 * L)).intoArray(work, wt + 7 * L);
    }

    private static void q5_KSub5(MemorySegment il, long sub, float[] qf, int[] sums, int[] lows, int y0, int ys,
            float[] work, int wt) {
        int y1 = y0 + ys, y2 = y1 + ys, y3 = y2 + ys, y4 = y3 + ys;
        FloatVector sc0 = scales(il, sub), sc1 = scales(il, sub + L);   // read in the layout's order
        long cAt = sub + 2L * GROUP;
        FloatVector p00 = FloatVector.broadcast(F, 16f * sums[y0 / 32]), p01 = p00;
        FloatVector p10 = FloatVector.broadcast(F, 16f * sums[y1 / 32]), p11 = p10;
        FloatVector p20 = FloatVector.broadcast(F, 16f * sums[y2 / 32]), p21 = p20;
        FloatVector p30 = FloatVector.broadcast(F, 16f * sums[y3 / 32]), p31 = p30;
        FloatVector p40 = FloatVector.broadcast(F, 16f * sums[y4 / 32]), p41 = p40;
        for (int c = 0; c < 16; c++) {
            long p = cAt + 2L * c * GROUP;
            IntVector v = pairs(il, p), z = pairs(il, p + GROUP);
            FloatVector e0 = bytes(v, 0), e1 = bytes(v, 1), f0 = bytes(z, 0), f1 = bytes(z, 1);
            FloatVector u = FloatVector.broadcast(F, qf[y0 + c]);
            FloatVector g = FloatVector.broadcast(F, qf[y0 + 16 + c]);
            p00 = f0.fma(g, e0.fma(u, p00));
            p01 = f1.fma(g, e1.fma(u, p01));
            u = FloatVector.broadcast(F, qf[y1 + c]);
            g = FloatVector.broadcast(F, qf[y1 + 16 + c]);
            p10 = f0.fma(g, e0.fma(u, p10));
            p11 = f1.fma(g, e1.fma(u, p11));
            u = FloatVector.broadcast(F, qf[y2 + c]);
            g = FloatVector.broadcast(F, qf[y2 + 16 + c]);
            p20 = f0.fma(g, e0.fma(u, p20));
            p21 = f1.fma(g, e1.fma(u, p21));
            u = FloatVector.broadcast(F, qf[y3 + c]);
            g = FloatVector.broadcast(F, qf[y3 + 16 + c]);
            p30 = f0.fma(g, e0.fma(u, p30));
            p31 = f1.fma(g, e1.fma(u, p31));
            u = FloatVector.broadcast(F, qf[y4 + c]);
            g = FloatVector.broadcast(F, qf[y4 + 16 + c]);
            p40 = f0.fma(g, e0.fma(u, p40));
            p41 = f1.fma(g, e1.fma(u, p41));
        }
        p00.fma(sc0, FloatVector.fromArray(F, work, wt)).intoArray(work, wt);
        p01.fma(sc1, FloatVector.fromArray(F, work, wt + L)).intoArray(work, wt + L);
        p10.fma(sc0, FloatVector.fromArray(F, work, wt + 2 * L)).intoArray(work, wt + 2 * L);
        p11.fma(sc1, FloatVector.fromArray(F, work, wt + 3 * L)).intoArray(work, wt + 3 * L);
        p20.fma(sc0, FloatVector.fromArray(F, work, wt + 4 * L)).intoArray(work, wt + 4 * L);
        p21.fma(sc1, FloatVector.fromArray(F, work, wt + 5 * L)).intoArray(work, wt + 5 * L);
        p30.fma(sc0, FloatVector.fromArray(F, work, wt + 6 * L)).intoArray(work, wt + 6 * L);
        p31.fma(sc1, FloatVector.fromArray(F, work, wt + 7 * L)).intoArray(work, wt + 7 * L);
        p40.fma(sc0, FloatVector.fromArray(F, work, wt + 8 * L)).intoArray(work, wt + 8 * L);
        p41.fma(sc1, FloatVector.fromArray(F, work, wt + 9 * L)).intoArray(work, wt + 9 * L);
    }

}
