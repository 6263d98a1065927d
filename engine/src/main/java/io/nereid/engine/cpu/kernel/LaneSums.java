package io.nereid.engine.cpu.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;

/**
 * The one order in which every vector kernel adds up the lanes of an accumulator, for this JVM's
 * {@link VectorWidth}: lane {@code i} plus lane {@code i ^ h}, for {@code h} from half the width
 * down to 1, then lane 0. {@link #sum(FloatVector)} does it for one vector,
 * {@link #sum4} for four at once, {@link #sum(float[], int)} on lanes stored to an array; all give
 * the same bits, because each step adds the same pairs.
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

    private LaneSums() {
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

    /** {@link #sum(FloatVector)} of the vector stored at {@code lanes[off, off + L)}, which it overwrites. */
    public static float sum(float[] lanes, int off) {
        for (int h = LANES / 2; h >= 1; h /= 2) {
            for (int i = off; i < off + h; i++) {
                lanes[i] += lanes[i + h];
            }
        }
        return lanes[off];
    }
}
