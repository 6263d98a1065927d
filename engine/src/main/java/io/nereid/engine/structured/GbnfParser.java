package io.nereid.engine.structured;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * llama.cpp's GBNF (the EBNF dialect vLLM's {@code guided_grammar} and llama-server's
 * {@code grammar} take): {@code name ::= alternatives}, string literals with escapes, character
 * classes ({@code [a-z]}, {@code [^"\\]}), {@code .} for any character, groups, {@code * + ?} and
 * {@code {m}}, {@code {m,}}, {@code {m,n}}, {@code #} comments; the start rule is {@code root}. A
 * rule may span lines; the next {@code name ::=} starts another. Characters are Unicode and match
 * as UTF-8. Errors name the line and what was expected.
 */
final class GbnfParser {

    private final String s;
    private int i;
    private final Grammar.Builder b;
    private final Map<String, Integer> rules = new HashMap<>();
    private final Map<String, Integer> usedAt = new HashMap<>();

    private GbnfParser(String text, Grammar.Builder b) {
        this.s = text;
        this.b = b;
    }

    /** The grammar's {@code root} as an expression of {@code b} (its rules added to {@code b}). */
    static Expr into(Grammar.Builder b, String text) {
        GbnfParser p = new GbnfParser(text, b);
        p.skipSpace();
        while (p.i < p.s.length()) {
            String name = p.name();
            p.skipSpace();
            if (!p.s.startsWith("::=", p.i)) {
                throw p.error("expected '::=' after rule name '" + name + "'");
            }
            p.i += 3;
            int r = p.rule(name);
            if (p.b.defined(r)) {
                throw p.error("rule '" + name + "' is defined twice");
            }
            p.b.define(r, p.alternatives(false));
            p.skipSpace();
        }
        Integer root = p.rules.get("root");
        if (root == null || !p.b.defined(root)) {
            throw new GrammarException("the grammar has no 'root' rule");
        }
        for (Map.Entry<String, Integer> e : p.rules.entrySet()) {
            if (!p.b.defined(e.getValue())) {
                throw new GrammarException("grammar rule '" + e.getKey() + "' is used (line "
                        + p.lineOf(p.usedAt.get(e.getKey())) + ") but never defined");
            }
        }
        return new Expr.Ref(root);
    }

    private int rule(String name) {
        return rules.computeIfAbsent(name, b::rule);
    }

    private Expr alternatives(boolean nested) {
        List<Expr> options = new ArrayList<>();
        options.add(sequence(nested));
        while (true) {
            skipSpace();
            if (i < s.length() && s.charAt(i) == '|') {
                i++;
                options.add(sequence(nested));
            } else {
                break;
            }
        }
        return Expr.alt(options);
    }

    private Expr sequence(boolean nested) {
        List<Expr> items = new ArrayList<>();
        while (true) {
            skipSpace();
            if (i >= s.length()) {
                break;
            }
            char c = s.charAt(i);
            if (c == '|' || c == ')') {
                break;
            }
            if (!nested && startsRule()) {
                break;
            }
            items.add(quantified(atom()));
        }
        return Expr.seq(items);
    }

    /** Whether a new rule starts here: a name followed by {@code ::=}. */
    private boolean startsRule() {
        int j = i;
        while (j < s.length() && isNameChar(s.charAt(j))) {
            j++;
        }
        if (j == i) {
            return false;
        }
        while (j < s.length() && (s.charAt(j) == ' ' || s.charAt(j) == '\t')) {
            j++;
        }
        return s.startsWith("::=", j);
    }

    private Expr atom() {
        char c = s.charAt(i);
        if (c == '"') {
            i++;
            StringBuilder lit = new StringBuilder();
            while (true) {
                if (i >= s.length()) {
                    throw error("unterminated string literal");
                }
                char d = s.charAt(i);
                if (d == '"') {
                    i++;
                    break;
                }
                lit.appendCodePoint(d == '\\' ? escape() : nextCodePoint());
            }
            return Expr.literal(lit.toString());
        }
        if (c == '[') {
            i++;
            boolean negated = i < s.length() && s.charAt(i) == '^';
            if (negated) {
                i++;
            }
            CharSet set = CharSet.NONE;
            while (true) {
                if (i >= s.length()) {
                    throw error("unterminated character class");
                }
                if (s.charAt(i) == ']') {
                    i++;
                    break;
                }
                int lo = s.charAt(i) == '\\' ? escape() : nextCodePoint();
                int hi = lo;
                if (i + 1 < s.length() && s.charAt(i) == '-' && s.charAt(i + 1) != ']') {
                    i++;
                    hi = s.charAt(i) == '\\' ? escape() : nextCodePoint();
                    if (hi < lo) {
                        throw error("character range out of order");
                    }
                }
                set = set.union(CharSet.of(lo, hi));
            }
            return chars(negated ? set.complement() : set);
        }
        if (c == '.') {
            i++;
            return chars(CharSet.ALL);
        }
        if (c == '(') {
            i++;
            Expr inner = alternatives(true);
            skipSpace();
            if (i >= s.length() || s.charAt(i) != ')') {
                throw error("expected ')'");
            }
            i++;
            return inner;
        }
        if (c == '<') {
            return token();
        }
        if (c == '!' && i + 1 < s.length() && s.charAt(i + 1) == '<') {
            throw error("negated tokens (!<...>) are not supported: a byte grammar cannot say 'any one token but this'");
        }
        if (isNameChar(c)) {
            int at = i;
            String name = name();
            usedAt.putIfAbsent(name, at);
            return new Expr.Ref(rule(name));
        }
        throw error("unexpected '" + c + "'");
    }

    /**
     * A special token, as llama.cpp's GBNF names one: {@code <[N]>} by id or {@code <text>} by its
     * text ({@code <|end|>}). Only the vocabulary's special (control) tokens: an ordinary token's
     * bytes can be spelled by other tokens too, so naming it would promise what the grammar cannot
     * hold; write a string for those.
     */
    private Expr token() {
        int at = i;
        if (s.startsWith("<[", i)) {
            int end = s.indexOf("]>", i);
            if (end < 0) {
                throw error("unterminated token id '<[...]>'");
            }
            String digits = s.substring(i + 2, end);
            if (!digits.matches("[0-9]{1,9}")) {
                throw error("a token id '<[N]>' takes a number, got '" + digits + "'");
            }
            String text = b.specialText(Integer.parseInt(digits));
            if (text == null) {
                throw error("token <[" + digits + "]> is not a special token of this model's vocabulary; only special"
                        + " tokens can be named (write ordinary text as a string)");
            }
            i = end + 2;
            return b.token(text);
        }
        int end = s.indexOf('>', i + 1);
        if (end < 0) {
            throw error("unexpected '<' (a token is written <[N]> or <text>)");
        }
        String text = s.substring(i, end + 1);
        if (!b.hasSpecial(text)) {
            i = at;
            throw error("'" + text + "' is not a special token of this model's vocabulary; write it as a string \""
                    + text + "\" to match its text");
        }
        i = end + 1;
        return b.token(text);
    }

    private Expr chars(CharSet set) {
        Expr e = set.utf8();
        if (e == null) {
            throw error("a character class that matches nothing");
        }
        return e;
    }

    private Expr quantified(Expr atom) {
        if (i >= s.length()) {
            return atom;
        }
        char c = s.charAt(i);
        if (c == '*') {
            i++;
            return Expr.star(atom);
        }
        if (c == '+') {
            i++;
            return Expr.plus(atom);
        }
        if (c == '?') {
            i++;
            return Expr.opt(atom);
        }
        if (c == '{') {
            i++;
            skipInline();
            int min = number();
            int max = min;
            skipInline();
            if (i < s.length() && s.charAt(i) == ',') {
                i++;
                skipInline();
                max = i < s.length() && Character.isDigit(s.charAt(i)) ? number() : -1;
            }
            skipInline();
            if (i >= s.length() || s.charAt(i) != '}') {
                throw error("expected '}'");
            }
            i++;
            if (max >= 0 && max < min) {
                throw error("{" + min + "," + max + "} has its bounds the wrong way round");
            }
            return new Expr.Repeat(atom, min, max);
        }
        return atom;
    }

    private int number() {
        int start = i;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        if (start == i || i - start > 6) {
            throw error("expected a repetition count up to 999999");
        }
        return Integer.parseInt(s.substring(start, i));
    }

    private int escape() {
        i++;   // the backslash
        if (i >= s.length()) {
            throw error("a trailing backslash");
        }
        char c = s.charAt(i++);
        return switch (c) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '\\', '"', '[', ']', '-', '^', '/' -> c;
            case 'x' -> hex(2);
            case 'u' -> hex(4);
            case 'U' -> hex(8);
            default -> throw error("unknown escape '\\" + c + "'");
        };
    }

    private int hex(int digits) {
        if (i + digits > s.length()) {
            throw error("a short hex escape");
        }
        try {
            int v = Integer.parseInt(s.substring(i, i + digits), 16);
            i += digits;
            if (v > CharSet.MAX) {
                throw error("code point out of range");
            }
            return v;
        } catch (NumberFormatException e) {
            throw error("a malformed hex escape");
        }
    }

    private int nextCodePoint() {
        int cp = s.codePointAt(i);
        i += Character.charCount(cp);
        return cp;
    }

    private String name() {
        int start = i;
        while (i < s.length() && isNameChar(s.charAt(i))) {
            i++;
        }
        if (start == i) {
            throw error("expected a rule name");
        }
        return s.substring(start, i);
    }

    private static boolean isNameChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_';
    }

    private void skipSpace() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '#') {
                while (i < s.length() && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (Character.isWhitespace(c)) {
                i++;
            } else {
                break;
            }
        }
    }

    private void skipInline() {
        while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
            i++;
        }
    }

    private int lineOf(int at) {
        int line = 1;
        for (int k = 0; k < at && k < s.length(); k++) {
            if (s.charAt(k) == '\n') {
                line++;
            }
        }
        return line;
    }

    private GrammarException error(String what) {
        return new GrammarException("grammar line " + lineOf(i) + ": " + what);
    }
}
