package io.nereid.engine.text;

/**
 * Where a byte stream can be cut so that decoding the two parts separately with
 * {@code new String(bytes, UTF_8)} gives the same text as decoding them together.
 *
 * <p>The only bytes that must be held are a trailing lead byte plus the continuation bytes after
 * it while they are still a <em>prefix</em> of a sequence Java's decoder would read as one unit:
 *
 * <pre>
 *   lead      2nd byte     then    Java reads it as
 *   C2..DF    80..BF       -       one character
 *   E0        A0..BF       80..BF  one character
 *   E1..EF    80..BF       80..BF  one character; ED A0..BF xx is an encoded surrogate that Java
 *                                  reads as ONE U+FFFD, so it is held like a valid prefix
 *   F0        90..BF       80..BF  80..BF
 *   F1..F3    80..BF       80..BF  80..BF
 *   F4        80..8F       80..BF  80..BF
 * </pre>
 *
 * Everything else (ASCII, a lone continuation byte, C0, C1, F5..FF, a lead followed by a byte
 * outside its range) is already decided: Java's decoder replaces it the same way whatever comes
 * next, and the unit before a lead byte never swallows that lead (units only ever swallow
 * continuation bytes), so cutting just before the held lead is safe.
 *
 * <p>Stateless; thread-safe.
 */
final class Utf8Tail {

    private Utf8Tail() {
    }

    /**
     * Number of bytes at the end of {@code bytes[from, to)} that form an incomplete but still
     * possibly complete unit (0 to 3).
     */
    static int incompleteLength(byte[] bytes, int from, int to) {
        // A held unit is a lead and at most two continuation bytes, so look back at most 3 bytes.
        for (int back = 1; back <= 3 && to - back >= from; back++) {
            int b = bytes[to - back] & 0xFF;
            if (b < 0x80) {
                return 0;
            }
            if (b >= 0xC0) {
                boolean stillPossible = back < unitLength(b)
                        && (back == 1 || secondByteFits(b, bytes[to - back + 1] & 0xFF));
                return stillPossible ? back : 0;
            }
            // continuation byte: the lead, if any, is further back
        }
        return 0;
    }

    /** Bytes of the unit a lead starts; 0 for bytes that never start a multi-byte character. */
    private static int unitLength(int lead) {
        if (lead >= 0xC2 && lead <= 0xDF) {
            return 2;
        }
        if (lead >= 0xE0 && lead <= 0xEF) {
            return 3;
        }
        if (lead >= 0xF0 && lead <= 0xF4) {
            return 4;
        }
        return 0;
    }

    /**
     * The restricted ranges that exclude overlong forms (E0, F0) and code points past U+10FFFF
     * (F4). ED keeps the full range on purpose: see the class comment.
     */
    private static boolean secondByteFits(int lead, int second) {
        return switch (lead) {
            case 0xE0 -> second >= 0xA0 && second <= 0xBF;
            case 0xF0 -> second >= 0x90 && second <= 0xBF;
            case 0xF4 -> second >= 0x80 && second <= 0x8F;
            default -> second >= 0x80 && second <= 0xBF;
        };
    }
}
