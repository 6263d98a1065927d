package io.nereid.engine.structured;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link CharSet}'s merges against a bitset over the same characters: union, complement and
 * minus give the characters they should, in canonical form (sorted, disjoint, non-adjacent
 * ranges), and equal sets are equal objects.
 */
class CharSetTest {

    /** Characters 0..SMALL and the last SMALL below {@link CharSet#MAX}: both ends of the range. */
    private static final int SMALL = 200;

    private static CharSet random(Random r, BitSet bits) {
        CharSet s = CharSet.NONE;
        for (int k = r.nextInt(6); k > 0; k--) {
            int base = r.nextBoolean() ? 0 : CharSet.MAX - SMALL;
            int lo = base + r.nextInt(SMALL + 1);
            int hi = Math.min(base + SMALL, lo + r.nextInt(12));
            s = s.union(CharSet.of(lo, hi));
            bits.set(lo, hi + 1);
        }
        return s;
    }

    private static void assertSame(BitSet expected, CharSet actual) {
        for (int c = 0; c <= CharSet.MAX; c = c == SMALL ? CharSet.MAX - SMALL : c + 1) {
            assertEquals(expected.get(c), actual.contains(c), "character " + c);
        }
        int[] r = actual.ranges;
        for (int i = 0; i < r.length; i += 2) {
            assertTrue(r[i] <= r[i + 1], "a range runs upwards");
            assertTrue(i == 0 || r[i] > r[i - 1] + 1, "ranges apart, not touching: " + java.util.Arrays.toString(r));
        }
    }

    @Test
    void mergesGiveTheCharactersOfABitset() {
        Random random = new Random(7);
        for (int trial = 0; trial < 400; trial++) {
            BitSet a = new BitSet(), b = new BitSet();
            CharSet x = random(random, a), y = random(random, b);
            BitSet union = (BitSet) a.clone();
            union.or(b);
            assertSame(union, x.union(y));
            BitSet minus = (BitSet) a.clone();
            minus.andNot(b);
            assertSame(minus, x.minus(y));
            BitSet complement = new BitSet();
            for (int c = 0; c <= CharSet.MAX; c = c == SMALL ? CharSet.MAX - SMALL : c + 1) {
                complement.set(c, !a.get(c));
            }
            assertSame(complement, x.complement());
            assertEquals(x, x.complement().complement());
            assertEquals(x.union(y), y.union(x));
            assertEquals(x.union(y).hashCode(), y.union(x).hashCode());
        }
    }
}
