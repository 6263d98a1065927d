package io.nereid.engine.tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits text into plain-text fragments and special / added tokens before the model's
 * tokenizer runs. Two semantics, because the references differ:
 * <ul>
 *   <li>{@link Mode#LLAMA_CPP} ({@code tokenizer_st_partition}): tokens are tried longest text
 *       first; each one is cut out of every remaining text fragment before the next is tried.
 *       {@code lstrip}/{@code rstrip} tokens swallow ASCII whitespace next to them.</li>
 *   <li>{@link Mode#HF} (HF {@code AddedVocabulary}): one left-to-right scan taking the
 *       leftmost, then longest match; {@code lstrip}/{@code rstrip} swallow Unicode
 *       whitespace.</li>
 * </ul>
 * Tokens flagged {@code alwaysMatched} (GGUF USER_DEFINED, HF non-special added tokens) are
 * matched even when special-token parsing is off. Immutable; thread-safe.
 */
final class SpecialTokenSplitter {

    enum Mode { LLAMA_CPP, HF }

    /** A token that is matched in raw text. */
    record Entry(String text, int id, boolean alwaysMatched, boolean lstrip, boolean rstrip) {
    }

    /** A piece of the input: plain text {@code [start, end)} when {@code token < 0}, else a token. */
    record Fragment(int token, int start, int end) {
        boolean isText() {
            return token < 0;
        }
    }

    private final Mode mode;
    private final Entry[] entries;          // sorted by text length, longest first (llama.cpp order)
    private final Node root = new Node();

    SpecialTokenSplitter(Mode mode, List<Entry> tokens) {
        this.mode = mode;
        this.entries = tokens.stream().filter(e -> !e.text().isEmpty()).toArray(Entry[]::new);
        // Stable sort: equal lengths keep vocabulary order.
        Arrays.sort(entries, (a, b) -> Integer.compare(b.text().length(), a.text().length()));
        for (int i = 0; i < entries.length; i++) {
            Node node = root;
            String t = entries[i].text();
            for (int k = 0; k < t.length(); k++) {
                node = node.children.computeIfAbsent(t.charAt(k), c -> new Node());
            }
            if (node.entry < 0) {
                node.entry = i;
            }
        }
    }

    boolean isEmpty() {
        return entries.length == 0;
    }

    List<Fragment> split(String text, boolean parseSpecial) {
        if (text.isEmpty()) {
            return List.of();
        }
        if (entries.length == 0) {
            return List.of(new Fragment(-1, 0, text.length()));
        }
        return mode == Mode.HF ? splitLeftmostLongest(text, parseSpecial) : splitLongestFirst(text, parseSpecial);
    }

    private boolean enabled(Entry e, boolean parseSpecial) {
        return parseSpecial || e.alwaysMatched();
    }

    /** llama.cpp: for each token, longest first, cut every occurrence out of every text fragment. */
    private List<Fragment> splitLongestFirst(String text, boolean parseSpecial) {
        // Only tokens that occur at all take part; finding them is one trie pass.
        BitSet present = new BitSet(entries.length);
        for (int i = 0; i < text.length(); i++) {
            Node node = root;
            for (int k = i; k < text.length(); k++) {
                node = node.children.get(text.charAt(k));
                if (node == null) {
                    break;
                }
                if (node.entry >= 0) {
                    present.set(node.entry);
                }
            }
        }
        List<Fragment> fragments = new ArrayList<>();
        fragments.add(new Fragment(-1, 0, text.length()));
        for (int e = present.nextSetBit(0); e >= 0; e = present.nextSetBit(e + 1)) {
            Entry entry = entries[e];
            if (!enabled(entry, parseSpecial)) {
                continue;
            }
            List<Fragment> next = new ArrayList<>(fragments.size() + 4);
            for (Fragment f : fragments) {
                if (!f.isText()) {
                    next.add(f);
                    continue;
                }
                int start = f.start();
                int end = f.end();
                while (start < end) {
                    int match = indexOf(text, entry.text(), start, end);
                    if (match < 0) {
                        break;
                    }
                    int leftEnd = match;
                    if (entry.lstrip()) {
                        while (leftEnd > start && isAsciiSpace(text.charAt(leftEnd - 1))) {
                            leftEnd--;
                        }
                    }
                    if (leftEnd > start) {
                        next.add(new Fragment(-1, start, leftEnd));
                    }
                    next.add(new Fragment(entry.id(), match, match + entry.text().length()));
                    start = match + entry.text().length();
                    if (entry.rstrip()) {
                        while (start < end && isAsciiSpace(text.charAt(start))) {
                            start++;
                        }
                    }
                }
                if (start < end) {
                    next.add(new Fragment(-1, start, end));
                }
            }
            fragments = next;
        }
        return fragments;
    }

    /** HF: scan left to right, taking the longest token that starts at the leftmost position. */
    private List<Fragment> splitLeftmostLongest(String text, boolean parseSpecial) {
        List<Fragment> fragments = new ArrayList<>();
        int textStart = 0;
        int i = 0;
        while (i < text.length()) {
            Node node = root;
            int best = -1;
            int bestEnd = -1;
            for (int k = i; k < text.length(); k++) {
                node = node.children.get(text.charAt(k));
                if (node == null) {
                    break;
                }
                if (node.entry >= 0 && enabled(entries[node.entry], parseSpecial)) {
                    best = node.entry;
                    bestEnd = k + 1;
                }
            }
            if (best < 0) {
                i++;
                continue;
            }
            Entry entry = entries[best];
            int leftEnd = i;
            if (entry.lstrip()) {
                while (leftEnd > textStart && Character.isWhitespace(text.charAt(leftEnd - 1))) {
                    leftEnd--;
                }
            }
            if (leftEnd > textStart) {
                fragments.add(new Fragment(-1, textStart, leftEnd));
            }
            fragments.add(new Fragment(entry.id(), i, bestEnd));
            i = bestEnd;
            if (entry.rstrip()) {
                while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
                    i++;
                }
            }
            textStart = i;
        }
        if (textStart < text.length()) {
            fragments.add(new Fragment(-1, textStart, text.length()));
        }
        return fragments;
    }

    private static int indexOf(String text, String needle, int from, int end) {
        int at = text.indexOf(needle, from);
        return at >= 0 && at + needle.length() <= end ? at : -1;
    }

    /** C {@code isspace} in the "C" locale, as llama.cpp uses for lstrip/rstrip. */
    private static boolean isAsciiSpace(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r');
    }

    private static final class Node {
        final Map<Character, Node> children = new HashMap<>(4);
        int entry = -1;
    }
}
