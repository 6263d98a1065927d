package io.nereid.engine.text;

import java.util.ArrayList;
import java.util.List;

/**
 * Fragmentations of a sequence of {@code length} units (bytes or chars), as the ascending inner
 * cut positions: {@code {}} is one piece, {@code {2, 5}} is [0,2) [2,5) [5,length).
 */
final class Cuts {

    private Cuts() {
    }

    /** Every fragmentation into one, two or three non-empty pieces. */
    static List<int[]> intoAtMostThree(int length) {
        List<int[]> out = new ArrayList<>();
        out.add(new int[0]);
        for (int i = 1; i < length; i++) {
            out.add(new int[] {i});
            for (int j = i + 1; j < length; j++) {
                out.add(new int[] {i, j});
            }
        }
        return out;
    }

    /** All 2^(length-1) fragmentations; keep length small. */
    static List<int[]> all(int length) {
        if (length > 16) {
            throw new IllegalArgumentException("2^" + (length - 1) + " fragmentations is too many for a test");
        }
        List<int[]> out = new ArrayList<>();
        for (int mask = 0; mask < 1 << Math.max(0, length - 1); mask++) {
            int[] cuts = new int[Integer.bitCount(mask)];
            for (int bit = 0, n = 0; bit < length - 1; bit++) {
                if ((mask & 1 << bit) != 0) {
                    cuts[n++] = bit + 1;
                }
            }
            out.add(cuts);
        }
        return out;
    }

    /** Piece boundaries {@code 0, cuts…, length}. */
    static int[] bounds(int[] cuts, int length) {
        int[] b = new int[cuts.length + 2];
        System.arraycopy(cuts, 0, b, 1, cuts.length);
        b[b.length - 1] = length;
        return b;
    }
}
