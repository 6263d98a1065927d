package io.nereid.engine.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * SentencePiece-style tokenization of one text fragment as llama.cpp's
 * {@code llm_tokenizer_spm_session} does it: spaces become {@code ▁}, every character starts as a
 * symbol, and the adjacent pair whose concatenation is the vocabulary piece with the highest
 * score is merged first (leftmost on ties) until no pair forms a piece. A character that is no
 * piece is written as its UTF-8 bytes through byte-fallback tokens {@code <0xXX>}.
 * Immutable; thread-safe.
 */
final class SentencePieceEncoder {

    static final char SPACE = '\u2581'; // ▁

    private final Map<String, Integer> vocab;
    private final float[] scores;
    private final int[] byteTokens;    // (256) id of <0xXX>, or -1
    private final int unknownId;

    SentencePieceEncoder(Map<String, Integer> vocab, float[] scores, int unknownId) {
        this.vocab = vocab;
        this.scores = scores;
        this.unknownId = unknownId;
        this.byteTokens = new int[256];
        for (int b = 0; b < 256; b++) {
            Integer id = vocab.get(String.format("<0x%02X>", b));
            byteTokens[b] = id == null ? -1 : id;
        }
    }

    /**
     * Appends the ids of {@code fragment}, prefixed with a space when {@code spacePrefix}
     * (the dummy prefix llama.cpp adds to the first fragment and to each one after a special
     * token).
     */
    void encode(String fragment, boolean spacePrefix, IntList out) {
        String text = (spacePrefix ? " " + fragment : fragment).replace(' ', SPACE);
        if (text.isEmpty()) {
            return;
        }
        // Symbols: one per code point; start/len index into text, next/prev link the live ones.
        int n = text.codePointCount(0, text.length());
        int[] start = new int[n];
        int[] len = new int[n];
        int[] prev = new int[n];
        int[] next = new int[n];
        for (int i = 0, off = 0; i < n; i++) {
            int l = Character.charCount(text.codePointAt(off));
            start[i] = off;
            len[i] = l;
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
            off += l;
        }
        PriorityQueue<Bigram> queue = new PriorityQueue<>();
        for (int i = 1; i < n; i++) {
            tryAdd(text, start, len, i - 1, i, queue);
        }
        while (!queue.isEmpty()) {
            Bigram b = queue.poll();
            if (len[b.left] == 0 || len[b.right] == 0 || len[b.left] + len[b.right] != b.size) {
                continue; // a side was merged since this pair was queued
            }
            len[b.left] += len[b.right];
            len[b.right] = 0;
            next[b.left] = next[b.right];
            if (next[b.right] >= 0) {
                prev[next[b.right]] = b.left;
            }
            tryAdd(text, start, len, prev[b.left], b.left, queue);
            tryAdd(text, start, len, b.left, next[b.left], queue);
        }
        for (int i = 0; i >= 0; i = next[i]) {
            String piece = text.substring(start[i], start[i] + len[i]);
            Integer id = vocab.get(piece);
            if (id != null) {
                out.add(id);
            } else {
                for (byte by : piece.getBytes(StandardCharsets.UTF_8)) {
                    int t = byteTokens[by & 0xff];
                    out.add(t >= 0 ? t : unknownId);
                }
            }
        }
    }

    private void tryAdd(String text, int[] start, int[] len, int left, int right, PriorityQueue<Bigram> queue) {
        if (left < 0 || right < 0) {
            return;
        }
        int size = len[left] + len[right];
        Integer id = vocab.get(text.substring(start[left], start[left] + size));
        if (id != null) {
            queue.add(new Bigram(left, right, scores[id], size));
        }
    }

    /** Highest score first, then leftmost. */
    private record Bigram(int left, int right, float score, int size) implements Comparable<Bigram> {
        @Override
        public int compareTo(Bigram o) {
            int c = Float.compare(o.score, score);
            return c != 0 ? c : Integer.compare(left, o.left);
        }
    }

}
