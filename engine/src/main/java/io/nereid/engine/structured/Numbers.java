package io.nereid.engine.structured;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Numeric ranges as grammars of decimal JSON numbers: exact integer ranges (the textbook split
 * into digit-count classes and then per-digit ranges), and numbers between whole-number bounds
 * (integer part against the bounds, fraction digits where the bound is reached, no exponent).
 */
final class Numbers {

    private static final Expr DIGIT = Expr.range('0', '9');

    private Numbers() {
    }

    /** Integers in [lo, hi] (either may be null: unbounded), without leading zeros or "-0". */
    static Expr integerRange(BigInteger lo, BigInteger hi) {
        List<Expr> parts = new ArrayList<>();
        if (lo == null || lo.signum() < 0) {
            // negatives in [lo, min(hi, -1)]: "-" and magnitudes in [max(-hi, 1), -lo]
            BigInteger magLo = hi == null || hi.signum() >= 0 ? BigInteger.ONE : hi.negate();
            BigInteger magHi = lo == null ? null : lo.negate();
            if (magHi == null || magLo.compareTo(magHi) <= 0) {
                parts.add(Expr.seq(Expr.literal("-"), natural(magLo, magHi)));
            }
        }
        BigInteger from = lo == null || lo.signum() < 0 ? BigInteger.ZERO : lo;
        if (hi == null || from.compareTo(hi) <= 0) {
            parts.add(natural(from, hi));
        }
        return Expr.alt(parts);
    }

    /**
     * Numbers in the range with whole-number bounds (null: unbounded; exclusive flags as JSON
     * Schema's), or null when the range is empty. Written without an exponent.
     */
    static Expr numberRange(BigInteger lo, boolean loExclusive, BigInteger hi, boolean hiExclusive) {
        List<Expr> parts = new ArrayList<>();
        // x < 0, as "-" y with y > 0: y above max(-hi, 0) (exclusive at 0), y up to -lo
        if (lo == null || lo.signum() < 0) {
            BigInteger a;
            boolean aEx;
            if (hi == null || hi.signum() >= 0) {
                a = BigInteger.ZERO;
                aEx = true;
            } else {
                a = hi.negate();
                aEx = hiExclusive;
            }
            Expr neg = nonNegative(a, aEx, lo == null ? null : lo.negate(), loExclusive);
            if (neg != null) {
                parts.add(Expr.seq(Expr.literal("-"), neg));
            }
        }
        if (hi == null || hi.signum() >= 0) {
            boolean fromZero = lo == null || lo.signum() < 0;
            Expr pos = nonNegative(fromZero ? BigInteger.ZERO : lo, !fromZero && loExclusive, hi, hiExclusive);
            if (pos != null) {
                parts.add(pos);
            }
        }
        return parts.isEmpty() ? null : Expr.alt(parts);
    }

    /** Non-negative numbers y with a <= y (a < y when aEx) and y <= b (y < b when bEx; b null: none). */
    private static Expr nonNegative(BigInteger a, boolean aEx, BigInteger b, boolean bEx) {
        if (b != null && (b.compareTo(a) < 0 || (b.equals(a) && (aEx || bEx)))) {
            return null;
        }
        Expr anyFraction = Expr.opt(Expr.seq(Expr.literal("."), Expr.plus(DIGIT)));
        Expr zeroFraction = Expr.opt(Expr.seq(Expr.literal("."), Expr.plus(Expr.literal("0"))));
        Expr nonzeroFraction = Expr.seq(Expr.literal("."), Expr.star(DIGIT), Expr.range('1', '9'), Expr.star(DIGIT));
        List<Expr> parts = new ArrayList<>();
        if (b != null && b.equals(a)) {
            parts.add(Expr.seq(Expr.literal(a.toString()), zeroFraction));
            return Expr.alt(parts);
        }
        // integer part a: y = a.f, below b since a < b
        parts.add(Expr.seq(Expr.literal(a.toString()), aEx ? nonzeroFraction : anyFraction));
        // integer part strictly between
        BigInteger from = a.add(BigInteger.ONE);
        BigInteger to = b == null ? null : b.subtract(BigInteger.ONE);
        if (to == null || from.compareTo(to) <= 0) {
            parts.add(Expr.seq(natural(from, to), anyFraction));
        }
        if (b != null && !bEx) {
            parts.add(Expr.seq(Expr.literal(b.toString()), zeroFraction));
        }
        return Expr.alt(parts);
    }

    /** Naturals in [a, b] (b null: unbounded) in decimal without leading zeros. */
    static Expr natural(BigInteger a, BigInteger b) {
        String as = a.toString();
        List<Expr> parts = new ArrayList<>();
        int maxLen = b == null ? as.length() : b.toString().length();
        for (int len = as.length(); len <= maxLen; len++) {
            String lo = len == as.length() ? as : "1" + "0".repeat(len - 1);
            if (len == 1 && len != as.length()) {
                lo = "0";
            }
            String hi = b != null && len == maxLen ? b.toString() : "9".repeat(len);
            if (lo.compareTo(hi) <= 0) {
                parts.add(fixed(lo, hi));
            }
        }
        if (b == null) {
            parts.add(Expr.seq(Expr.range('1', '9'), new Expr.Repeat(DIGIT, as.length(), -1)));
        }
        return Expr.alt(parts);
    }

    /** Digit strings of one length between lo and hi (inclusive, same length), leading zeros as given. */
    private static Expr fixed(String lo, String hi) {
        int n = lo.length();
        if (n == 0) {
            return Expr.EMPTY;
        }
        if (lo.equals(hi)) {
            return Expr.literal(lo);
        }
        char d1 = lo.charAt(0), d2 = hi.charAt(0);
        String restLo = lo.substring(1), restHi = hi.substring(1);
        if (d1 == d2) {
            return Expr.seq(Expr.literal(String.valueOf(d1)), fixed(restLo, restHi));
        }
        List<Expr> parts = new ArrayList<>();
        boolean loFull = restLo.chars().allMatch(c -> c == '0');
        boolean hiFull = restHi.chars().allMatch(c -> c == '9');
        char midLo = loFull ? d1 : (char) (d1 + 1);
        char midHi = hiFull ? d2 : (char) (d2 - 1);
        if (!loFull) {
            parts.add(Expr.seq(Expr.literal(String.valueOf(d1)), fixed(restLo, "9".repeat(n - 1))));
        }
        if (midLo <= midHi) {
            parts.add(Expr.seq(Expr.range(midLo, midHi), new Expr.Repeat(DIGIT, n - 1, n - 1)));
        }
        if (!hiFull) {
            parts.add(Expr.seq(Expr.literal(String.valueOf(d2)), fixed("0".repeat(n - 1), restHi)));
        }
        return Expr.alt(parts);
    }
}
