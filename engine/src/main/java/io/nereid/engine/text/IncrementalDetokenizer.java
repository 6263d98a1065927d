package io.nereid.engine.text;

import io.nereid.engine.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Turns the tokens of one generated sequence into text as they arrive, so that
 *
 * <pre>
 *   push(t0) + push(t1) + … + push(tn) + flush()  ==  tokenizer.decode({t0, …, tn}, skipSpecial)
 * </pre>
 *
 * for every token sequence, including invalid UTF-8 (U+FFFD exactly where Java's decoder puts it).
 *
 * <p>A token's bytes need not end on a character boundary (byte-fallback tokens carry one byte
 * each; byte-level BPE pieces split characters too). Only the bytes of a character that may still
 * complete are held back (at most 3, see {@link Utf8Tail}); a byte that can no longer become part
 * of a character is emitted at once as U+FFFD. Each push costs time proportional to that token's
 * bytes: nothing is ever re-decoded.
 *
 * <p>Token attribution, for callers that send deltas with their token ids and logprobs: a token
 * belongs to the first non-empty text returned at or after its push. A token whose bytes are all
 * held, or a skipped special token, thus goes with the next delta; a token whose bytes are partly
 * held goes with this one. The caller slices its own ids by {@link #tokensConsumed()}, after the
 * stop-string matcher (which holds text too) has decided what is sent.
 *
 * <p>Lifecycle: {@code push} any number of times, then {@code flush} once at the end of the
 * sequence; {@code push} after {@code flush} throws {@link IllegalStateException}, a second
 * {@code flush} returns "".
 *
 * <p>Not thread-safe: one instance per sequence, used by the thread that generates it (the
 * engine thread).
 */
public final class IncrementalDetokenizer {

    private final Tokenizer tokenizer;
    private final boolean skipSpecial;
    private final int[] keptSpecial;   // special tokens written as text even with skipSpecial (sorted)
    private final boolean stripsLeadingSpace;

    /** Held bytes of an incomplete character in {@code [0, heldLength)}; the rest is scratch space. */
    private byte[] bytes = new byte[16];
    private int heldLength;
    /** No token has contributed bytes yet, so the next one may lose its leading space. */
    private boolean first = true;
    private int consumed;
    private boolean flushed;

    /**
     * A detokenizer for tokens that start a sequence (the first one loses the SentencePiece
     * dummy-prefix space, as in {@code decode}).
     *
     * @param skipSpecial drop special tokens entirely, as {@code decode(ids, true)} does
     */
    public IncrementalDetokenizer(Tokenizer tokenizer, boolean skipSpecial) {
        this(tokenizer, skipSpecial, false);
    }

    /**
     * @param skipSpecial  drop special tokens entirely, as {@code decode(ids, true)} does
     * @param continuation the tokens continue text that came before (a completion after its
     *                     prompt): no leading space is dropped, since it separates the new text
     *                     from the prompt
     */
    public IncrementalDetokenizer(Tokenizer tokenizer, boolean skipSpecial, boolean continuation) {
        this(tokenizer, skipSpecial, continuation, new int[0]);
    }

    /**
     * @param keptSpecial special tokens written as their text even with {@code skipSpecial}: those
     *                    a constraint writes as part of the output (Mistral's {@code [TOOL_CALLS]})
     */
    public IncrementalDetokenizer(Tokenizer tokenizer, boolean skipSpecial, boolean continuation, int[] keptSpecial) {
        this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
        this.skipSpecial = skipSpecial;
        this.keptSpecial = keptSpecial.clone();
        Arrays.sort(this.keptSpecial);
        this.stripsLeadingSpace = tokenizer.stripsLeadingSpace() && !continuation;
    }

    /**
     * Consumes one token.
     *
     * @return the text that became complete with this token, possibly ""
     * @throws IllegalStateException after {@link #flush()}
     */
    public String push(int tokenId) {
        if (flushed) {
            throw new IllegalStateException("push(" + tokenId + ") after flush(): the sequence has ended");
        }
        consumed++;
        if (skipSpecial && tokenizer.isSpecial(tokenId) && Arrays.binarySearch(keptSpecial, tokenId) < 0) {
            return "";
        }
        byte[] token = tokenizer.tokenBytes(tokenId);
        // Same rule as Tokenizer.decode: the first token that is not skipped loses one leading space.
        int from = first && stripsLeadingSpace && token.length > 0 && token[0] == ' ' ? 1 : 0;
        first = false;
        int length = heldLength + token.length - from;
        if (length > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(length, 2 * bytes.length));
        }
        System.arraycopy(token, from, bytes, heldLength, token.length - from);
        int hold = Utf8Tail.incompleteLength(bytes, 0, length);
        String text = new String(bytes, 0, length - hold, StandardCharsets.UTF_8);
        System.arraycopy(bytes, length - hold, bytes, 0, hold);
        heldLength = hold;
        return text;
    }

    /**
     * Ends the sequence.
     *
     * @return the held bytes decoded, incomplete characters as U+FFFD; "" when nothing is held
     */
    public String flush() {
        flushed = true;
        String text = new String(bytes, 0, heldLength, StandardCharsets.UTF_8);
        heldLength = 0;
        return text;
    }

    /** Tokens pushed so far, skipped special tokens included. */
    public int tokensConsumed() {
        return consumed;
    }
}
