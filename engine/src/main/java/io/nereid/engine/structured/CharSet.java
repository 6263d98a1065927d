package io.nereid.engine.structured;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A set of Unicode scalar values as sorted, disjoint, non-adjacent ranges ({@code lo0, hi0, lo1,
 * hi1, ...}), and its encodings into byte grammars: raw UTF-8 ({@link #utf8}) or as the body of a
 * JSON string, escapes included ({@link #jsonChar}). Immutable.
 */
final class CharSet {

    static final int MAX = 0x10FFFF;
    static final CharSet ALL = new CharSet(new int[] {0, MAX});
    static final CharSet NONE = new CharSet(new int[0]);
    /** What a JSON string never holds unescaped: control characters, the quote and the backslash. */
    private static final CharSet NOT_PLAIN = of(0, 0x1F).union(of('"')).union(of('\\'));

    final int[] ranges;

    private CharSet(int[] ranges) {
        this.ranges = ranges;
    }

    static CharSet of(int lo, int hi) {
        return new CharSet(new int[] {lo, hi});
    }

    static CharSet of(int c) {
        return of(c, c);
    }

    static CharSet ofChars(String chars) {
        CharSet s = NONE;
        for (int i = 0; i < chars.length(); i++) {
            s = s.union(of(chars.charAt(i)));
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CharSet c && Arrays.equals(ranges, c.ranges);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(ranges);
    }

    boolean isEmpty() {
        return ranges.length == 0;
    }

    boolean contains(int c) {
        for (int i = 0; i < ranges.length; i += 2) {
            if (c >= ranges[i] && c <= ranges[i + 1]) {
                return true;
            }
        }
        return false;
    }

    /** A merge of the two sorted range lists: linear, no boxing (compiling a format makes millions). */
    CharSet union(CharSet o) {
        int[] a = ranges, b = o.ranges;
        if (b.length == 0) {
            return this;
        }
        if (a.length == 0) {
            return o;
        }
        int[] out = new int[a.length + b.length];
        int n = 0, i = 0, j = 0;
        while (i < a.length || j < b.length) {
            int lo, hi;
            if (j >= b.length || (i < a.length && a[i] <= b[j])) {
                lo = a[i];
                hi = a[i + 1];
                i += 2;
            } else {
                lo = b[j];
                hi = b[j + 1];
                j += 2;
            }
            if (n > 0 && lo <= out[n - 1] + 1) {
                out[n - 1] = Math.max(out[n - 1], hi);
            } else {
                out[n++] = lo;
                out[n++] = hi;
            }
        }
        return new CharSet(n == out.length ? out : Arrays.copyOf(out, n));
    }

    CharSet complement() {
        int[] out = new int[ranges.length + 2];
        int n = 0;
        int next = 0;
        for (int i = 0; i < ranges.length; i += 2) {
            if (ranges[i] > next) {
                out[n++] = next;
                out[n++] = ranges[i] - 1;
            }
            next = ranges[i + 1] + 1;
        }
        if (next <= MAX) {
            out[n++] = next;
            out[n++] = MAX;
        }
        return new CharSet(Arrays.copyOf(out, n));
    }

    CharSet minus(CharSet o) {
        return complement().union(o).complement();
    }

    /** The characters as UTF-8 (surrogates excluded: they are not characters). */
    Expr utf8() {
        List<Expr> out = new ArrayList<>();
        CharSet s = minus(of(0xD800, 0xDFFF));
        for (int i = 0; i < s.ranges.length; i += 2) {
            int lo = s.ranges[i], hi = s.ranges[i + 1];
            int[][] widths = {{0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xFFFF}, {0x10000, MAX}};
            for (int[] w : widths) {
                int a = Math.max(lo, w[0]), z = Math.min(hi, w[1]);
                if (a <= z) {
                    split(a, z, out);
                }
            }
        }
        return out.isEmpty() ? null : Expr.alt(out);
    }

    /** [a, z], both of one UTF-8 length, as byte-range sequences (Russ Cox's utf8 ranges). */
    private static void split(int a, int z, List<Expr> out) {
        int n = length(a);
        if (n == 1) {
            out.add(Expr.range(a, z));
            return;
        }
        for (int i = 1; i < n; i++) {
            int m = (1 << (6 * i)) - 1;
            if ((a & ~m) != (z & ~m)) {
                if ((a & m) != 0) {
                    split(a, a | m, out);
                    split((a | m) + 1, z, out);
                    return;
                }
                if ((z & m) != m) {
                    split(a, (z & ~m) - 1, out);
                    split(z & ~m, z, out);
                    return;
                }
            }
        }
        byte[] ea = encode(a), ez = encode(z);
        List<Expr> seq = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            seq.add(Expr.range(ea[i] & 0xFF, ez[i] & 0xFF));
        }
        out.add(Expr.seq(seq));
    }

    private static int length(int c) {
        return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }

    private static byte[] encode(int c) {
        return new String(Character.toChars(c)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * One character of the set as it may appear inside a JSON string: unescaped where JSON allows
     * it (not {@code "}, {@code \} or a control character), and escaped as {@code \"}, {@code \\},
     * {@code \/}, {@code \b \f \n \r \t} or {@code \}{@code u00XX} for the characters that have
     * such an escape. Returns null for the empty set.
     */
    Expr jsonChar() {
        List<Expr> options = new ArrayList<>();
        Expr plain = minus(NOT_PLAIN).utf8();
        if (plain != null) {
            options.add(plain);
        }
        String simple = "\"\\/\b\f\n\r\t";
        String letters = "\"\\/bfnrt";
        for (int i = 0; i < simple.length(); i++) {
            if (contains(simple.charAt(i))) {
                options.add(Expr.literal("\\" + letters.charAt(i)));
            }
        }
        for (int c = 0; c < 0x20; c++) {
            if (contains(c)) {
                options.add(Expr.seq(Expr.literal("\\u00" + (c >> 4)), hexDigit(c & 15)));
            }
        }
        return options.isEmpty() ? null : Expr.alt(options);
    }

    /** One hex digit of value {@code v}, either case. */
    static Expr hexDigit(int v) {
        return v < 10 ? Expr.range('0' + v, '0' + v) : Expr.union(Expr.range('a' + v - 10, 'a' + v - 10),
                Expr.range('A' + v - 10, 'A' + v - 10));
    }
}
