package io.nereid.engine.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class IncrementalDetokenizerTest {

    private static final FakeTokenizer TOKENIZER = new FakeTokenizer(false);
    private static final FakeTokenizer STRIPPING = new FakeTokenizer(true);

    /** Multi-byte text: 2-, 3- and 4-byte characters, combining marks, skin tones, ZWJ sequences, flags. */
    static Stream<String> multiByteTexts() {
        return Stream.of(
                "é", "日", "😀",
                "naïve café",
                "e\u0301",                                      // e + combining acute
                "日本語",
                "a😀b",
                "👍🏽",                                          // thumbs up + skin tone modifier
                "👩‍💻",                                          // woman + ZWJ + laptop
                "👩🏾‍🤝‍👩🏻",                                    // skin tones joined by ZWJ
                "👨‍👩‍👧‍👦",                                    // family: four emoji, three ZWJ
                "🇯🇵",                                          // flag: two regional indicators
                "Ω≈ç√∫ 𝔘𝔫𝔦",
                "\u0000\u007f\u0080\u07ff\u0800\uffff\ud800\udc00\udbff\udfff"); // UTF-8 length edges
    }

    @Test
    void byteFallbackTokensJoinIntoOneCharacter() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, false);
        assertEquals("", d.push(0xE6));
        assertEquals("", d.push(0x97));
        assertEquals("日", d.push(0xA5));
        assertEquals("", d.flush());
        assertEquals(3, d.tokensConsumed());
    }

    @Test
    void textBeforeAnIncompleteCharacterIsEmittedAtOnce() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, false);
        assertEquals("ab", d.push(TOKENIZER.id(new byte[] {'a', 'b', (byte) 0xF0, (byte) 0x9F})));
        assertEquals("😀c", d.push(TOKENIZER.id(new byte[] {(byte) 0x98, (byte) 0x80, 'c'})));
    }

    @ParameterizedTest
    @MethodSource("multiByteTexts")
    void everyCutIntoTwoOrThreeTokensStreamsWholeCharacters(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (int[] cuts : Cuts.intoAtMostThree(bytes.length)) {
            List<String> deltas = assertStreamsLikeDecode(TOKENIZER, tokens(bytes, cuts), false);
            assertEquals(text, String.join("", deltas));
            deltas.forEach(delta -> assertFalse(delta.contains("\uFFFD"), () -> "partial character in " + deltas));
        }
    }

    @ParameterizedTest
    @MethodSource("multiByteTexts")
    void everyFragmentationOfShortTextStreamsWholeCharacters(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > 14) {
            bytes = Arrays.copyOf(bytes, 14); // 8192 fragmentations; may end mid-character on purpose
        }
        for (int[] cuts : Cuts.all(bytes.length)) {
            assertStreamsLikeDecode(TOKENIZER, tokens(bytes, cuts), false);
        }
    }

    @ParameterizedTest
    @MethodSource("multiByteTexts")
    void oneByteTokenPerByteStreamsWholeCharacters(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] ids = IntStream.range(0, bytes.length).map(i -> bytes[i] & 0xFF).toArray();
        List<String> deltas = assertStreamsLikeDecode(TOKENIZER, ids, false);
        assertEquals(text, String.join("", deltas));
        assertEquals(text.codePointCount(0, text.length()),
                deltas.stream().filter(delta -> !delta.isEmpty()).count(), "one delta per code point");
    }

    @Test
    void definitelyMalformedBytesAreReplacedAtOnce() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, false);
        assertEquals("\uFFFD", d.push(0xFF));   // never in UTF-8
        assertEquals("\uFFFD", d.push(0x80));   // continuation without a lead
        assertEquals("\uFFFD", d.push(0xC0));   // overlong lead
        assertEquals("\uFFFD", d.push(0xF5));   // past U+10FFFF
        assertEquals("", d.push(0xE0));
        assertEquals("\uFFFD\uFFFD", d.push(0x80)); // E0 80 is overlong: both bytes replaced
        assertEquals("", d.push(0xF4));
        assertEquals("\uFFFD\uFFFD", d.push(0x90)); // F4 90 is past U+10FFFF
        assertEquals("", d.push(0xF0));
        assertEquals("\uFFFD\uFFFD", d.push(0x8F)); // F0 8F is overlong
        assertEquals("", d.push(0xE1));
        assertEquals("\uFFFDA", d.push('A'));        // a lead cut short by ASCII
        assertEquals("", d.push(0xF0));
        assertEquals("\uFFFDA", d.push('A'));
        assertEquals("", d.flush());
    }

    @Test
    void truncatedCharacterAtTheEndIsFlushedAsOneReplacement() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, false);
        assertEquals("x", d.push(TOKENIZER.id(new byte[] {'x', (byte) 0xF0, (byte) 0x9F, (byte) 0x98})));
        assertEquals("\uFFFD", d.flush());
        assertEquals("x\uFFFD", TOKENIZER.decode(new int[] {TOKENIZER.id(new byte[] {'x', (byte) 0xF0, (byte) 0x9F, (byte) 0x98})}));
    }

    /** Java reads ED A0..BF xx (an encoded surrogate) as one U+FFFD, so ED A0 waits for its third byte. */
    @Test
    void encodedSurrogateIsHeldUntilItsLengthIsKnown() {
        assertStreamsLikeDecode(TOKENIZER, new int[] {0xED, 0xA0, 0x80}, false);
        assertStreamsLikeDecode(TOKENIZER, new int[] {0xED, 0xA0, 'a'}, false);
        assertStreamsLikeDecode(TOKENIZER, new int[] {0xED, 0xA0}, false);
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, false);
        assertEquals("", d.push(0xED));
        assertEquals("", d.push(0xA0));
        assertEquals("\uFFFD", d.push(0x80));
    }

    /**
     * Every sequence of up to four bytes drawn from the byte classes UTF-8 tells apart (ASCII, the
     * edges of each continuation range, every kind of lead), one byte token each: this walks every
     * branch of Java's decoder, including its end-of-input paths.
     */
    @Test
    void everyShortByteSequenceStreamsLikeDecode() {
        int[] classes = {0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF,
            0xF0, 0xF1, 0xF4, 0xF5, 0xFF};
        for (int length = 1; length <= 4; length++) {
            int[] ids = new int[length];
            int combinations = (int) Math.pow(classes.length, length);
            for (int n = 0; n < combinations; n++) {
                for (int i = 0, rest = n; i < length; i++, rest /= classes.length) {
                    ids[i] = classes[rest % classes.length];
                }
                assertStreamsLikeDecode(TOKENIZER, ids, false);
            }
        }
    }

    static Stream<Arguments> seedsAndModes() {
        return IntStream.range(0, 6).boxed().flatMap(seed -> Stream.of(
                Arguments.of(seed, false, false), Arguments.of(seed, true, false),
                Arguments.of(seed, false, true), Arguments.of(seed, true, true)));
    }

    @ParameterizedTest(name = "seed {0}, stripsLeadingSpace {1}, skipSpecial {2}")
    @MethodSource("seedsAndModes")
    void randomTokenSequencesStreamLikeDecode(int seed, boolean strips, boolean skipSpecial) {
        FakeTokenizer tokenizer = strips ? STRIPPING : TOKENIZER;
        Random random = new Random(seed);
        for (int sequence = 0; sequence < 300; sequence++) {
            int[] ids = new int[random.nextInt(24)];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = randomToken(tokenizer, random);
            }
            assertStreamsLikeDecode(tokenizer, ids, skipSpecial);
        }
    }

    @Test
    void skipSpecialDropsSpecialTokensEntirely() {
        int[] ids = {FakeTokenizer.BOS, TOKENIZER.id("Hi"), FakeTokenizer.EOT};
        assertEquals(List.of("", "Hi", "", ""), assertStreamsLikeDecode(TOKENIZER, ids, true));
        assertEquals(List.of("<s>", "Hi", "<|eot|>", ""), assertStreamsLikeDecode(TOKENIZER, ids, false));
    }

    @Test
    void specialTokenBetweenHalvesOfACharacterIsSkippedWithoutBreakingIt() {
        int[] ids = {0xE6, FakeTokenizer.EOT, 0x97, 0xA5};
        assertEquals(List.of("", "", "", "日", ""), assertStreamsLikeDecode(TOKENIZER, ids, true));
        assertEquals(List.of("", "\uFFFD<|eot|>", "\uFFFD", "\uFFFD", ""), assertStreamsLikeDecode(TOKENIZER, ids, false));
    }

    @Test
    void leadingSpaceIsStrippedFromTheFirstTokenOnly() {
        int[] ids = {STRIPPING.id(" Once"), STRIPPING.id(" upon")};
        assertEquals(List.of("Once", " upon", ""), assertStreamsLikeDecode(STRIPPING, ids, false));
        int[] same = {TOKENIZER.id(" Once"), TOKENIZER.id(" upon")};
        assertEquals(List.of(" Once", " upon", ""), assertStreamsLikeDecode(TOKENIZER, same, false));
    }

    @Test
    void leadingSpaceIsStrippedFromTheFirstTokenThatIsNotSkipped() {
        int[] ids = {FakeTokenizer.BOS, STRIPPING.id(" Once")};
        assertEquals(List.of("", "Once", ""), assertStreamsLikeDecode(STRIPPING, ids, true));
        // Not skipped, BOS is the first token: it has no leading space, so " Once" keeps its own.
        assertEquals(List.of("<s>", " Once", ""), assertStreamsLikeDecode(STRIPPING, ids, false));
    }

    @Test
    void leadingSpaceOfALoneSpaceByteTokenIsStripped() {
        int[] ids = {' ', ' ', 'x'};
        assertEquals(List.of("", " ", "x", ""), assertStreamsLikeDecode(STRIPPING, ids, false));
    }

    @Test
    void emptyFirstTokenStillCountsAsTheFirst() {
        int empty = STRIPPING.id(new byte[0]);
        assertEquals(List.of("", " x", ""), assertStreamsLikeDecode(STRIPPING, new int[] {empty, STRIPPING.id(" x")}, false));
    }

    @Test
    void tokensConsumedCountsSkippedAndHeldTokens() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, true);
        d.push(FakeTokenizer.BOS);
        d.push(0xE6);
        assertEquals(2, d.tokensConsumed());
    }

    @Test
    void pushAfterFlushIsRejectedAndFlushIsIdempotent() {
        IncrementalDetokenizer d = new IncrementalDetokenizer(TOKENIZER, false);
        d.push(0xE6);
        assertEquals("\uFFFD", d.flush());
        assertEquals("", d.flush());
        assertThrows(IllegalStateException.class, () -> d.push('a'));
    }

    /** Pushes {@code ids}, checks {@code concat(pushes) + flush == decode}, returns every push and the flush. */
    private static List<String> assertStreamsLikeDecode(FakeTokenizer tokenizer, int[] ids, boolean skipSpecial) {
        IncrementalDetokenizer d = new IncrementalDetokenizer(tokenizer, skipSpecial);
        List<String> deltas = new ArrayList<>();
        for (int id : ids) {
            deltas.add(d.push(id));
        }
        deltas.add(d.flush());
        assertEquals(tokenizer.decode(ids, skipSpecial), String.join("", deltas),
                () -> "tokens " + describe(tokenizer, ids) + ", skipSpecial " + skipSpecial + ", deltas " + deltas);
        return deltas;
    }

    private static int[] tokens(byte[] bytes, int[] cuts) {
        int[] bounds = Cuts.bounds(cuts, bytes.length);
        int[] ids = new int[bounds.length - 1];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = TOKENIZER.id(Arrays.copyOfRange(bytes, bounds[i], bounds[i + 1]));
        }
        return ids;
    }

    /** Byte tokens (biased to non-ASCII), text pieces with spaces, specials, and random byte runs. */
    private static int randomToken(FakeTokenizer tokenizer, Random random) {
        return switch (random.nextInt(8)) {
            case 0 -> random.nextInt(128);
            case 1, 2 -> 128 + random.nextInt(128);
            case 3 -> FakeTokenizer.BOS + random.nextInt(3);
            case 4 -> tokenizer.id(List.of(" the", "日本", " ", "é", "😀", " \u0301").get(random.nextInt(6)));
            default -> {
                byte[] run = new byte[1 + random.nextInt(5)];
                random.nextBytes(run);
                if (random.nextBoolean()) {
                    run[0] = ' ';
                }
                yield tokenizer.id(run);
            }
        };
    }

    private static String describe(FakeTokenizer tokenizer, int[] ids) {
        return Arrays.stream(ids).mapToObj(id -> id < 256 || tokenizer.isSpecial(id) ? tokenizer.piece(id)
                : "[" + HexFormat.ofDelimiter(" ").formatHex(tokenizer.tokenBytes(id)) + "]").toList().toString();
    }
}
