package io.nereid.engine.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class StopStringMatcherTest {

    /** What a run sent, and how it ended: {@code stop} is null when no stop string completed. */
    private record Run(String sent, StopMatch.Stop stop, String flushed) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "\n\n", "</s>", "😀", "👍🏽", "日本", "x", "Observation:"})
    void stopStringCutAtEveryPositionIntoUpToThreeDeltasIsNeverSent(String stop) {
        String text = "say " + stop + " tail";
        for (int[] cuts : Cuts.intoAtMostThree(text.length())) {
            Run run = run(List.of(stop), deltas(text, cuts));
            assertEquals("say ", run.sent(), () -> "cuts " + Arrays.toString(cuts));
            assertEquals(new StopMatch.Stop("", 0, stop), withoutText(run.stop()));
        }
    }

    @Test
    void heldStartOfAStopIsFlushedInEveryFragmentation() {
        String text = "say <|im_en";
        for (int[] cuts : Cuts.intoAtMostThree(text.length())) {
            Run run = run(List.of("<|im_end|>", "\n"), deltas(text, cuts));
            assertNull(run.stop());
            assertEquals(text, run.sent() + run.flushed(), () -> "cuts " + Arrays.toString(cuts));
            assertTrue(run.sent().length() <= "say ".length(), "\"<|im_en\" may still become the stop");
        }
    }

    static Stream<Arguments> overlappingStops() {
        return Stream.of(
                // stops, text, what is sent before the stop, the winning index
                Arguments.of(List.of("abc", "bcd"), "xabcd", "x", 0),
                Arguments.of(List.of("bcd", "abc"), "xabcd", "x", 1),
                Arguments.of(List.of("ab", "abc"), "xabc", "x", 0),
                Arguments.of(List.of("abc", "ab"), "xabc", "x", 1),
                Arguments.of(List.of("\n\n", "\n"), "a\n\nb", "a", 1),
                Arguments.of(List.of("bc", "abc"), "xabc", "x", 1),     // same end: the earlier start wins
                Arguments.of(List.of("b", "abc"), "xabc", "xa", 0),     // "b" completes first
                Arguments.of(List.of("abc", "abc"), "xabc", "x", 0),    // duplicates: the first index
                Arguments.of(List.of("aaab"), "aabaaaab", "aaba", 0),  // KMP fallback after a near miss
                Arguments.of(List.of("abab"), "abaabab", "aba", 0),
                Arguments.of(List.of("。", "\n"), "日本。\n", "日本", 0));
    }

    @ParameterizedTest
    @MethodSource("overlappingStops")
    void theStopThatCompletesFirstWinsInEveryFragmentation(List<String> stops, String text, String sent, int index) {
        for (int[] cuts : Cuts.intoAtMostThree(text.length())) {
            Run run = run(stops, deltas(text, cuts));
            assertEquals(sent, run.sent(), () -> "cuts " + Arrays.toString(cuts));
            assertEquals(new StopMatch.Stop("", index, stops.get(index)), withoutText(run.stop()));
        }
    }

    @Test
    void stopAtTheVeryStartSendsNothing() {
        assertEquals(new StopMatch.Stop("", 0, "ab"), new StopStringMatcher(List.of("ab")).push("ab and more"));
    }

    @Test
    void stopEqualToAWholeDelta() {
        StopStringMatcher m = new StopStringMatcher(List.of("STOP"));
        assertEquals(new StopMatch.Continue("go "), m.push("go "));
        assertEquals(new StopMatch.Stop("", 0, "STOP"), m.push("STOP"));
    }

    @Test
    void textAfterTheStopInTheSameDeltaIsDropped() {
        assertEquals(new StopMatch.Stop("one ", 0, "\n\n"), new StopStringMatcher(List.of("\n\n")).push("one \n\ntwo"));
    }

    @Test
    void nearMissIsReleasedWhenTheNextTextRulesItOut() {
        StopStringMatcher m = new StopStringMatcher(List.of("abc"));
        assertEquals(new StopMatch.Continue(""), m.push("ab"));
        assertEquals(new StopMatch.Continue("abx"), m.push("x"));
    }

    @Test
    void onlyTheLongestPossibleStartIsHeld() {
        StopStringMatcher m = new StopStringMatcher(List.of("abc", "xyz"));
        assertEquals(new StopMatch.Continue("hello "), m.push("hello a"));
        assertEquals(new StopMatch.Continue("ab"), m.push("bx"));   // "x" may start "xyz"
        assertEquals(new StopMatch.Continue("xy!"), m.push("y!"));
    }

    @Test
    void heldTextRestartsAMatchInsideItself() {
        StopStringMatcher m = new StopStringMatcher(List.of("aab"));
        assertEquals(new StopMatch.Continue(""), m.push("aa"));
        assertEquals(new StopMatch.Continue("a"), m.push("a"));  // "aaa": the last "aa" may still start "aab"
        assertEquals(new StopMatch.Stop("", 0, "aab"), m.push("b"));
    }

    @Test
    void flushReturnsTheHeldText() {
        StopStringMatcher m = new StopStringMatcher(List.of("abc"));
        assertEquals(new StopMatch.Continue("x"), m.push("xab"));
        assertEquals("ab", m.flush());
        assertEquals("", m.flush());
    }

    @Test
    void nothingIsSentAfterAStop() {
        StopStringMatcher m = new StopStringMatcher(List.of("end"));
        assertInstanceOf(StopMatch.Stop.class, m.push("the end"));
        assertThrows(IllegalStateException.class, () -> m.push("more"));
        assertEquals("", m.flush());
    }

    @Test
    void pushAfterFlushIsRejected() {
        StopStringMatcher m = new StopStringMatcher(List.of("end"));
        m.flush();
        assertThrows(IllegalStateException.class, () -> m.push("more"));
    }

    @Test
    void emptyStopListPassesEveryDeltaThroughUnheld() {
        StopStringMatcher m = new StopStringMatcher(List.of());
        String delta = "any text";
        assertSame(delta, m.push(delta).text());
        assertEquals(new StopMatch.Continue(""), m.push(""));
        assertEquals("", m.flush());
    }

    @Test
    void badStopStringsAreRejectedByIndex() {
        assertThrows(NullPointerException.class, () -> new StopStringMatcher(null));
        assertMessage("stop string 1 is null", Arrays.asList("a", null));
        assertMessage("stop string 0 is empty", List.of(""));
        assertMessage("stop string 1 has an unpaired surrogate at index 1", List.of("ok", "a\uD83D"));
        assertMessage("stop string 0 has an unpaired surrogate at index 0", List.of("\uDE00x"));
    }

    static Stream<Arguments> seeds() {
        return Stream.of(0, 1, 2, 3, 4, 5, 6, 7).map(Arguments::of);
    }

    /**
     * Random text over a small alphabet (so near misses and overlaps are frequent) cut into random
     * deltas, against a brute-force reference: what is sent, which stop wins, and that after each
     * delta exactly the longest suffix that may start a stop string is held.
     */
    @ParameterizedTest
    @MethodSource("seeds")
    void randomTextMatchesABruteForceReference(int seed) {
        Random random = new Random(seed);
        List<List<String>> stopLists = List.of(List.of(), List.of("aab"), List.of("abab", "ba", "bba"),
                List.of("a\n\n", "\n\n\n", "b\na"), List.of("aaaa", "aab", "ab\n", "\nba", "bbbb"));
        int[] outcomes = new int[2]; // {no stop, stopped}
        for (int trial = 0; trial < 300; trial++) {
            List<String> stops = stopLists.get(random.nextInt(stopLists.size()));
            char[] text = new char[random.nextInt(30)];
            for (int i = 0; i < text.length; i++) {
                text[i] = "ab\n".charAt(random.nextInt(3));
            }
            String whole = new String(text);
            List<String> deltas = randomDeltas(whole, random);
            outcomes[assertMatchesReference(stops, whole, deltas) ? 1 : 0]++;
        }
        assertTrue(outcomes[0] > 30 && outcomes[1] > 30, "both outcomes exercised: " + Arrays.toString(outcomes));
    }

    /** @return whether a stop string matched */
    private static boolean assertMatchesReference(List<String> stops, String whole, List<String> deltas) {
        StopStringMatcher m = new StopStringMatcher(stops);
        StringBuilder sent = new StringBuilder();
        StringBuilder seen = new StringBuilder();
        int[] expectedStop = firstStop(whole, stops);
        String context = "stops " + stops + ", deltas " + deltas;
        for (String delta : deltas) {
            seen.append(delta);
            StopMatch match = m.push(delta);
            sent.append(match.text());
            if (match instanceof StopMatch.Stop stop) {
                assertEquals(whole.substring(0, expectedStop[0]), sent.toString(), context);
                assertEquals(expectedStop[1], stop.stopIndex(), context);
                return true;
            }
            int held = longestStopPrefixSuffix(seen, stops);
            assertEquals(seen.substring(0, seen.length() - held), sent.toString(), context);
        }
        assertNull(expectedStop, context);
        assertEquals(whole, sent + m.flush(), context);
        return false;
    }

    /** {start, index} of the stop string that completes first (then starts first, then lowest index), or null. */
    private static int[] firstStop(String text, List<String> stops) {
        for (int end = 1; end <= text.length(); end++) {
            int best = -1;
            for (int k = 0; k < stops.size(); k++) {
                int start = end - stops.get(k).length();
                if (start >= 0 && text.startsWith(stops.get(k), start)
                        && (best < 0 || stops.get(k).length() > stops.get(best).length())) {
                    best = k;
                }
            }
            if (best >= 0) {
                return new int[] {end - stops.get(best).length(), best};
            }
        }
        return null;
    }

    private static int longestStopPrefixSuffix(CharSequence text, List<String> stops) {
        String s = text.toString();
        int longest = 0;
        for (String stop : stops) {
            for (int n = 1; n < stop.length(); n++) {
                if (s.endsWith(stop.substring(0, n))) {
                    longest = Math.max(longest, n);
                }
            }
        }
        return longest;
    }

    private static List<String> randomDeltas(String text, Random random) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < text.length(); ) {
            int n = random.nextInt(5); // empty deltas too
            out.add(text.substring(i, Math.min(text.length(), i + n)));
            i += n;
        }
        return out;
    }

    /** Pushes deltas until a stop; flushes otherwise. */
    private static Run run(List<String> stops, List<String> deltas) {
        StopStringMatcher m = new StopStringMatcher(stops);
        StringBuilder sent = new StringBuilder();
        for (String delta : deltas) {
            StopMatch match = m.push(delta);
            sent.append(match.text());
            if (match instanceof StopMatch.Stop stop) {
                return new Run(sent.toString(), stop, "");
            }
        }
        String flushed = m.flush();
        return new Run(sent.toString(), null, flushed);
    }

    private static List<String> deltas(String text, int[] cuts) {
        int[] bounds = Cuts.bounds(cuts, text.length());
        List<String> out = new ArrayList<>();
        for (int i = 0; i + 1 < bounds.length; i++) {
            out.add(text.substring(bounds[i], bounds[i + 1]));
        }
        return out;
    }

    private static StopMatch.Stop withoutText(StopMatch.Stop stop) {
        assertTrue(stop != null, "no stop string matched");
        return new StopMatch.Stop("", stop.stopIndex(), stop.stop());
    }

    private static void assertMessage(String expected, List<String> stops) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, () -> new StopStringMatcher(stops)).getMessage());
    }
}
