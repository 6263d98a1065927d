package io.nereid.engine.structured;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import io.nereid.engine.api.Constraint;
import io.nereid.engine.tokenizer.GgufTokenizerLoader;
import io.nereid.engine.tokenizer.HfTokenizerLoader;
import io.nereid.engine.tokenizer.Tokenizer;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The grammar engine against independent references: masks against checking every token of
 * real vocabularies one by one, regexes against {@link java.util.regex.Pattern}, numeric ranges
 * against {@link BigDecimal}, rollback against a fresh matcher.
 */
class GrammarMatcherTest {

    static Tokenizer tokenizer(String name) {
        return switch (name) {
            case "llama3", "qwen3" -> HfTokenizerLoader.load(Fixtures.path("tokenizers/" + name + "/tokenizer.json"));
            default -> GgufTokenizerLoader.load(Fixtures.path("tokenizers/" + name + "/vocab.gguf"));
        };
    }

    private static final String PERSON = """
            {"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":150},
             "tags":{"type":"array","items":{"enum":["a","b","ü"]},"maxItems":3},"ok":{"type":"boolean"}},
             "required":["name","age"],"additionalProperties":false}""";

    /** Counted repetitions longer and shorter than the longest token: masks derived from other states' masks. */
    private static final String COUNTED = """
            {"type":"object","properties":{"s":{"type":"string","minLength":140,"maxLength":300},
             "l":{"type":"array","items":{"type":"string","maxLength":20},"minItems":2,"maxItems":200}},
             "required":["s","l"],"additionalProperties":false}""";
    private static final String LONG_TEXT = "It was the best of times, it was the worst of times, it was the age of wisdom, "
            + "it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season";

    /** The output the walk follows, and the constraint it satisfies. */
    private record Case(Constraint constraint, String output) {
    }

    private static final List<Case> CASES = List.of(
            new Case(new Constraint.JsonSchema(PERSON, false), "{\"name\":\"Zoë \\\"Z\\\"\",\"age\":42,\"tags\":[\"ü\",\"a\"],\"ok\":true}"),
            new Case(new Constraint.JsonSchema("{\"type\":\"object\"}", true), "{ \"a\" : [1, 2.5e3, {\"b\": null}] }"),
            new Case(new Constraint.Regex("(\\d{3})-[A-Z]{2,4}x?"), "123-ABCx"),
            new Case(new Constraint.Choice(List.of("positive", "negative", "neutral")), "neutral"),
            new Case(new Constraint.Grammar("""
                    root ::= greeting " " name "!"
                    greeting ::= "Hello" | "Hi"   # a comment
                    name ::= [A-Z] [a-z]{1,8}
                    """), "Hello World!"),
            new Case(new Constraint.JsonSchema(COUNTED, false),
                    "{\"s\":\"" + LONG_TEXT + "\",\"l\":[\"abc\",\"a longer item, here\",\"x\"]}"),
            new Case(new Constraint.Regex("[a-z ]{2,150}!"), "the quick brown fox jumps over the lazy dog and keeps on running!"),
            // declared names beside free keys: after the quote most bytes go to a free key's body, but 'n' and 'a'
            // to the declared names' prefixes (the mask's shortcut takes those first bytes out and walks them)
            new Case(new Constraint.JsonSchema("{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
                    + "\"age\":{\"type\":\"integer\"}}}", false), "{\"name\":\"Ann \\\"A\\\"\",\"age\":3,\"nam\":\"x\",\"zzz\":[1]}"));

    @ParameterizedTest
    @ValueSource(strings = {"llama3", "qwen3", "llama-spm", "gpt-2"})
    void masksEqualCheckingEveryTokenAlongAnOutput(String vocabulary) {
        Tokenizer t = tokenizer(vocabulary);
        Constraints constraints = new Constraints(t);
        for (Case c : CASES) {
            CompiledConstraint compiled = constraints.compile(c.constraint());
            TokenMatcher m = compiled.matcher(new int[] {t.specialTokens().eos()});
            int[] ids = tokensOf(t, c.output());
            for (int step = 0; step <= ids.length; step++) {
                long[] mask = m.allowed();
                for (int id = 0; id < t.vocabSize(); id++) {
                    boolean expected = m.allows(id);
                    boolean actual = (mask[id >>> 6] >>> id & 1) != 0;
                    if (expected != actual) {
                        throw new AssertionError(vocabulary + " " + c.constraint().key() + " step " + step + ": token " + id
                                + " " + t.piece(id) + " mask " + actual + ", checked alone " + expected);
                    }
                }
                if (step < ids.length) {
                    assertTrue(m.allows(ids[step]), () -> "the output's own token is allowed");
                    m.accept(ids[step]);
                }
            }
            assertTrue(m.accepting(), c.output());
        }
    }

    /**
     * {@code text} as the longest tokens whose bytes it starts with (not the tokenizer's encode:
     * SentencePiece would add its leading space, which a continuation's text does not strip).
     */
    static int[] tokensOf(Tokenizer t, String text) {
        byte[] rest = text.getBytes(StandardCharsets.UTF_8);
        List<Integer> out = new ArrayList<>();
        int at = 0;
        while (at < rest.length) {
            int best = -1, bestLength = 0;
            for (int id = 0; id < t.vocabSize(); id++) {
                byte[] b = t.tokenBytes(id);
                if (!t.isSpecial(id) && b.length > bestLength && at + b.length <= rest.length
                        && java.util.Arrays.equals(b, 0, b.length, rest, at, at + b.length)) {
                    best = id;
                    bestLength = b.length;
                }
            }
            if (best < 0) {
                throw new AssertionError("no token for byte " + at + " of " + text);
            }
            out.add(best);
            at += bestLength;
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    @Test
    void brokenOutputsAreRejectedAtTheFirstBadToken() {
        Tokenizer t = tokenizer("llama3");
        CompiledConstraint c = new Constraints(t).compile(new Constraint.JsonSchema(PERSON, false));
        for (String bad : List.of("{\"age\":42}", "{\"name\":\"x\",\"age\":151}", "{\"name\":\"x\",\"age\":-1}",
                "{\"name\":\"0123456789abc\",\"age\":1}", "{\"name\":\"x\",\"age\":1,\"extra\":1}",
                "{\"name\":\"x\",\"age\":1,\"tags\":[\"c\"]}", "{\"name\":\"x\", \"age\":1}")) {
            TokenMatcher m = c.matcher(new int[0]);
            boolean rejected = false;
            for (int id : t.encode(bad, false, false)) {
                if (!m.allows(id)) {
                    rejected = true;
                    break;
                }
                m.accept(id);
            }
            assertTrue(rejected || !m.accepting(), bad);
        }
    }

    @Test
    void eosOnlyWhereTheOutputMayEndAndOnlyEosWhereItMust() {
        Tokenizer t = tokenizer("llama3");
        int eos = t.specialTokens().eos();
        TokenMatcher m = new Constraints(t).compile(new Constraint.Regex("ab?")).matcher(new int[] {eos});
        float[] logits = new float[t.vocabSize()];
        m.apply(logits);
        assertEquals(Float.NEGATIVE_INFINITY, logits[eos]);
        m.accept(t.encode("a", false, false)[0]);
        logits = new float[t.vocabSize()];
        m.apply(logits);
        assertEquals(0f, logits[eos]);                                   // may end after "a"
        assertEquals(0f, logits[t.encode("b", false, false)[0]]);       // or go on with "b"
        m.accept(t.encode("b", false, false)[0]);
        assertTrue(m.terminated());
        logits = new float[t.vocabSize()];
        m.apply(logits);
        for (int id = 0; id < logits.length; id++) {
            assertEquals(id == eos ? 0f : Float.NEGATIVE_INFINITY, logits[id], "only EOS after \"ab\"");
        }
        assertThrows(IllegalArgumentException.class, () -> m.accept(t.encode("a", false, false)[0]));
    }

    @Test
    void rollbackRestoresTheStateExactly() {
        Tokenizer t = tokenizer("qwen3");
        CompiledConstraint c = new Constraints(t).compile(new Constraint.JsonSchema(PERSON, false));
        int[] ids = t.encode(CASES.get(0).output(), false, false);
        TokenMatcher m = c.matcher(new int[0]);
        List<long[]> masks = new ArrayList<>();
        for (int id : ids) {
            masks.add(m.allowed());
            m.accept(id);
        }
        for (int back = 1; back <= ids.length; back++) {
            m.rollback(1);
            assertArrayEquals(masks.get(ids.length - back), m.allowed(), "after rolling back " + back);
        }
        assertThrows(IllegalArgumentException.class, () -> m.rollback(1));
        for (int id : ids) {   // and forward again
            m.accept(id);
        }
        assertTrue(m.accepting());
    }

    /** Up to {@code maxLength} code points drawn from {@code alphabet}'s. */
    private static String randomString(Random random, String alphabet, int maxLength) {
        int points = alphabet.codePointCount(0, alphabet.length());
        StringBuilder s = new StringBuilder();
        for (int i = random.nextInt(maxLength + 1); i > 0; i--) {
            s.appendCodePoint(alphabet.codePointAt(alphabet.offsetByCodePoints(0, random.nextInt(points))));
        }
        return s.toString();
    }

    /** Acceptance of a whole byte string by the automaton alone. */
    private static boolean accepts(Automaton a, String s) {
        int st = a.advance(a.initial(), s.getBytes(StandardCharsets.UTF_8));
        return st != Automaton.DEAD && a.accepting(st);
    }

    private static Automaton automaton(Grammar g) {
        return new Automaton(g, TokenTrie.of(tokenizer("gpt-2")));
    }

    @Test
    void regexesMatchWhatJavaRegexMatches() {
        String[] patterns = {"a*b+c?", "(ab|cd){2,3}", "[^a-c]x", "\\d{2,}\\.\\d?", "(?:x|y)*z", "[\\w-]+@[a-z]+\\.(com|org)",
            "ü+[α-ω]", ".{0,3}", "a|b|", "[\\s\\S]b", "(a(b(c)?)?)+", "\\u0041\\x42[\\-+]"};
        String alphabet = "abcdxyz01.@-+ üαβω\nAB_";
        Random random = new Random(7);
        for (String p : patterns) {
            Automaton a = automaton(grammarOf(RegexCompiler.fullMatch(p)));
            Pattern reference = Pattern.compile(p);
            int matched = 0;
            for (int k = 0; k < 3000; k++) {
                String s = randomString(random, alphabet, 6);
                boolean expected = reference.matcher(s).matches();
                matched += expected ? 1 : 0;
                assertEquals(expected, accepts(a, s.toString()), () -> p + " on '" + s + "'");
            }
            for (String s : List.of("abc", "abcd", "cdcd", "ab@cd.com", "12.", "üα", "z", "aaaa", "b")) {
                assertEquals(reference.matcher(s).matches(), accepts(a, s), p + " on " + s);
            }
        }
    }

    @Test
    void unsupportedRegexFeaturesAreRefusedByName() {
        for (String[] c : new String[][] {{"(?=a)b", "lookaround"}, {"(a)\\1", "backreferences"}, {"\\bword", "word boundaries"},
            {"\\p{L}", "Unicode property"}, {"a{3,1}", "wrong way round"}, {"(ab", "missing ')'"}, {"[z-a]", "out of order"}}) {
            GrammarException e = assertThrows(GrammarException.class, () -> RegexCompiler.fullMatch(c[0]));
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
        }
    }

    private static Grammar grammarOf(Expr e) {
        return Grammar.of(b -> e);
    }

    @Test
    void integerRangesAreExact() {
        Random random = new Random(3);
        for (int k = 0; k < 60; k++) {
            BigInteger lo = random.nextInt(4) == 0 ? null : BigInteger.valueOf(random.nextInt(2400) - 1200);
            BigInteger hi = random.nextInt(4) == 0 ? null : BigInteger.valueOf(random.nextInt(2400) - 1200);
            if (lo != null && hi != null && lo.compareTo(hi) > 0) {
                continue;
            }
            Automaton a = automaton(grammarOf(Numbers.integerRange(lo, hi)));
            for (int v = -1500; v <= 1500; v++) {
                boolean in = (lo == null || lo.intValue() <= v) && (hi == null || v <= hi.intValue());
                assertEquals(in, accepts(a, Integer.toString(v)), "[" + lo + ", " + hi + "] " + v);
            }
            assertEquals(hi == null, accepts(a, "123456789012"), "a long one");
            assertFalse(accepts(a, "007"), "leading zeros");
            assertFalse(accepts(a, "-0"), "minus zero");
        }
    }

    @Test
    void numberRangesAreExact() {
        String[] samples = {"0", "0.0", "0.5", "0.25", "0.2501", "0.249", "0.01", "0.001", "1", "1.0", "1.00", "1.01", "2",
            "2.5", "2.25", "2.2500", "2.26", "9.999", "10", "10.0", "10.1", "-0.5", "-0.25", "-0.2", "-1", "-1.0", "-1.5",
            "-1.50", "-1.51", "-2", "-10", "-10.0", "-10.01", "100", "5", "4.99", "99.99", "100.001"};
        String[][] ranges = {{"0", "10"}, {"-10", "-1"}, {"-1", "5"}, {"1", "1"}, {"0", null}, {null, "2"}, {"0.25", "2.25"},
            {"-1.5", "-0.25"}, {"0.01", null}, {null, "99.99"}, {"-0.5", "0.5"}, {"2.25", "2.25"}, {"0.249", "0.2501"}};
        for (String[] r : ranges) {
            for (int ex = 0; ex < 4; ex++) {
                boolean loEx = (ex & 1) != 0, hiEx = (ex & 2) != 0;
                BigDecimal lo = r[0] == null ? null : new BigDecimal(r[0]);
                BigDecimal hi = r[1] == null ? null : new BigDecimal(r[1]);
                Expr e = Numbers.numberRange(lo, loEx, hi, hiEx);
                if (e == null) {
                    assertTrue(lo != null && lo.compareTo(hi) == 0 && (loEx || hiEx), java.util.Arrays.toString(r));
                    continue;
                }
                Automaton a = automaton(grammarOf(e));
                for (String s : samples) {
                    BigDecimal x = new BigDecimal(s);
                    boolean in = (lo == null || (loEx ? x.compareTo(lo) > 0 : x.compareTo(lo) >= 0))
                            && (hi == null || (hiEx ? x.compareTo(hi) < 0 : x.compareTo(hi) <= 0));
                    boolean minusZero = s.startsWith("-") && x.signum() == 0;
                    assertEquals(in && !minusZero, accepts(a, s), () -> java.util.Arrays.toString(r) + " ex " + loEx + hiEx + " " + s);
                }
            }
        }
    }

    @Test
    void grammarsAreCheckedWhenBuilt() {
        assertTrue(assertThrows(GrammarException.class, () -> Constraints.grammar(new Constraint.Grammar("root ::= root \"a\" | \"b\"")))
                .getMessage().contains("left-recursive"));
        assertTrue(assertThrows(GrammarException.class, () -> Constraints.grammar(new Constraint.Grammar("root ::= x")))
                .getMessage().contains("'x' is used (line 1) but never defined"));
        assertTrue(assertThrows(GrammarException.class, () -> Constraints.grammar(new Constraint.Grammar("start ::= \"a\"")))
                .getMessage().contains("no 'root' rule"));
        assertTrue(assertThrows(GrammarException.class, () -> Constraints.grammar(new Constraint.Grammar("root ::= \"a")))
                .getMessage().contains("unterminated string"));
        Automaton a = automaton(Constraints.grammar(new Constraint.Grammar("root ::= item (\",\" item)*\nitem ::= [0-9]+ | \"(\" root \")\"")));
        assertTrue(accepts(a, "1,(2,(3)),45"));
        assertFalse(accepts(a, "1,(2,(3),45"));
    }

    @Test
    void schemaKeywordsThatCannotBeHonouredAreRefusedByName() {
        for (String[] c : new String[][] {{"{\"not\":{\"required\":[\"a\",\"b\"]}}", "'not' with [required]"},
            {"{\"type\":\"array\",\"uniqueItems\":true}", "uniqueItems"},
            {"{\"type\":\"number\",\"multipleOf\":0.0000001234567}", "multipleOf"},   // a step of too many states
            {"{\"$ref\":\"http://example.com/s.json\"}", "same document"},
            {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}", "no integer"},
            {"{\"type\":\"strin\"}", "unknown type strin"},
            {"[1]", "object or a boolean"}, {"{\"type\":", "not valid JSON"}}) {
            GrammarException e = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(c[0], false), c[0]);
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
        }
    }

    /** {@code format: uri-reference}: RFC 3986 URIs and relative references, each JSON string whole. */
    @Test
    void uriReferenceFormatFollowsRfc3986() {
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"format\":\"uri-reference\"}", false));
        for (String ok : List.of("", "#frag", "?q=1", "../a/b", "a/b:c", "/abs/path", "//host:80/p", "mailto:a@b.c",
                "http://user:pw@host.com:8080/p/a%20t?q=a/b?c#f/x?", "urn:isbn:0451450523", "./x;y=1,2", "~user/(x)")) {
            assertTrue(accepts(a, "\"" + ok + "\""), ok);
        }
        for (String bad : List.of("1a:b", "a b", "http://a:b:c", "%zz", "a#b#c", "<x>", "x\\\\y", "a{b}", "ht tp://x", "a|b")) {
            assertFalse(accepts(a, "\"" + bad + "\""), bad);
        }
    }

    /**
     * {@code format: ipv6}: RFC 4291's forms, checked against the JDK's literal parser on random
     * hex-and-colon strings, and by hand for the dotted IPv4 endings and what Python's
     * {@code ipaddress} (the validators' check) refuses.
     */
    @Test
    void ipv6FormatAcceptsRfc4291Addresses() {
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"format\":\"ipv6\"}", false));
        for (String ok : List.of("::", "::1", "1::", "2001:db8::8:800:200c:417a", "ff01::101", "1:2:3:4:5:6:7:8",
                "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "0000:0000:0000:0000:0000:0000:0000:0001", "::13.1.68.3",
                "::ffff:129.144.52.38", "1:2:3:4:5:6:1.2.3.4", "1::5:6:1.2.3.4", "1:2:3:4:5::1.2.3.4", "ABCD:ef01::")) {
            assertTrue(accepts(a, "\"" + ok + "\""), ok);
        }
        for (String bad : List.of("", ":", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1::2::3", "12345::",
                "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.04", "::256.1.1.1", "1.2.3.4", "::1%eth0", "g::", ":1:2", "1:2:", "::1.2.3")) {
            assertFalse(accepts(a, "\"" + bad + "\""), bad);
        }
        Random random = new Random(6);
        String[] pieces = {"0", "a", "ff", "1f2", "dead", "12345", ":", ":", "::"};
        int valid = 0;
        for (int i = 0; i < 20_000; i++) {
            StringBuilder sb = new StringBuilder();
            for (int n = 1 + random.nextInt(16); n > 0; n--) {
                sb.append(pieces[random.nextInt(pieces.length)]);
            }
            String s = sb.toString();
            boolean expected;
            try {
                // the JDK also takes groups of more than four digits ("001f20") that Python refuses
                expected = java.net.Inet6Address.ofLiteral(s) != null
                        && java.util.Arrays.stream(s.split(":")).allMatch(g -> g.length() <= 4);
            } catch (IllegalArgumentException e) {
                expected = false;
            }
            assertEquals(expected, accepts(a, "\"" + s + "\""), s);
            valid += expected ? 1 : 0;
        }
        assertTrue(valid > 200, valid + " valid addresses among the random strings");
    }

    /**
     * {@code if} on one property's constants: {@code then} where the property is absent or has one
     * of them, {@code else} where it has another value; with the property required in the
     * {@code if}, absent means {@code else}. Other {@code if} shapes are refused by name.
     */
    @Test
    void ifThenElseOnAPropertysConstants() {
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                + "\"integer\"},\"b\":{\"type\":\"integer\"},\"c\":{\"type\":\"string\"}},\"if\":{\"properties\":"
                + "{\"c\":{\"enum\":[\"ghi\"]}}},\"then\":{\"required\":[\"a\",\"b\",\"c\"]},\"else\":{\"required\":"
                + "[\"a\",\"c\"]}}", false));
        assertTrue(accepts(a, "{\"a\":1,\"b\":2,\"c\":\"ghi\"}"));
        assertTrue(accepts(a, "{\"c\":\"x\",\"a\":1}"), "else");
        assertTrue(accepts(a, "{\"a\":1,\"b\":2,\"c\":\"x\"}"), "else, b allowed");
        assertFalse(accepts(a, "{\"a\":1,\"c\":\"ghi\"}"), "then needs b");
        assertFalse(accepts(a, "{\"c\":\"x\"}"), "else needs a");
        assertFalse(accepts(a, "{\"a\":1,\"b\":2}"), "c absent: then, which needs c");
        assertFalse(accepts(a, "{\"a\":1,\"b\":2,\"c\":3}"), "the properties still hold");

        Automaton r = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"t\":{\"type\":"
                + "\"string\"},\"n\":{\"type\":\"integer\"}},\"if\":{\"properties\":{\"t\":{\"const\":\"x\"}},"
                + "\"required\":[\"t\"]},\"then\":{\"required\":[\"n\"]}}", false));
        assertTrue(accepts(r, "{\"t\":\"x\",\"n\":1}"));
        assertFalse(accepts(r, "{\"t\":\"x\"}"), "then needs n");
        assertTrue(accepts(r, "{\"t\":\"y\"}"), "else: anything");
        assertTrue(accepts(r, "{}"), "t absent fails the if's required: else");
        assertTrue(accepts(r, "{\"n\":2}"));

        // as issue-tracker schemas write it: the property an enum, the else of another value of it;
        // then forbidding a property (not required)
        Automaton e = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"c\":{\"type\":"
                + "\"string\",\"enum\":[\"abc\",\"ghi\"]},\"i\":{\"type\":\"integer\"}},\"if\":{\"properties\":{\"c\":"
                + "{\"const\":\"ghi\"}}},\"then\":{\"not\":{\"required\":[\"i\"]}},\"else\":{\"required\":[\"i\"]}}", false));
        assertTrue(accepts(e, "{\"c\":\"ghi\"}"));
        assertFalse(accepts(e, "{\"c\":\"ghi\",\"i\":1}"), "then: i may not appear");
        assertTrue(accepts(e, "{\"c\":\"abc\",\"i\":1}"));
        assertFalse(accepts(e, "{\"c\":\"abc\"}"), "else needs i");
        assertFalse(accepts(e, "{\"c\":\"xyz\",\"i\":1}"), "c's enum still holds");
        assertTrue(accepts(e, "{}"), "c absent: then");

        Automaton none = automaton(JsonSchemaCompiler.compile("{\"then\":{\"type\":\"string\"}}", false));
        assertTrue(accepts(none, "12"), "then without if has no effect");
        for (String refused : List.of("{\"if\":{\"properties\":{\"a\":{\"type\":\"string\"}}},\"then\":{}}",
                "{\"if\":{\"required\":[\"a\"]},\"then\":{}}",
                "{\"if\":{\"properties\":{\"a\":{\"const\":1},\"b\":{\"const\":2}}},\"then\":{}}")) {
            GrammarException x = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(refused, false));
            assertTrue(x.getMessage().contains("'if' (at root) is supported when it tests one property"), x.getMessage());
        }
    }

    /**
     * {@code propertyNames}: a pattern or a list of names bounds the keys; a declared property it
     * does not name may not appear; other name schemas are refused by name.
     */
    @Test
    void propertyNamesBoundTheKeys() {
        Automaton p = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"propertyNames\":{\"pattern\":"
                + "\"^[a-z]+$\"},\"additionalProperties\":{\"type\":\"integer\"}}", false));
        assertTrue(accepts(p, "{\"ab\":1,\"c\":2}"));
        assertFalse(accepts(p, "{\"aB\":1}"), "a key off the pattern");
        assertFalse(accepts(p, "{\"ab\":\"x\"}"), "additionalProperties still holds");
        Automaton e = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"up\":{\"type\":"
                + "\"integer\"},\"zz\":{\"type\":\"integer\"}},\"propertyNames\":{\"$ref\":\"#/$defs/dir\"},\"$defs\":"
                + "{\"dir\":{\"type\":\"string\",\"enum\":[\"up\",\"down\"]}}}", false));
        assertTrue(accepts(e, "{\"up\":1,\"down\":true}"));
        assertTrue(accepts(e, "{}"));
        assertFalse(accepts(e, "{\"zz\":1}"), "declared but not a name propertyNames allows");
        assertFalse(accepts(e, "{\"left\":1}"));
        Automaton none = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"propertyNames\":false}", false));
        assertTrue(accepts(none, "{}"));
        assertFalse(accepts(none, "{\"a\":1}"));
        GrammarException x = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(
                "{\"type\":\"object\",\"propertyNames\":{\"maxLength\":3}}", false));
        assertTrue(x.getMessage().contains("propertyNames (at root) is supported as"), x.getMessage());
    }

    @Test
    void propertyCountsAndAnyOrder() {
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},"
                + "\"y\":{\"type\":\"integer\"},\"z\":{\"type\":\"integer\"}},\"required\":[\"z\"],\"minProperties\":2,"
                + "\"maxProperties\":3,\"additionalProperties\":{\"type\":\"boolean\"}}", false));
        assertTrue(accepts(a, "{\"y\":1,\"z\":2}"));
        assertTrue(accepts(a, "{\"z\":2,\"x\":1}"), "any order");
        assertTrue(accepts(a, "{\"z\":2,\"q\":true}"), "an additional one counts");
        assertTrue(accepts(a, "{\"z\":2,\"q\":true,\"r\":false}"));
        assertFalse(accepts(a, "{\"z\":2}"), "minProperties");
        assertFalse(accepts(a, "{\"x\":1,\"y\":1}"), "required");
        assertFalse(accepts(a, "{\"z\":2,\"q\":true,\"r\":false,\"s\":true}"), "maxProperties");
        assertFalse(accepts(a, "{\"x\":1,\"y\":1,\"z\":2,\"q\":true}"), "maxProperties");
        assertFalse(accepts(a, "{\"z\":2,\"z\":3}"), "a declared property once");
    }

    @Test
    void toolCallGrammarsForceOrAllowCallsInTheModelsSyntax() {
        List<Constraint.Tool> tools = List.of(new Constraint.Tool("get_weather",
                "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"],\"additionalProperties\":false}"),
                new Constraint.Tool("now", "{\"type\":\"object\",\"properties\":{}}"));
        String call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
        String other = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
        Automaton required = automaton(Constraints.grammar(new Constraint.ToolCalls(
                io.nereid.engine.api.ToolCallFormat.HERMES, tools, null, true, true)));
        assertTrue(accepts(required, call));
        assertTrue(accepts(required, call + "\n" + other), "parallel calls");
        assertFalse(accepts(required, "Sure. " + call), "required: no text");
        assertFalse(accepts(required, call.replace("Paris\"", "Paris\", \"x\": 1")), "arguments follow the schema");
        Automaton auto = automaton(Constraints.grammar(new Constraint.ToolCalls(
                io.nereid.engine.api.ToolCallFormat.HERMES, tools, null, false, false)));
        assertTrue(accepts(auto, "Just text, no <tool call> at all."));
        assertTrue(accepts(auto, "Let me check. " + call));
        assertFalse(accepts(auto, "Let me check. " + call + "\n" + other), "parallel_tool_calls false: one call");
        assertFalse(accepts(auto, "x <tool_call>\n{\"name\": \"rm_rf\""), "once opened, the call is constrained");
        Automaton named = automaton(Constraints.grammar(new Constraint.ToolCalls(
                io.nereid.engine.api.ToolCallFormat.LLAMA3_JSON, tools, "now", true, false)));
        assertTrue(accepts(named, "{\"name\": \"now\", \"parameters\": {}}"));
        assertFalse(accepts(named, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"x\"}}"), "only the named one");
        GrammarException e = assertThrows(GrammarException.class, () -> Constraints.grammar(new Constraint.ToolCalls(
                io.nereid.engine.api.ToolCallFormat.HERMES, tools, "missing", true, false)));
        assertTrue(e.getMessage().contains("'missing'"), e.getMessage());
        // response_format with tools: the calls, or the answer in its format; nothing before a call
        Constraint answer = new Constraint.JsonSchema("{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
                + "\"required\":[\"ok\"],\"additionalProperties\":false}", false);
        for (io.nereid.engine.api.ToolCallFormat f : List.of(io.nereid.engine.api.ToolCallFormat.HERMES,
                io.nereid.engine.api.ToolCallFormat.LLAMA3_JSON)) {
            Automaton formatted = automaton(Constraints.grammar(new Constraint.ToolCalls(f, tools, null, false, true, answer)));
            String c = f == io.nereid.engine.api.ToolCallFormat.HERMES ? call
                    : "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
            assertTrue(accepts(formatted, "{\"ok\":true}"), f + ": the answer");
            assertTrue(accepts(formatted, c), f + ": a call");
            assertFalse(accepts(formatted, "Sure: {\"ok\":true}"), f + ": text is not the answer's format");
            assertFalse(accepts(formatted, "{\"ok\":1}"), f + ": the answer follows its schema");
            assertFalse(accepts(formatted, "{\"ok\":true}" + c), f + ": the answer, or calls");
        }
        Automaton forced = automaton(Constraints.grammar(new Constraint.ToolCalls(
                io.nereid.engine.api.ToolCallFormat.HERMES, tools, null, true, true, answer)));
        assertFalse(accepts(forced, "{\"ok\":true}"), "required: calls only");
        assertTrue(accepts(forced, call));
        assertNotEquals(new Constraint.ToolCalls(io.nereid.engine.api.ToolCallFormat.HERMES, tools, null, false, true, answer).key(),
                new Constraint.ToolCalls(io.nereid.engine.api.ToolCallFormat.HERMES, tools, null, false, true).key());
    }

    @Test
    void aThoughtIsFreeAndTheConstraintHoldsAfterIt() {
        Constraint json = new Constraint.JsonSchema("{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
                + "\"required\":[\"ok\"],\"additionalProperties\":false}", false);
        Automaton r1 = automaton(Constraints.grammar(new Constraint.AfterThinking(json, true)));
        assertTrue(accepts(r1, "Let me think: {not json} </thin.</think>\n\n{\"ok\":true}"));
        assertTrue(accepts(r1, "<think>\nhm</think>{\"ok\":false}"));
        assertFalse(accepts(r1, "{\"ok\":true}"), "the prompt opened a thought: it must close");
        assertFalse(accepts(r1, "hm</think>\n\nnot json"), "the answer follows the schema");
        Automaton qwen = automaton(Constraints.grammar(new Constraint.AfterThinking(json, false)));
        assertTrue(accepts(qwen, "{\"ok\":true}"), "no thought");
        assertTrue(accepts(qwen, "<think>\nplan\n</think>\n\n{\"ok\":true}"));
        assertFalse(accepts(qwen, "plan</think>{\"ok\":true}"), "a thought opens with <think>");
    }

    @Test
    void largeObjectsTakeTheSchemasOrderOrRequiredFirst() {
        StringBuilder props = new StringBuilder();
        for (char c = 'a'; c <= 'i'; c++) {
            props.append(c == 'a' ? "" : ",").append("\"").append(c).append("\":{\"type\":\"integer\"}");
        }
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{" + props
                + "},\"required\":[\"i\",\"c\"],\"additionalProperties\":false}", false));
        assertTrue(accepts(a, "{\"a\":1,\"c\":2,\"d\":3,\"i\":4}"), "schema order");
        assertTrue(accepts(a, "{\"i\":4,\"c\":2,\"a\":1,\"d\":3}"), "required first, then schema order");
        assertFalse(accepts(a, "{\"c\":2,\"a\":1,\"i\":4}"), "another order");
        assertFalse(accepts(a, "{\"a\":1,\"d\":3,\"i\":4}"), "required");
    }

    @Test
    void patternPropertiesWithNoOtherKeys() {
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},"
                + "\"patternProperties\":{\"^x-[a-z]+$\":{\"type\":\"integer\"}},\"additionalProperties\":false}", false));
        assertTrue(accepts(a, "{\"id\":\"a\",\"x-ab\":1,\"x-c\":2}"));
        assertTrue(accepts(a, "{\"x-ab\":1}"));
        assertFalse(accepts(a, "{\"x-ab\":\"s\"}"), "the pattern's schema");
        assertFalse(accepts(a, "{\"y\":1}"), "no other keys");
        assertFalse(accepts(a, "{\"x-A\":1}"), "the pattern");
        for (String bad : List.of(
                "{\"patternProperties\":{\"^a\":{\"type\":\"integer\"},\"b\":{\"type\":\"string\"}}}",   // key "ab": both
                "{\"properties\":{\"ab\":{}},\"patternProperties\":{\"^a\":{\"type\":\"integer\"}}}")) {
            GrammarException e = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(bad, false), bad);
            assertTrue(e.getMessage().contains("patternProperties"), e.getMessage());
        }
    }

    @Test
    void patternPropertiesAndAdditionalPropertiesTogetherAreExact() {
        // keys matching ^x- take integers, keys matching [0-9]$ strings, any other key booleans; "id" is declared
        String schema = "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"null\"}},\"patternProperties\":{"
                + "\"^x-\":{\"type\":\"integer\"},\"[0-9]$\":{\"type\":\"string\"},\"^y\":{}},"
                + "\"additionalProperties\":{\"type\":\"boolean\"}}";
        GrammarException overlap = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(schema, false));
        assertTrue(overlap.getMessage().contains("can both match a key"), overlap.getMessage());   // "x-1"
        String disjoint = schema.replace("\"[0-9]$\"", "\"^[0-9]+$\"");
        Automaton a = automaton(JsonSchemaCompiler.compile(disjoint, false));
        java.util.function.BiFunction<String, String, Boolean> valid = (key, value) -> {
            if (key.equals("id")) {
                return value.equals("null");
            }
            if (key.startsWith("x-")) {
                return value.matches("-?[0-9]+");
            }
            if (key.matches("[0-9]+")) {
                return value.startsWith("\"");
            }
            if (key.startsWith("y")) {
                return true;
            }
            return value.equals("true") || value.equals("false");
        };
        List<String> keys = List.of("id", "x-a", "x-", "12", "1a", "y", "yes", "other", "x", "");
        List<String> values = List.of("1", "\"s\"", "true", "null");
        Random random = new Random(5);
        for (int k = 0; k < 400; k++) {
            int n = random.nextInt(3) + 1;
            StringBuilder o = new StringBuilder("{");
            boolean expected = true;
            java.util.Set<String> used = new java.util.HashSet<>();
            for (int i = 0; i < n; i++) {
                String key = keys.get(random.nextInt(keys.size()));
                if (!used.add(key)) {
                    continue;
                }
                String value = values.get(random.nextInt(values.size()));
                expected &= valid.apply(key, value);
                o.append(o.length() > 1 ? "," : "").append('"').append(key).append("\":").append(value);
            }
            String json = o.append('}').toString();
            if (json.startsWith("{\"id\"") || !json.contains("\"id\"")) {   // declared properties come first
                assertEquals(expected, accepts(a, json), json);
            }
        }
    }

    @Test
    void recursiveSchemasCompile() {
        String tree = "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},"
                + "\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"v\"],"
                + "\"additionalProperties\":false}},\"$ref\":\"#/$defs/node\"}";
        Automaton a = automaton(JsonSchemaCompiler.compile(tree, false));
        assertTrue(accepts(a, "{\"v\":1,\"kids\":[{\"v\":2},{\"v\":3,\"kids\":[{\"v\":4,\"kids\":[]}]}]}"));
        assertFalse(accepts(a, "{\"v\":1,\"kids\":[{\"w\":2}]}"));
    }

    @Test
    void patternsAndFormatsWithLengthsMatchExactlyTheStringsOfThoseLengths() {
        // pattern (a search unless anchored) and minLength / maxLength, counted in characters: against Java's regex
        String[][] cases = {{"^[a-z0-9-]+$", "2", "5"}, {"ab", "0", "4"}, {"^(x|yz)*$", "3", "-1"}, {"[0-9]", "1", "3"},
            {"^ü+α?$", "0", "3"}, {"^.*$", "2", "2"}};
        String alphabet = "abz09-xyüα\"";
        Random random = new Random(11);
        for (String[] c : cases) {
            int min = Integer.parseInt(c[1]);
            int max = Integer.parseInt(c[2]);
            String schema = "{\"type\":\"string\",\"pattern\":\"" + c[0] + "\",\"minLength\":" + min
                    + (max >= 0 ? ",\"maxLength\":" + max : "") + "}";
            Automaton a = automaton(JsonSchemaCompiler.compile(schema, false));
            Pattern reference = Pattern.compile(c[0]);
            int matched = 0;
            List<String> samples = new java.util.ArrayList<>(List.of("xyz", "xxx", "yzx", "xyzx", "xx", "ab", "abab", "a-b",
                    "üüα", "ü", "09", "9", "zz", "ab09-", "\"ab\""));
            for (int k = 0; k < 2000; k++) {
                samples.add(randomString(random, alphabet, 7));
            }
            for (String v : samples) {
                int chars = v.codePointCount(0, v.length());
                boolean expected = reference.matcher(v).find() && chars >= min && (max < 0 || chars <= max);
                matched += expected ? 1 : 0;
                String json = "\"" + v.replace("\"", "\\\"") + "\"";
                assertEquals(expected, accepts(a, json), schema + " on " + json);
            }
            assertTrue(matched >= 3, schema + ": too few matching samples (" + matched + ")");
        }
        // an email format with maxLength 1024: too long to count exactly, narrowed (never wider)
        Automaton email = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"format\":\"email\",\"maxLength\":1024}",
                false));
        assertTrue(accepts(email, "\"a.b@example.com\""));
        assertFalse(accepts(email, "\"not an email\""));
        assertFalse(accepts(email, "\"" + "a".repeat(1030) + "@x.org\""), "over maxLength");
        // a pattern and a format both hold (the calendar too), and a format with lengths
        Automaton both = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"format\":\"date\","
                + "\"pattern\":\"^([0-9]{4})(-([0-9]{2}))*$\"}", false));
        assertTrue(accepts(both, "\"2020-02-29\""));
        assertFalse(accepts(both, "\"2020-02-30\""), "the format");
        assertFalse(accepts(both, "\"2020-1-02\""), "the pattern and the format");
        Automaton date = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"format\":\"date\",\"maxLength\":10}", false));
        assertTrue(accepts(date, "\"2024-02-29\""));
        assertFalse(accepts(date, "\"2023-02-29\""), "still the calendar");
        GrammarException e = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(
                "{\"type\":\"string\",\"pattern\":\"^[0-9]{5}$\",\"maxLength\":3}", false));
        assertTrue(e.getMessage().contains("matches no string of 0..3 characters"), e.getMessage());
    }

    @Test
    void propertyDependenciesHoldInEveryOrder() {
        // credit_card needs billing_address (draft 4-7 list form); name needs nothing; a schema form that only lists required
        String schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"credit_card\":{\"type\":\"integer\"},"
                + "\"billing_address\":{\"type\":\"string\"},\"zip\":{\"type\":\"integer\"}},\"required\":[\"name\"],"
                + "\"additionalProperties\":false,\"dependencies\":{\"credit_card\":[\"billing_address\"],"
                + "\"zip\":{\"required\":[\"billing_address\",\"name\"]}}}";
        Automaton a = automaton(JsonSchemaCompiler.compile(schema, false));
        assertTrue(accepts(a, "{\"name\":\"a\"}"));
        assertTrue(accepts(a, "{\"credit_card\":1,\"name\":\"a\",\"billing_address\":\"x\"}"));
        assertTrue(accepts(a, "{\"billing_address\":\"x\",\"name\":\"a\"}"), "the dependency is one way");
        assertFalse(accepts(a, "{\"name\":\"a\",\"credit_card\":1}"), "credit_card without billing_address");
        assertFalse(accepts(a, "{\"zip\":1,\"name\":\"a\"}"), "zip without billing_address");
        assertTrue(accepts(a, "{\"zip\":1,\"billing_address\":\"x\",\"name\":\"a\"}"));
        Automaton d = automaton(JsonSchemaCompiler.compile(schema.replace("\"dependencies\"", "\"dependentRequired\"")
                .replace("{\"required\":[\"billing_address\",\"name\"]}", "[\"billing_address\"]"), false));
        assertFalse(accepts(d, "{\"name\":\"a\",\"credit_card\":1}"), "dependentRequired, 2019-09's name");
        assertFalse(accepts(automaton(JsonSchemaCompiler.compile(schema.replace("\"additionalProperties\":false,", ""), false)),
                "{\"name\":\"a\",\"credit_card\":1}"), "declared names, whatever other keys may appear");
        // an undeclared need, other keys allowed: tracked like a declared property with additionalProperties' schema
        Automaton cvv = automaton(JsonSchemaCompiler.compile(schema.replace("\"additionalProperties\":false,", "")
                .replace("[\"billing_address\"]", "[\"cvv\"]"), false));
        assertFalse(accepts(cvv, "{\"name\":\"a\",\"credit_card\":1}"));
        assertTrue(accepts(cvv, "{\"cvv\":[1],\"name\":\"a\",\"credit_card\":1}"));
        assertTrue(accepts(cvv, "{\"name\":\"a\",\"other\":1}"));
        for (String bad : List.of(
                schema.replace("{\"required\":[\"billing_address\",\"name\"]}", "{\"properties\":{\"zip\":{\"minimum\":3}}}"))) {
            GrammarException e = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(bad, false), bad);
            assertTrue(e.getMessage().contains("dependencies"), e.getMessage());
        }
    }

    @Test
    void multipleOfIsExactForIntegersAndDecimalsWithinTheBounds() {
        String[][] cases = {{"integer", "12", "", ""}, {"integer", "7", "-30", "40"}, {"number", "0.01", "", ""},
            {"number", "0.25", "0", "100"}, {"number", "0.1", "-1.5", ""}, {"number", "2.5", "", "10"}, {"integer", "0.5", "", ""}};
        Random random = new Random(13);
        for (String[] c : cases) {
            BigDecimal step = new BigDecimal(c[1]);
            BigDecimal lo = c[2].isEmpty() ? null : new BigDecimal(c[2]);
            BigDecimal hi = c[3].isEmpty() ? null : new BigDecimal(c[3]);
            String schema = "{\"type\":\"" + c[0] + "\",\"multipleOf\":" + c[1] + (lo == null ? "" : ",\"minimum\":" + lo)
                    + (hi == null ? "" : ",\"maximum\":" + hi) + "}";
            Automaton a = automaton(JsonSchemaCompiler.compile(schema, false));
            int matched = 0;
            for (int k = 0; k < 3000; k++) {
                String v;
                int shape = random.nextInt(4);
                int whole = random.nextInt(250) - 120;
                if (shape == 0) {
                    v = Integer.toString(whole);
                } else {
                    v = (whole < 0 ? "-" : "") + Math.abs(whole) + "." + random.nextInt(1000);
                    if (shape == 3) {
                        v = v + "0";   // trailing zeros are the same value
                    }
                }
                BigDecimal x = new BigDecimal(v);
                boolean expected = x.remainder(step).signum() == 0 && (lo == null || x.compareTo(lo) >= 0)
                        && (hi == null || x.compareTo(hi) <= 0) && (c[0].equals("number") || shape == 0);
                if (v.startsWith("-0")) {
                    continue;   // -0 and -0.x: the range grammar's own rules, tested elsewhere
                }
                matched += expected ? 1 : 0;
                assertEquals(expected, accepts(a, v), schema + " on " + v);
            }
            assertTrue(matched > 20, schema + ": " + matched + " multiples in the sample");
            assertFalse(accepts(a, "1e2"), "no exponent forms");
        }
        GrammarException e = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile(
                "{\"type\":\"integer\",\"multipleOf\":10,\"minimum\":1,\"maximum\":9}", false));
        assertTrue(e.getMessage().contains("no multiple of 10"), e.getMessage());
    }

    @Test
    void oneOfAndAnyOfOfRequiredListsDecideByThePropertiesPresent() {
        String schema = "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"},\"$ref\":{\"type\":\"string\"},"
                + "\"format\":{\"type\":\"string\"}},\"additionalProperties\":false,\"oneOf\":[{\"required\":[\"type\"]},"
                + "{\"required\":[\"$ref\"],\"description\":\"a reference\"}]}";
        Automaton one = automaton(JsonSchemaCompiler.compile(schema, false));
        assertTrue(accepts(one, "{\"type\":\"a\"}"));
        assertTrue(accepts(one, "{\"format\":\"y\",\"$ref\":\"x\"}"));
        assertFalse(accepts(one, "{\"type\":\"a\",\"$ref\":\"x\"}"), "both options hold: not exactly one");
        assertFalse(accepts(one, "{\"format\":\"y\"}"), "neither holds");
        Automaton any = automaton(JsonSchemaCompiler.compile(schema.replace("oneOf", "anyOf"), false));
        assertTrue(accepts(any, "{\"type\":\"a\",\"$ref\":\"x\"}"), "anyOf: both may hold");
        assertFalse(accepts(any, "{\"format\":\"y\"}"));
        // object options with properties of their own (additional to each other), as oneOf: exactly one holds
        Automaton win = automaton(JsonSchemaCompiler.compile("{\"type\":\"object\",\"oneOf\":[{\"type\":\"object\","
                + "\"required\":[\"id\",\"win\"],\"properties\":{\"id\":{\"type\":\"string\"},\"win\":{\"type\":\"integer\"}}},"
                + "{\"required\":[\"id\",\"lose\"],\"properties\":{\"id\":{\"type\":\"string\"}}}]}", false));
        assertTrue(accepts(win, "{\"id\":\"a\",\"win\":1}"));
        assertTrue(accepts(win, "{\"lose\":[],\"id\":\"a\"}"), "lose is any value: required, not described");
        assertFalse(accepts(win, "{\"id\":\"a\",\"win\":1,\"lose\":2}"), "both hold");
        assertFalse(accepts(win, "{\"id\":\"a\",\"win\":\"x\"}"), "win's schema");
        // a xor b, written with not: {required}; and a oneOf of object keywords only, without a type: objects only
        Automaton xor = automaton(JsonSchemaCompiler.compile("{\"properties\":{\"a\":{},\"b\":{}},\"oneOf\":["
                + "{\"required\":[\"a\"],\"not\":{\"required\":[\"b\"]}},{\"required\":[\"b\"],\"not\":{\"required\":[\"a\"]}}],"
                + "\"type\":\"object\"}", false));
        assertTrue(accepts(xor, "{\"a\":1}") && accepts(xor, "{\"b\":1}"));
        assertFalse(accepts(xor, "{\"a\":1,\"b\":2}") || accepts(xor, "{}"));
        Automaton untyped = automaton(JsonSchemaCompiler.compile("{\"oneOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}]}",
                false));
        assertTrue(accepts(untyped, "{\"a\":1}"));
        assertFalse(accepts(untyped, "1"), "a number holds both options: not exactly one");
        assertFalse(accepts(untyped, "{\"a\":1,\"b\":1}"));
        // options whose shared property disagrees: the general path, which refuses an overlapping oneOf
        GrammarException e = assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile("{\"type\":\"object\","
                + "\"oneOf\":[{\"required\":[\"a\"],\"properties\":{\"a\":{\"type\":\"string\"}}},{\"required\":[\"b\"],"
                + "\"properties\":{\"a\":{\"type\":\"integer\"}}}]}", false));
        assertTrue(e.getMessage().contains("exclusivity"), e.getMessage());
    }

    @Test
    void notTakesAwayTypesPatternsAndStringValues() {
        Automaton notString = automaton(JsonSchemaCompiler.compile("{\"not\":{\"type\":\"string\"}}", false));
        assertTrue(accepts(notString, "1") && accepts(notString, "null") && accepts(notString, "[\"a\"]"));
        assertFalse(accepts(notString, "\"a\""));
        Automaton noNull = automaton(JsonSchemaCompiler.compile("{\"type\":[\"integer\",\"null\"],\"not\":{\"type\":\"null\"}}", false));
        assertTrue(accepts(noNull, "3"));
        assertFalse(accepts(noNull, "null"));
        // strings in which [^a-z ] finds no match, 2 to 5 characters (a pattern that names what must not appear)
        Automaton letters = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"minLength\":2,\"maxLength\":5,"
                + "\"not\":{\"pattern\":\"[^a-z ]\"}}", false));
        assertTrue(accepts(letters, "\"ab c\""));
        assertFalse(accepts(letters, "\"ab1\""), "a character the pattern finds");
        assertFalse(accepts(letters, "\"abcdef\""), "maxLength");
        assertFalse(accepts(letters, "\"a\""), "minLength");
        Automaton notEnum = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"not\":{\"enum\":[\"logs\",\"tmp\"]}}", false));
        assertTrue(accepts(notEnum, "\"log\"") && accepts(notEnum, "\"logs2\"") && accepts(notEnum, "\"\""));
        assertFalse(accepts(notEnum, "\"logs\"") || accepts(notEnum, "\"tmp\""));
        assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile("{\"not\":{}}", false), "not {}: nothing");
    }

    @Test
    void allOfOfTwoEnumsIsTheirIntersection() {
        Automaton a = automaton(JsonSchemaCompiler.compile("{\"allOf\":[{\"enum\":[\"a\",\"b\",1]},{\"enum\":[\"b\",1,\"c\"]}]}",
                false));
        assertTrue(accepts(a, "\"b\"") && accepts(a, "1"));
        assertFalse(accepts(a, "\"a\"") || accepts(a, "\"c\""));
        assertThrows(GrammarException.class, () -> JsonSchemaCompiler.compile("{\"allOf\":[{\"enum\":[\"a\"]},{\"enum\":[\"b\"]}]}",
                false), "no value is in both");
    }

    @Test
    void anchorsInsideGroupsAndBranchesAreAssertionsAsJavasRegexFindsThem() {
        String[] patterns = {"^$|(^(?:a+b)+$)", "(^[0-9]+\\.[0-9]+$)", "^([^,]|$)", "a(b$|c)", "(x|^y)z", "^a$|b"};
        String alphabet = "ab,xyz09.";
        Random random = new Random(17);
        for (String p : patterns) {
            Automaton a = automaton(JsonSchemaCompiler.compile("{\"type\":\"string\",\"pattern\":\"" + p.replace("\\", "\\\\")
                    + "\"}", false));
            Pattern reference = Pattern.compile(p);
            List<String> samples = new java.util.ArrayList<>(List.of("", "ab", "aabab", "1.5", "12.", ",", "a,", "abz",
                    "acz", "yz", "xz", "ayz", "a", "ba", "b"));
            for (int k = 0; k < 1500; k++) {
                samples.add(randomString(random, alphabet, 5));
            }
            for (String v : samples) {
                assertEquals(reference.matcher(v).find(), accepts(a, "\"" + v + "\""), p + " on '" + v + "'");
            }
        }
    }
}
