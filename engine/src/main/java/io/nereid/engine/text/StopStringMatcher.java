package io.nereid.engine.text;

import java.util.List;
import java.util.Objects;

/**
 * Finds the request's stop strings in the text of one generated sequence as it streams, and says
 * how much of it may be sent.
 *
 * <p>Text before a stop string is sent; the stop string and everything after it never are. The
 * matcher holds back only the longest suffix of unsent text that is a proper prefix of some stop
 * string, so a stop string split across deltas is caught and nothing else is delayed:
 *
 * <pre>
 *   stops ["abc"]    push("xa") → "x"      held "a"
 *                    push("b")  → ""       held "ab"
 *                    push("x")  → "abx"    held ""   (a near miss is released)
 *                    push("abc")→ Stop("", 0, "abc")
 * </pre>
 *
 * When several stop strings occur, the one that completes first in the stream wins; among those
 * completing at the same character, the one that starts earliest (the longest), then the lowest
 * index. Matching is exact, on UTF-16 chars.
 *
 * <p>Each stop string has a Knuth–Morris–Pratt automaton whose state is the length of the longest
 * suffix of the text so far that is a prefix of that stop string; so a push costs amortized
 * O(delta length × number of stop strings), never O(text so far).
 *
 * <p>Lifecycle: {@code push} deltas until it returns {@link StopMatch.Stop}, or until generation
 * ends for another reason and {@code flush} returns the held text. {@code push} after a stop or
 * after {@code flush} throws {@link IllegalStateException}; {@code flush} after either returns "".
 *
 * <p>Not thread-safe: one instance per sequence, used by the thread that generates it (the engine
 * thread).
 */
public final class StopStringMatcher {

    private final String[] stops;
    /** Per stop string, the KMP prefix function: {@code fallback[k][i]} is the state after a mismatch at i + 1. */
    private final int[][] fallback;
    /** Per stop string, the automaton state: chars of it matched by the end of the text so far. */
    private final int[] matched;
    /** Unsent text: always exactly the longest of the {@code matched} suffixes. */
    private final StringBuilder held = new StringBuilder();
    private boolean ended;

    /**
     * @param stops stop strings, each non-empty and without unpaired surrogates (so a cut before a
     *              stop string never splits a character); duplicates are allowed, an empty list
     *              makes {@code push} a pass-through
     * @throws IllegalArgumentException naming the first bad stop string by its index
     */
    public StopStringMatcher(List<String> stops) {
        Objects.requireNonNull(stops, "stops");
        this.stops = new String[stops.size()];
        this.fallback = new int[stops.size()][];
        this.matched = new int[stops.size()];
        for (int k = 0; k < this.stops.length; k++) {
            String stop = stops.get(k);
            validate(k, stop);
            this.stops[k] = stop;
            this.fallback[k] = prefixFunction(stop);
        }
    }

    /**
     * Consumes the next piece of generated text.
     *
     * @return the text that may be sent now, and the stop string if one completed in {@code delta}
     * @throws IllegalStateException after a stop or {@link #flush()}
     */
    public StopMatch push(String delta) {
        Objects.requireNonNull(delta, "delta");
        if (ended) {
            throw new IllegalStateException("push after the sequence ended (stop string matched or flushed)");
        }
        if (stops.length == 0) {
            return new StopMatch.Continue(delta);
        }
        for (int i = 0; i < delta.length(); i++) {
            int winner = advanceAll(delta.charAt(i));
            if (winner >= 0) {
                ended = true;
                held.append(delta, 0, i + 1);
                String before = held.substring(0, held.length() - stops[winner].length());
                held.setLength(0);
                return new StopMatch.Stop(before, winner, stops[winner]);
            }
        }
        int keep = 0;
        for (int m : matched) {
            keep = Math.max(keep, m);
        }
        if (held.isEmpty() && keep == 0) {
            return new StopMatch.Continue(delta); // the common case: no copy
        }
        held.append(delta);
        int send = held.length() - keep;
        String text = held.substring(0, send);
        held.delete(0, send);
        return new StopMatch.Continue(text);
    }

    /**
     * Ends the sequence for a reason other than a stop string (EOS, length, cancellation).
     *
     * @return the held text, which no stop string completed; "" after a stop or a previous flush
     */
    public String flush() {
        ended = true;
        String text = held.toString();
        held.setLength(0);
        return text;
    }

    /**
     * Advances every automaton by {@code c}.
     *
     * @return the index of the stop string completed by {@code c} (the longest, then the first), or -1
     */
    private int advanceAll(char c) {
        int winner = -1;
        for (int k = 0; k < stops.length; k++) {
            String stop = stops[k];
            int m = matched[k];
            while (m > 0 && stop.charAt(m) != c) {
                m = fallback[k][m - 1];
            }
            m = stop.charAt(m) == c ? m + 1 : 0;
            matched[k] = m;
            // Completed at the same char, a longer stop string starts earlier.
            if (m == stop.length() && (winner < 0 || m > stops[winner].length())) {
                winner = k;
            }
        }
        return winner;
    }

    /** {@code f[i]}: length of the longest proper prefix of {@code s[0..i]} that is also its suffix. */
    private static int[] prefixFunction(String s) {
        int[] f = new int[s.length()];
        for (int i = 1, m = 0; i < s.length(); i++) {
            while (m > 0 && s.charAt(i) != s.charAt(m)) {
                m = f[m - 1];
            }
            if (s.charAt(i) == s.charAt(m)) {
                m++;
            }
            f[i] = m;
        }
        return f;
    }

    private static void validate(int index, String stop) {
        String problem = problem(index, stop);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /**
     * Why {@code stop} (the {@code index}-th) cannot be a stop string — null, empty, or with an
     * unpaired surrogate — or null when it can. For callers that validate a request before building
     * a matcher.
     */
    public static String problem(int index, String stop) {
        if (stop == null) {
            return "stop string " + index + " is null";
        }
        if (stop.isEmpty()) {
            return "stop string " + index + " is empty";
        }
        for (int i = 0; i < stop.length(); i++) {
            char c = stop.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < stop.length() && Character.isLowSurrogate(stop.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "stop string " + index + " has an unpaired surrogate at index " + i;
            }
        }
        return null;
    }
}
