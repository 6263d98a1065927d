package io.nereid.engine.text;

import io.nereid.engine.tokenizer.SpecialTokens;
import io.nereid.engine.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A byte-fallback vocabulary for tests: ids 0..255 are the single bytes ({@code <0xE6>}), then
 * three special tokens, then multi-byte pieces, added on demand by {@link #id(byte[])} so a test can
 * cut text anywhere and still have a token for each piece. Decoding is the interface's default,
 * the reference the detokenizer must reproduce. Grows while used: single-threaded tests only.
 */
final class FakeTokenizer implements Tokenizer {

    static final int BOS = 256;
    static final int EOS = 257;
    static final int EOT = 258;

    private final boolean stripsLeadingSpace;
    private final List<byte[]> vocab = new ArrayList<>();
    /** Piece bytes read as ISO-8859-1, which maps every byte string to a distinct key. */
    private final Map<String, Integer> ids = new HashMap<>();

    FakeTokenizer(boolean stripsLeadingSpace) {
        this.stripsLeadingSpace = stripsLeadingSpace;
        for (int b = 0; b < 256; b++) {
            vocab.add(new byte[] {(byte) b});
        }
        for (String special : List.of("<s>", "</s>", "<|eot|>")) {
            vocab.add(special.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The token for these bytes: the byte token for one byte, else a piece (never a special token). */
    int id(byte[] bytes) {
        if (bytes.length == 1) {
            return bytes[0] & 0xFF;
        }
        return ids.computeIfAbsent(new String(bytes, StandardCharsets.ISO_8859_1), key -> {
            vocab.add(bytes.clone());
            return vocab.size() - 1;
        });
    }

    int id(String text) {
        return id(text.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public int vocabSize() {
        return vocab.size();
    }

    /** One byte token per UTF-8 byte: enough for a fake, the detokenizer never encodes. */
    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] out = new int[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = bytes[i] & 0xFF;
        }
        return out;
    }

    @Override
    public byte[] tokenBytes(int id) {
        return vocab.get(id).clone();
    }

    @Override
    public boolean stripsLeadingSpace() {
        return stripsLeadingSpace;
    }

    @Override
    public String piece(int id) {
        return id < 256 ? String.format("<0x%02X>", id) : new String(vocab.get(id), StandardCharsets.UTF_8);
    }

    @Override
    public boolean isSpecial(int id) {
        return id == BOS || id == EOS || id == EOT;
    }

    @Override
    public SpecialTokens specialTokens() {
        return new SpecialTokens(BOS, EOS, EOT, -1, -1, -1, true, false);
    }
}
