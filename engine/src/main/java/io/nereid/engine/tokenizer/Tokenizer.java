package io.nereid.engine.tokenizer;

/**
 * Text ↔ token ids for one model, exactly as the model's reference implementation does it
 * (llama.cpp for GGUF vocabularies, HF tokenizers for {@code tokenizer.json}).
 *
 * <p>Decoding is defined on bytes: the text of a sequence is the concatenation of
 * {@link #tokenBytes(int)} of its tokens read as UTF-8, after removing one leading space from the
 * first token's bytes when {@link #stripsLeadingSpace()} (SentencePiece's dummy prefix). An
 * incremental detokenizer can therefore reproduce {@link #decode(int[])} exactly.
 *
 * <p>Implementations are immutable and thread-safe.
 */
public interface Tokenizer {

    /** Number of token ids, {@code [0, vocabSize)}. */
    int vocabSize();

    /**
     * Token ids of {@code text}.
     *
     * @param addSpecial   add what the model adds on its own (BOS and/or EOS per its flags)
     * @param parseSpecial match the text of special (control) tokens as those tokens; when false
     *                     it is tokenized as ordinary text. Added tokens that are not special are
     *                     matched either way.
     */
    int[] encode(String text, boolean addSpecial, boolean parseSpecial);

    /** {@code encode(text, false, true)}: the fixtures' convention. */
    default int[] encode(String text) {
        return encode(text, false, true);
    }

    /**
     * The bytes token {@code id} contributes to decoded text: byte-level pieces mapped back to
     * bytes, SentencePiece {@code ▁} as a space, byte-fallback tokens as their byte, special tokens
     * as their text.
     */
    byte[] tokenBytes(int id);

    /** Whether decoding drops one leading space from the first token (SentencePiece dummy prefix). */
    boolean stripsLeadingSpace();

    /** The vocabulary string of {@code id} as stored (e.g. {@code Ġworld}, {@code ▁Once}, {@code <0x0A>}). */
    String piece(int id);

    /** Whether {@code id} is a special (control) token that {@code skip_special_tokens} removes. */
    boolean isSpecial(int id);

    SpecialTokens specialTokens();

    /** Decodes without clean-up; see the class comment. Invalid UTF-8 becomes U+FFFD. */
    default String decode(int[] ids) {
        return decode(ids, false);
    }

    /** Decodes; with {@code skipSpecial} special tokens contribute nothing. */
    default String decode(int[] ids, boolean skipSpecial) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        boolean first = true;
        for (int id : ids) {
            if (skipSpecial && isSpecial(id)) {
                continue;
            }
            byte[] b = tokenBytes(id);
            int from = first && stripsLeadingSpace() && b.length > 0 && b[0] == ' ' ? 1 : 0;
            out.write(b, from, b.length - from);
            first = false;
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
}
