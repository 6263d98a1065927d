package io.nereid.engine.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * GPT-2's reversible byte ↔ character map ({@code bytes_to_unicode}): byte-level BPE vocabularies
 * store tokens as strings over 256 printable characters, one per byte, so that {@code Ġ} is the
 * byte 0x20. Stateless; thread-safe.
 */
final class ByteLevel {

    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[324]; // highest mapped char is U+0143

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int extra = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + extra++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevel() {
    }

    /** The byte-level string of {@code text}'s UTF-8 bytes. */
    static String encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        char[] out = new char[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = BYTE_TO_CHAR[bytes[i] & 0xff];
        }
        return new String(out);
    }

    static char charOf(int b) {
        return BYTE_TO_CHAR[b & 0xff];
    }

    /**
     * The bytes a byte-level token string stands for, or {@code null} if it contains a character
     * outside the map (then it is not a byte-level token).
     */
    static byte[] decode(String token) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(token.length());
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
            if (b < 0) {
                return null;
            }
            out.write(b);
        }
        return out.toByteArray();
    }
}
