package io.nereid.engine.structured;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Numeric ranges as grammars of decimal JSON numbers: exact integer ranges (the textbook split
 * into digit-count classes and then per-digit ranges), and numbers between decimal bounds (the
 * integer part against the bounds' integer parts, the fraction digit by digit where a bound's
 * integer part is reached; no exponent).
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
     * Numbers in the range (bounds null: unbounded; exclusive flags as JSON Schema's), or null when
     * the range is empty. Written without an exponent: an integer part and optional fraction
     * digits, compared with the bounds digit by digit.
     */
    static Expr numberRange(BigDecimal lo, boolean loExclusive, BigDecimal hi, boolean hiExclusive) {
        List<Expr> parts = new ArrayList<>();
        // x < 0, as "-" y with y > 0: y above max(-hi, 0) (exclusive at 0), y up to -lo
        if (lo == null || lo.signum() < 0) {
            BigDecimal a;
            boolean aEx;
            if (hi == null || hi.signum() >= 0) {
                a = BigDecimal.ZERO;
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
            Expr pos = nonNegative(fromZero ? BigDecimal.ZERO : lo, !fromZero && loExclusive, hi, hiExclusive);
            if (pos != null) {
                parts.add(pos);
            }
        }
        return parts.isEmpty() ? null : Expr.alt(parts);
    }

    /** Non-negative numbers y with a <= y (a < y when aEx) and y <= b (y < b when bEx; b null: none). */
    private static Expr nonNegative(BigDecimal a, boolean aEx, BigDecimal b, boolean bEx) {
        int c = b == null ? -1 : b.compareTo(a);
        if (b != null && (c < 0 || (c == 0 && (aEx || bEx)))) {
            return null;
        }
        BigInteger ia = a.setScale(0, java.math.RoundingMode.FLOOR).toBigIntegerExact();
        String fa = fraction(a);
        BigInteger ib = b == null ? null : b.setScale(0, java.math.RoundingMode.FLOOR).toBigIntegerExact();
        String fb = b == null ? null : fraction(b);
        List<Expr> parts = new ArrayList<>();
        if (ib != null && ia.equals(ib)) {
            Expr f = fractionPart(fa, aEx, fb, bEx);
            if (f != null) {
                parts.add(Expr.seq(Expr.literal(ia.toString()), f));
            }
            return parts.isEmpty() ? null : Expr.alt(parts);
        }
        Expr low = fractionPart(fa, aEx, null, false);
        if (low != null) {
            parts.add(Expr.seq(Expr.literal(ia.toString()), low));
        }
        BigInteger from = ia.add(BigInteger.ONE);
        BigInteger to = ib == null ? null : ib.subtract(BigInteger.ONE);
        if (to == null || from.compareTo(to) <= 0) {
            parts.add(Expr.seq(natural(from, to), Expr.opt(Expr.seq(Expr.literal("."), Expr.plus(DIGIT)))));
        }
        if (ib != null) {
            Expr high = fractionPart(null, false, fb, bEx);
            if (high != null) {
                parts.add(Expr.seq(Expr.literal(ib.toString()), high));
            }
        }
        return parts.isEmpty() ? null : Expr.alt(parts);
    }

    /** The fraction digits of {@code x} (its part after the point), without trailing zeros; "" for a whole number. */
    private static String fraction(BigDecimal x) {
        BigDecimal f = x.subtract(new BigDecimal(x.setScale(0, java.math.RoundingMode.FLOOR).toBigIntegerExact()));
        if (f.signum() == 0) {
            return "";
        }
        String plain = f.stripTrailingZeros().toPlainString();   // "0.25"
        return plain.substring(plain.indexOf('.') + 1);
    }

    /**
     * What may follow the integer part when the fraction must be at least {@code lo} (greater with
     * {@code loEx}) and at most {@code hi} (less with {@code hiEx}), each a digit string without
     * trailing zeros or null for no bound: nothing (a fraction of 0) where 0 qualifies, or "."
     * and at least one digit. Null when nothing qualifies.
     */
    private static Expr fractionPart(String lo, boolean loEx, String hi, boolean hiEx) {
        List<Expr> options = new ArrayList<>();
        if (endOk(lo, loEx, hi, hiEx, 0, lo != null, hi != null)) {
            options.add(Expr.EMPTY);
        }
        Expr digits = digits(lo, loEx, hi, hiEx, 0, lo != null, hi != null, false);
        if (digits != null) {
            options.add(Expr.seq(Expr.literal("."), digits));
        }
        return options.isEmpty() ? null : Expr.alt(options);
    }

    private static char digitAt(String bound, int i) {
        return i < bound.length() ? bound.charAt(i) : '0';
    }

    /** Whether the fraction may end after {@code i} digits equal, where still tight, to the bounds' first ones. */
    private static boolean endOk(String lo, boolean loEx, String hi, boolean hiEx, int i, boolean tightLo, boolean tightHi) {
        boolean lowOk = !tightLo || (i >= lo.length() && !loEx);   // below lo while its remaining digits are not all zero
        boolean highOk = !tightHi || i < hi.length() || !hiEx;      // below hi while digits of hi remain
        return lowOk && highOk;
    }

    /**
     * The digit strings from position {@code i} on (at least one digit when {@code mayEnd} is
     * false... and may end when the bounds allow it), given whether the digits so far equal each
     * bound's; null when none qualifies.
     */
    private static Expr digits(String lo, boolean loEx, String hi, boolean hiEx, int i, boolean tightLo, boolean tightHi,
            boolean mayEnd) {
        if (!tightLo && !tightHi) {
            return mayEnd ? Expr.star(DIGIT) : Expr.plus(DIGIT);
        }
        int len = Math.max(tightLo ? lo.length() : 0, tightHi ? hi.length() : 0);
        if (i >= len) {
            // past every bound's digits: the bounds continue with zeros
            if (tightLo && tightHi) {   // lo == hi here
                return loEx || hiEx ? null : (mayEnd ? Expr.star(Expr.literal("0")) : Expr.plus(Expr.literal("0")));
            }
            if (tightLo) {   // any digits are >= lo; > lo needs a nonzero one
                return loEx ? Expr.seq(Expr.star(Expr.literal("0")), Expr.range('1', '9'), Expr.star(DIGIT))
                        : (mayEnd ? Expr.star(DIGIT) : Expr.plus(DIGIT));
            }
            // tight on hi only: a nonzero digit would exceed it; zeros keep it equal
            return hiEx ? null : (mayEnd ? Expr.star(Expr.literal("0")) : Expr.plus(Expr.literal("0")));
        }
        List<Expr> options = new ArrayList<>();
        if (mayEnd && endOk(lo, loEx, hi, hiEx, i, tightLo, tightHi)) {
            options.add(Expr.EMPTY);
        }
        for (char d = '0'; d <= '9'; d++) {
            if (tightLo && d < digitAt(lo, i) || tightHi && d > digitAt(hi, i)) {
                continue;
            }
            Expr rest = digits(lo, loEx, hi, hiEx, i + 1, tightLo && d == digitAt(lo, i), tightHi && d == digitAt(hi, i), true);
            if (rest != null) {
                options.add(Expr.seq(Expr.literal(String.valueOf(d)), rest));
            }
        }
        return options.isEmpty() ? null : Expr.alt(options);
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
