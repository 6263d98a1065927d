package io.nereid.engine.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pre-tokenization by a sequence of regular expressions, with llama.cpp's
 * {@code unicode_regex_split} semantics (which equal HF's {@code Split(behavior=Isolated)} for
 * one expression): each expression splits every current piece into its matches and the gaps
 * between them, gaps kept as pieces of their own; the next expression then splits each piece.
 * A match never sees past the end of its piece (opaque bounds), so {@code (?!\S)} succeeds at a
 * piece's end.
 *
 * <p>Expressions are compiled with {@link Pattern#UNICODE_CHARACTER_CLASS} so that {@code \s}
 * is Unicode White_Space, like Oniguruma (HF) and llama.cpp's tables. Immutable; thread-safe.
 */
final class RegexSplitter {

    private final Pattern[] patterns;

    RegexSplitter(List<String> expressions) {
        this.patterns = expressions.stream()
                .map(e -> Pattern.compile(e, Pattern.UNICODE_CHARACTER_CLASS))
                .toArray(Pattern[]::new);
    }

    /** Piece boundaries of {@code text[start, end)} as {@code [s0, e0, s1, e1, ...]}. */
    int[] split(CharSequence text, int start, int end) {
        IntList pieces = new IntList(16);
        pieces.add(start);
        pieces.add(end);
        for (Pattern p : patterns) {
            IntList next = new IntList(pieces.size() * 2);
            Matcher m = p.matcher(text);
            for (int k = 0; k < pieces.size(); k += 2) {
                int s = pieces.get(k);
                int e = pieces.get(k + 1);
                m.region(s, e);
                int last = s;
                while (m.find()) {
                    if (m.end() == m.start()) {
                        continue; // llama.cpp's expressions never match empty; ignore if one does
                    }
                    if (m.start() > last) {
                        next.add(last);
                        next.add(m.start());
                    }
                    next.add(m.start());
                    next.add(m.end());
                    last = m.end();
                }
                if (last < e) {
                    next.add(last);
                    next.add(e);
                }
            }
            pieces = next;
        }
        return pieces.toArray();
    }

    List<String> splitToStrings(String text) {
        int[] b = split(text, 0, text.length());
        List<String> out = new ArrayList<>(b.length / 2);
        for (int k = 0; k < b.length; k += 2) {
            out.add(text.substring(b[k], b[k + 1]));
        }
        return out;
    }
}
