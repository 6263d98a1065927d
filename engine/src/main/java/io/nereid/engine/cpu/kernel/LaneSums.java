package io.nereid.engine.cpu.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;

/**
 * The one order in which every vector kernel adds up the lanes of an accumulator, for this JVM's
 * {@link VectorWidth}: lane {@code i} plus lane {@code i ^ h}, for {@code h} from half the width
 * down to 1, then lane 0. {@link #sum(FloatVector)} does it for one vector,
 * {@link #sum4} for four at once and {@link #sum16} for the sixteen accumulators of a 4 x 4 tile;
 * all give the same bits, because each step adds the same pairs.
 *
 * <p>Why not {@code reduceLanes(ADD)}: its order is unspecified, compiles to an ordered sum on
 * x86 and a tree on AArch64, and the interpreted fallback sums in order from zero, so a token's
 * logits would change as C2 compiled the kernels. Why not {@code slice}: it is not intrinsified,
 * and the kernels ran 12 times slower with it. The code has no loops and every shuffle is a
 * static final: a shuffle chosen inside a loop C2 does not unroll is not a constant, and the
 * permute then runs as Java code, boxing its vectors.
 *
 * <p>Stateless. Loading this class needs {@code jdk.incubator.vector}.
 */
public final class LaneSums {

    private static final VectorWidth W = VectorWidth.current();
    private static final int LANES = W.floats().length();
    private static final VectorShuffle<Float> XOR_8 = xor(8);
    private static final VectorShuffle<Float> XOR_4 = xor(4);
    private static final VectorShuffle<Float> XOR_2 = xor(2);
    private static final VectorShuffle<Float> XOR_1 = xor(1);
    private static final VectorShuffle<Float> XOR_HALF = xor(LANES / 2);
    private static final VectorShuffle<Float> XOR_QUARTER = xor(LANES / 4);

    /** Lanes {@code [L/2, L)}: where {@link #sum4} keeps the second of two vectors it packs. */
    private static final VectorMask<Float> UPPER_HALF = VectorMask.fromLong(W.floats(), -1L << (LANES / 2));
    /** Lanes {@code [L/4, L/2)} and {@code [3L/4, L)}: where it keeps the second of the next pair. */
    private static final VectorMask<Float> ODD_QUARTERS = VectorMask.fromLong(W.floats(),
            ((1L << LANES / 4) - 1) * ((1L << LANES / 4) | (1L << 3 * LANES / 4)));

    /*
     * Where sum16 stores a tile's sums from: at 512 bits lanes 4t..4t+3 are token t's, at 256 bits
     * lanes 0..3 and 4..7 tokens 2g and 2g + 1 of the g-th vector. Each masked store writes only
     * its token's four floats; its offset (the row minus the first lane) is never below zero and
     * its vector never past the last token's row, since rows are at least four apart, so C2's
     * intrinsic takes the store (a store reaching past the array would take the slow path).
     * Stored straight from the register: storing the vector to scratch and copying its floats
     * out one by one stalled on store-to-load forwarding (7 % of a pp512 in JFR).
     */
    private static final VectorMask<Float> FOUR_0 = lanes(0, 4);
    private static final VectorMask<Float> FOUR_1 = lanes(4, 8);
    private static final VectorMask<Float> FOUR_2 = lanes(8, 12);
    private static final VectorMask<Float> FOUR_3 = lanes(12, 16);

    /*
     * Two-vector selections for sum16: at half-width h, lane p takes element (p / h) * 2h + p % h
     * (LO) or that plus h (HI) of the concatenation of two vectors, so that LO + HI adds lane i
     * and lane i + h of every 2h-lane chunk, and packs the two vectors' chunk sums into one.
     */
    private static final FloatVector LO_8 = pairIndexes(8, 0);
    private static final FloatVector HI_8 = pairIndexes(8, 8);
    private static final FloatVector LO_4 = pairIndexes(4, 0);
    private static final FloatVector HI_4 = pairIndexes(4, 4);
    private static final FloatVector LO_2 = pairIndexes(2, 0);
    private static final FloatVector HI_2 = pairIndexes(2, 2);
    private static final FloatVector LO_1 = pairIndexes(1, 0);
    private static final FloatVector HI_1 = pairIndexes(1, 1);

    private LaneSums() {
    }

    /** Lanes {@code [from, to)} clipped to the width (empty where the width has fewer; then unused). */
    private static VectorMask<Float> lanes(int from, int to) {
        long bits = 0;
        for (int i = from; i < Math.min(to, LANES); i++) {
            bits |= 1L << i;
        }
        return VectorMask.fromLong(W.floats(), bits);
    }

    private static FloatVector pairIndexes(int h, int plus) {
        float[] index = new float[LANES];
        for (int p = 0; p < LANES; p++) {
            index[p] = h < LANES ? (p / h) * 2 * h + p % h + plus : 0;
        }
        return FloatVector.fromArray(W.floats(), index, 0);
    }

    /** {@code i -> i ^ h} (wrapped into range where {@code h} is not below the width: never used there). */
    private static VectorShuffle<Float> xor(int h) {
        return VectorShuffle.fromOp(W.floats(), i -> (i ^ h) % LANES);
    }

    /** The lanes of {@code v}, added in the order above. */
    public static float sum(FloatVector v) {
        if (LANES > 8) {
            v = v.add(v.rearrange(XOR_8));
        }
        if (LANES > 4) {
            v = v.add(v.rearrange(XOR_4));
        }
        v = v.add(v.rearrange(XOR_2));
        v = v.add(v.rearrange(XOR_1));
        return v.lane(0);
    }

    /**
     * {@link #sum(FloatVector)} of four vectors at once, into {@code out[off, off + 4)}: the same
     * pairs added in the same order, with the partial sums of two vectors packed into one
     * register after each of the first two steps (a half-folded vector holds its sums twice, so
     * half of it is free). Fewer operations than four trees, and few enough nodes that C2 inlines
     * it into a kernel; four separate trees are not, and their vectors are boxed.
     */
    public static void sum4(FloatVector a, FloatVector b, FloatVector c, FloatVector d, float[] out, int off) {
        FloatVector ab = a.add(a.rearrange(XOR_HALF)).blend(b.add(b.rearrange(XOR_HALF)), UPPER_HALF);
        FloatVector cd = c.add(c.rearrange(XOR_HALF)).blend(d.add(d.rearrange(XOR_HALF)), UPPER_HALF);
        FloatVector abcd = ab.add(ab.rearrange(XOR_QUARTER)).blend(cd.add(cd.rearrange(XOR_QUARTER)), ODD_QUARTERS);
        if (LANES == 16) {
            abcd = abcd.add(abcd.rearrange(XOR_2));
        }
        if (LANES >= 8) {
            abcd = abcd.add(abcd.rearrange(XOR_1));
        }
        out[off] = abcd.lane(0);
        out[off + 1] = abcd.lane(LANES / 2);
        out[off + 2] = abcd.lane(LANES / 4);
        out[off + 3] = abcd.lane(3 * LANES / 4);
    }

    /**
     * The sums, as {@link #sum(FloatVector)} adds them, of the sixteen vectors stored at
     * {@code lanes[off + k * L]} (k = 4t + j: token t, row j of a tile), into
     * {@code out[outOff + t * outStride + j]} ({@code outStride >= 4}).
     *
     * <p>Not four {@link #sum4}: those extract lanes one by one, and four of them inlined into a
     * tile kernel pass C2's node budget, which then leaves calls out of line and boxes their
     * vectors (seen: 17 GB allocated in a 10 s pp512). Here each step adds two vectors' lane pairs
     * at once and packs the results into one vector, a tree of 15 additions and 30 two-vector
     * selections ({@code vpermi2ps}) that ends with the sixteen sums in one vector (four at 128
     * bits), in the same pairs and order as {@link #sum(FloatVector)}: the tile stays bit-identical
     * to the single-token kernels.
     */
    public static void sum16(float[] lanes, int off, float[] out, int outOff, int outStride) {
        int l = LANES;
        int o1 = outOff + outStride, o2 = o1 + outStride, o3 = o2 + outStride;
        if (l == 16) {
            FloatVector c0 = pair(lanes, off, LO_8, HI_8), c1 = pair(lanes, off + 2 * l, LO_8, HI_8);
            FloatVector c2 = pair(lanes, off + 4 * l, LO_8, HI_8), c3 = pair(lanes, off + 6 * l, LO_8, HI_8);
            FloatVector c4 = pair(lanes, off + 8 * l, LO_8, HI_8), c5 = pair(lanes, off + 10 * l, LO_8, HI_8);
            FloatVector c6 = pair(lanes, off + 12 * l, LO_8, HI_8), c7 = pair(lanes, off + 14 * l, LO_8, HI_8);
            FloatVector d0 = pair(c0, c1, LO_4, HI_4), d1 = pair(c2, c3, LO_4, HI_4);
            FloatVector d2 = pair(c4, c5, LO_4, HI_4), d3 = pair(c6, c7, LO_4, HI_4);
            FloatVector e0 = pair(d0, d1, LO_2, HI_2), e1 = pair(d2, d3, LO_2, HI_2);
            FloatVector sums = pair(e0, e1, LO_1, HI_1);
            // token t's four sums, lanes 4t..4t+3, stored straight to its row (masked stores,
            // always within out: see the masks' comment)
            sums.intoArray(out, outOff, FOUR_0);
            sums.intoArray(out, o1 - 4, FOUR_1);
            sums.intoArray(out, o2 - 8, FOUR_2);
            sums.intoArray(out, o3 - 12, FOUR_3);
        } else if (l == 8) {
            for (int g = 0; g < 2; g++) {   // tokens 2g and 2g + 1
                int o = off + g * 8 * l;
                FloatVector c0 = pair(lanes, o, LO_4, HI_4), c1 = pair(lanes, o + 2 * l, LO_4, HI_4);
                FloatVector c2 = pair(lanes, o + 4 * l, LO_4, HI_4), c3 = pair(lanes, o + 6 * l, LO_4, HI_4);
                FloatVector d0 = pair(c0, c1, LO_2, HI_2), d1 = pair(c2, c3, LO_2, HI_2);
                FloatVector sums = pair(d0, d1, LO_1, HI_1);
                int first = g == 0 ? outOff : o2;
                sums.intoArray(out, first, FOUR_0);
                sums.intoArray(out, first + outStride - 4, FOUR_1);
            }
        } else {
            for (int t = 0; t < 4; t++) {
                int o = off + t * 4 * l;
                FloatVector c0 = pair(lanes, o, LO_2, HI_2), c1 = pair(lanes, o + 2 * l, LO_2, HI_2);
                pair(c0, c1, LO_1, HI_1).intoArray(out, outOff + t * outStride);
            }
        }
    }

    /** The two vectors stored at {@code lanes[off]} and {@code lanes[off + L]}, paired. */
    private static FloatVector pair(float[] lanes, int off, FloatVector lo, FloatVector hi) {
        return pair(FloatVector.fromArray(W.floats(), lanes, off), FloatVector.fromArray(W.floats(), lanes, off + LANES),
                lo, hi);
    }

    private static FloatVector pair(FloatVector x, FloatVector y, FloatVector lo, FloatVector hi) {
        return lo.selectFrom(x, y).add(hi.selectFrom(x, y));
    }

}
