package io.nereid.engine.structured;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A grammar expression over bytes, what the compilers (JSON Schema, regex, choice, GBNF) build and
 * {@link Grammar.Builder} lowers into rules. Immutable.
 *
 * <p>Byte {@value #SPECIAL} is never valid UTF-8 and belongs to no byte set the factories here make
 * ({@link #range} stops below it): it only brackets a special token's text, {@link #special}, so a
 * special (control) token is the one way to write that part of the grammar and no ordinary token
 * can spell it (llguidance marks special tokens with the same byte).
 */
sealed interface Expr {

    /** The byte that brackets a special token's text; in no ordinary byte set. */
    int SPECIAL = 0xFF;

    /** The empty string. */
    Expr EMPTY = new Seq(List.of());

    /** The items one after the other. */
    record Seq(List<Expr> items) implements Expr {
        public Seq {
            items = List.copyOf(items);
        }
    }

    /** Any one of the options. */
    record Alt(List<Expr> options) implements Expr {
        public Alt {
            options = List.copyOf(options);
        }
    }

    /** One byte from a set (bit {@code b} of the 256-bit set {@code bits} allows byte {@code b}). */
    record Bytes(long[] bits) implements Expr {
        public Bytes {
            bits = bits.clone();
        }

        boolean isEmpty() {
            return (bits[0] | bits[1] | bits[2] | bits[3]) == 0;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Bytes b && Arrays.equals(bits, b.bits);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bits);
        }
    }

    /** A named rule of the grammar being built ({@link Grammar.Builder#rule}). */
    record Ref(int rule) implements Expr {
    }

    /** {@code item} at least {@code min} and at most {@code max} times; {@code max} -1 for no bound. */
    record Repeat(Expr item, int min, int max) implements Expr {
        public Repeat {
            if (min < 0 || (max >= 0 && max < min)) {
                throw new IllegalArgumentException("repeat {" + min + "," + max + "}");
            }
        }
    }

    static Expr seq(Expr... items) {
        return items.length == 1 ? items[0] : new Seq(List.of(items));
    }

    static Expr seq(List<Expr> items) {
        return items.size() == 1 ? items.get(0) : new Seq(items);
    }

    static Expr alt(Expr... options) {
        return options.length == 1 ? options[0] : new Alt(List.of(options));
    }

    static Expr alt(List<Expr> options) {
        return options.size() == 1 ? options.get(0) : new Alt(options);
    }

    static Expr star(Expr e) {
        return new Repeat(e, 0, -1);
    }

    static Expr plus(Expr e) {
        return new Repeat(e, 1, -1);
    }

    static Expr opt(Expr e) {
        return new Repeat(e, 0, 1);
    }

    /** The bytes of {@code text} in UTF-8, in order. */
    static Expr literal(String text) {
        return literal(text.getBytes(StandardCharsets.UTF_8));
    }

    static Expr literal(byte[] bytes) {
        List<Expr> items = new ArrayList<>(bytes.length);
        for (byte b : bytes) {
            if ((b & 0xFF) == SPECIAL) {
                throw new GrammarException("byte 0xFF is not UTF-8 and cannot be written");
            }
            items.add(range(b & 0xFF, b & 0xFF));
        }
        return seq(items);
    }

    /**
     * The special (control) token whose text is {@code text}: {@value #SPECIAL}, the text, {@value #SPECIAL}
     * (see {@link TokenTrie}, which spells special tokens so).
     */
    static Expr special(String text) {
        long[] mark = new long[4];
        mark[SPECIAL >>> 6] |= 1L << (SPECIAL & 63);
        return seq(new Bytes(mark), literal(text), new Bytes(mark));
    }

    /** One byte in {@code [lo, hi]}, {@link #SPECIAL} left out. */
    static Bytes range(int lo, int hi) {
        long[] bits = new long[4];
        for (int b = lo; b <= Math.min(hi, SPECIAL - 1); b++) {
            bits[b >>> 6] |= 1L << (b & 63);
        }
        return new Bytes(bits);
    }

    /** One byte among {@code chars} (ASCII). */
    static Bytes anyOf(String chars) {
        long[] bits = new long[4];
        for (char c : chars.toCharArray()) {
            bits[c >>> 6] |= 1L << (c & 63);
        }
        return new Bytes(bits);
    }

    static Bytes union(Bytes a, Bytes b) {
        long[] bits = new long[4];
        for (int i = 0; i < 4; i++) {
            bits[i] = a.bits[i] | b.bits[i];
        }
        return new Bytes(bits);
    }

    static Bytes minus(Bytes a, Bytes b) {
        long[] bits = new long[4];
        for (int i = 0; i < 4; i++) {
            bits[i] = a.bits[i] & ~b.bits[i];
        }
        return new Bytes(bits);
    }
}
