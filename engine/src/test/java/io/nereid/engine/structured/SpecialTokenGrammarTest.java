package io.nereid.engine.structured;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.Constraint;
import io.nereid.engine.api.ToolCallFormat;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.tokenizer.SpecialTokens;
import io.nereid.engine.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Special (control) tokens written by a grammar: Mistral's {@code [TOOL_CALLS]} is a control token
 * of its vocabulary, so a forced call starts with that one token and no ordinary token may spell
 * it; where the vocabulary has no such token the marker is text. The vocabulary here is Llama 2's
 * with three of its last pieces turned into Mistral's control tokens, as Mistral v0.3 has them.
 */
class SpecialTokenGrammarTest {

    private static final int TOOL_CALLS = 31_999;
    private static final int AVAILABLE_TOOLS = 31_998;
    private static final int INST = 31_997;
    private static final int END = 31_996;
    private static final Tokenizer BASE = GrammarMatcherTest.tokenizer("llama-spm");
    private static final Tokenizer MISTRAL = new WithControlTokens(BASE,
            Map.of(TOOL_CALLS, "[TOOL_CALLS]", AVAILABLE_TOOLS, "[AVAILABLE_TOOLS]", INST, "[INST]", END, "<|end|>"));
    private static final List<Constraint.Tool> TOOLS = List.of(new Constraint.Tool("get_weather",
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"],\"additionalProperties\":false}"));
    private static final int EOS = 2;

    /** A vocabulary with some ids made control tokens of the given texts. */
    record WithControlTokens(Tokenizer base, Map<Integer, String> control) implements Tokenizer {
        @Override
        public int vocabSize() {
            return base.vocabSize();
        }

        @Override
        public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
            return base.encode(text, addSpecial, parseSpecial);
        }

        @Override
        public byte[] tokenBytes(int id) {
            return control.containsKey(id) ? control.get(id).getBytes(StandardCharsets.UTF_8) : base.tokenBytes(id);
        }

        @Override
        public boolean stripsLeadingSpace() {
            return base.stripsLeadingSpace();
        }

        @Override
        public String piece(int id) {
            return control.getOrDefault(id, base.piece(id));
        }

        @Override
        public boolean isSpecial(int id) {
            return control.containsKey(id) || base.isSpecial(id);
        }

        @Override
        public SpecialTokens specialTokens() {
            return base.specialTokens();
        }
    }

    private static int ordinary(Tokenizer t, String piece) {
        for (int id = 0; id < t.vocabSize(); id++) {
            if (!t.isSpecial(id) && new String(t.tokenBytes(id), StandardCharsets.UTF_8).equals(piece)) {
                return id;
            }
        }
        throw new AssertionError("no token " + piece);
    }

    private static int count(long[] mask) {
        int n = 0;
        for (long w : mask) {
            n += Long.bitCount(w);
        }
        return n;
    }

    private static boolean has(long[] mask, int id) {
        return (mask[id >>> 6] >>> id & 1) != 0;
    }

    /** Feeds {@code text} a byte-fallback token per byte (every vocabulary can spell any text so). */
    private static void feed(TokenMatcher m, String text) {
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            m.accept(3 + (b & 0xFF));   // <0x00> is id 3 in the Llama 2 vocabulary
        }
    }

    @Test
    void aForcedMistralCallStartsWithTheControlTokenAndNoTextCanSpellIt() {
        CompiledConstraint c = new Constraints(MISTRAL).compile(
                new Constraint.ToolCalls(ToolCallFormat.MISTRAL, TOOLS, null, true, true));
        assertArrayEquals(new int[] {TOOL_CALLS}, c.specialTokens(), "the one special token the output keeps as text");
        TokenMatcher m = c.matcher(new int[] {EOS});
        long[] first = m.allowed();
        assertEquals(1, count(first), "only [TOOL_CALLS] may open the output");
        assertTrue(has(first, TOOL_CALLS));
        assertFalse(m.allows(ordinary(MISTRAL, "[")), "the marker's text is not the marker");
        m.accept(TOOL_CALLS);
        assertTrue(m.allows(ordinary(MISTRAL, "[")));
        assertFalse(m.allows(TOOL_CALLS), "one block of calls");
        feed(m, "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa");
        long[] inString = m.allowed();
        assertFalse(has(inString, TOOL_CALLS), "no special token inside a string");
        assertFalse(has(inString, AVAILABLE_TOOLS));
        assertFalse(has(inString, 3 + 0xFF), "<0xFF> is no ordinary byte: it could spell a marker");
        assertTrue(has(inString, 3 + 0xC3), "other byte-fallback tokens stay");
        feed(m, "ris\"}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}");
        assertFalse(m.accepting(), "the block is closed by ']'");
        feed(m, "]");
        assertTrue(m.accepting());
        assertTrue(m.terminated());
    }

    @Test
    void autoLetsTextComeFirstAndOnlyTheNamedSpecialTokenIsEverAllowed() {
        CompiledConstraint c = new Constraints(MISTRAL).compile(
                new Constraint.ToolCalls(ToolCallFormat.MISTRAL, TOOLS, null, false, false));
        TokenMatcher m = c.matcher(new int[] {EOS});
        long[] first = m.allowed();
        assertTrue(has(first, TOOL_CALLS));
        assertTrue(has(first, EOS), "no call at all is fine");
        assertFalse(has(first, AVAILABLE_TOOLS), "special tokens the grammar does not name are never allowed");
        assertFalse(has(first, INST));
        assertTrue(count(first) > 30_000, "text");
        feed(m, "Let me look.");
        assertTrue(m.allows(TOOL_CALLS));
        m.accept(TOOL_CALLS);
        feed(m, "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]");
        assertTrue(m.terminated(), "parallel_tool_calls false: one call");
    }

    @Test
    void withoutTheControlTokenTheMarkerIsText() {
        CompiledConstraint c = new Constraints(BASE).compile(
                new Constraint.ToolCalls(ToolCallFormat.MISTRAL, TOOLS, null, true, false));
        assertArrayEquals(new int[0], c.specialTokens());
        TokenMatcher m = c.matcher(new int[] {EOS});
        assertTrue(m.allows(ordinary(BASE, "[")));
        feed(m, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}}]");
        assertTrue(m.terminated());
    }

    @Test
    void ordinaryConstraintsNeverAllowSpecialTokens() {
        Constraints constraints = new Constraints(MISTRAL);
        for (Constraint k : List.of(new Constraint.JsonSchema("{\"type\":\"string\"}", false), new Constraint.Regex("[\\s\\S]*"),
                new Constraint.Grammar("root ::= [^x]*"))) {
            long[] mask = constraints.compile(k).matcher(new int[] {EOS}).allowed();
            assertFalse(has(mask, TOOL_CALLS), k.key());
            assertFalse(has(mask, 3 + 0xFF), k.key());
        }
    }

    @Test
    void theDetokenizerKeepsTheSpecialTokensTheConstraintWrites() {
        int p = ordinary(MISTRAL, "[");
        IncrementalDetokenizer kept = new IncrementalDetokenizer(MISTRAL, true, true, new int[] {TOOL_CALLS});
        assertEquals("[TOOL_CALLS][", kept.push(TOOL_CALLS) + kept.push(INST) + kept.push(p));
        IncrementalDetokenizer skipped = new IncrementalDetokenizer(MISTRAL, true, true);
        assertEquals("[", skipped.push(TOOL_CALLS) + skipped.push(p));
    }

    @Test
    void gbnfNamesSpecialTokensByIdOrText() {
        Constraints constraints = new Constraints(MISTRAL);
        CompiledConstraint c = constraints.compile(new Constraint.Grammar("root ::= <[31999]> \"[\" [a-z]+ \"]\" <|end|>"));
        assertArrayEquals(new int[] {END, TOOL_CALLS}, c.specialTokens());
        TokenMatcher m = c.matcher(new int[] {EOS});
        assertEquals(1, count(m.allowed()));
        m.accept(TOOL_CALLS);
        feed(m, "[ok]");
        assertTrue(m.allows(END));
        assertFalse(m.allows(ordinary(MISTRAL, "<")), "the token, not its text");
        m.accept(END);
        assertTrue(m.terminated());
        for (String[] bad : new String[][] {{"root ::= <[100]> \"x\"", "not a special token"},
            {"root ::= <think>", "write it as a string \"<think>\""}, {"root ::= !<|end|> \"x\"", "negated tokens"},
            {"root ::= <[x]>", "takes a number"}}) {
            GrammarException e = org.junit.jupiter.api.Assertions.assertThrows(GrammarException.class,
                    () -> constraints.compile(new Constraint.Grammar(bad[0])));
            assertTrue(e.getMessage().contains(bad[1]), e.getMessage());
        }
    }
}
