package io.nereid.engine.structured;

import io.nereid.engine.api.Constraint;
import io.nereid.engine.api.ToolCallFormat;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The grammar of tool calls in a model's syntax ({@link ToolCallFormat}): the format's block
 * opening, each call as its opening, {@code {"name": "NAME", "arguments": ARGS}} with ARGS the JSON
 * its function's parameter schema accepts (free whitespace inside) and its closing, calls apart by
 * the separator, the block's closing. The format's markers ({@code [TOOL_CALLS]}, {@code
 * <tool_call>}) are the vocabulary's special tokens where it has them ({@link Grammar.Builder#token}).
 * Required: the output is the calls and nothing else. Auto: any text that does not contain the
 * format's opening, then optionally the calls (for bare-JSON formats the calls come first or not at
 * all); with an answer constraint ({@code response_format} sent with tools), the calls or that answer.
 * Stateless.
 */
final class ToolCallGrammar {

    private ToolCallGrammar() {
    }

    /** The calls as an expression of {@code b}. */
    static Expr into(Grammar.Builder b, Constraint.ToolCalls c) {
        if (c.tools().isEmpty()) {
            throw new GrammarException("tools must name at least one function");
        }
        ToolCallFormat f = c.format();
        List<Expr> calls = new ArrayList<>();
        for (Constraint.Tool t : c.tools()) {
            if (c.forced() != null && !c.forced().equals(t.name())) {
                continue;
            }
            Object schema = JsonSchemaCompiler.parse(t.parameters(), "the parameters of function '" + t.name() + "'");
            Expr args = JsonSchemaCompiler.into(b, schema, true, "function " + t.name());
            calls.add(Expr.seq(text(b, f, f.callOpen() + f.head(t.name())), args, text(b, f, "}" + f.callClose())));
        }
        if (calls.isEmpty()) {
            throw new GrammarException("tool_choice names function '" + c.forced() + "', which is not among the tools");
        }
        Expr call = new Expr.Ref(b.ruleFor("call", Expr.alt(calls)));
        Expr sequence = c.parallel() ? Expr.seq(call, Expr.star(Expr.seq(text(b, f, f.separator()), call))) : call;
        Expr block = Expr.seq(text(b, f, f.blockOpen()), sequence, text(b, f, f.blockClose()));
        if (c.required()) {
            return block;
        }
        if (c.answer() != null) {
            // response_format with tools: the calls, or the answer in its format (no text before a call)
            return Expr.alt(block, Constraints.into(b, c.answer()));
        }
        if (!f.opening().isEmpty()) {
            // the text never spells the opening, so what reads the output back cannot mistake it for a call
            return Expr.seq(avoiding(b, f.opening()), Expr.opt(block));
        }
        // bare JSON calls: they start the output, or the output is text that does not start with '{'
        Expr text = Expr.opt(Expr.seq(Expr.minus(Expr.range(0, 255), Expr.anyOf("{")), Expr.star(Expr.range(0, 255))));
        return Expr.alt(block, text);
    }

    /** {@code s} with each of the format's markers in it as {@link Grammar.Builder#token}. */
    private static Expr text(Grammar.Builder b, ToolCallFormat f, String s) {
        List<Expr> parts = new ArrayList<>();
        int from = 0;
        while (from < s.length()) {
            int at = s.length();
            String marker = null;
            for (String m : f.markers()) {
                int k = s.indexOf(m, from);
                if (k >= 0 && k < at) {
                    at = k;
                    marker = m;
                }
            }
            parts.add(Expr.literal(s.substring(from, at)));
            if (marker == null) {
                break;
            }
            parts.add(b.token(marker));
            from = at + marker.length();
        }
        return Expr.seq(parts);
    }

    /**
     * Byte strings that do not contain {@code word}: the states of its Knuth–Morris–Pratt matcher
     * as rules, each allowed to end (the text may stop anywhere).
     */
    static Expr avoiding(Grammar.Builder b, String word) {
        byte[] w = word.getBytes(StandardCharsets.UTF_8);
        int n = w.length;
        int[] fail = new int[n + 1];
        fail[0] = -1;
        for (int i = 1, k = -1; i <= n; i++) {
            while (k >= 0 && w[k] != w[i - 1]) {
                k = fail[k];
            }
            fail[i] = ++k;
        }
        int[] rules = new int[n];
        for (int j = 0; j < n; j++) {
            rules[j] = b.rule("text" + j);
        }
        for (int j = 0; j < n; j++) {
            List<Expr> options = new ArrayList<>();
            options.add(Expr.EMPTY);
            long[][] byNext = new long[n][4];
            for (int c = 0; c < Expr.SPECIAL; c++) {
                int k = j;
                while (k >= 0 && (w[k] & 0xFF) != c) {
                    k = fail[k];
                }
                int next = k + 1;   // -1 + 1 = 0 when nothing matches
                if (next < n) {
                    byNext[next][c >>> 6] |= 1L << c;
                }
            }
            for (int k = 0; k < n; k++) {
                Expr.Bytes set = new Expr.Bytes(byNext[k]);
                if (!set.isEmpty()) {
                    options.add(Expr.seq(set, new Expr.Ref(rules[k])));
                }
            }
            b.define(rules[j], Expr.alt(options));
        }
        return new Expr.Ref(rules[0]);
    }
}
