package io.nereid.engine.structured;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Regular expressions (the ECMA-262 subset JSON Schema's {@code pattern} and vLLM's
 * {@code guided_regex} use) into byte grammars: literals, {@code .}, classes with ranges and
 * negation, {@code \d \w \s} and their negations, escapes ({@code \n}, {@code \xHH}, backslash-u
 * with four hex digits or braces), groups (capturing, {@code (?:)}, named), alternation, the
 * quantifiers {@code * + ? {n} {n,} {n,m}} (lazy ones match the same strings), and {@code ^} /
 * {@code $} at the ends of the pattern (anywhere through {@link #searchWithAnchors}, for {@link CharAutomaton}). Lookaround, backreferences, word boundaries and Unicode
 * property classes are refused with a {@link GrammarException} naming them: they are not regular
 * or not supported, and a constraint must never be approximated.
 *
 * <p>Each character class goes through an encoder: raw UTF-8 for a whole output, or JSON-string
 * escaping for a {@code pattern} inside a JSON string. Stateless per call.
 */
final class RegexCompiler {

    /** Whitespace as ECMA-262 {@code \s} defines it. */
    static final CharSet SPACE = CharSet.ofChars("\t\n\u000B\f\r \u00A0\u1680\u2028\u2029\u202F\u205F\u3000\uFEFF")
            .union(CharSet.of(0x2000, 0x200A));
    static final CharSet DIGIT = CharSet.of('0', '9');
    static final CharSet WORD = CharSet.of('a', 'z').union(CharSet.of('A', 'Z')).union(DIGIT).union(CharSet.of('_'));
    static final CharSet DOT = CharSet.ofChars("\n\r\u2028\u2029").complement();
    private static final int MAX_REPEAT = 100_000;

    private final String p;
    private final Function<CharSet, Expr> encode;
    private final Expr startAnchor;   // non-null: ^ and $ anywhere become these markers (a character automaton)
    private final Expr endAnchor;
    private int i;

    private RegexCompiler(String pattern, Function<CharSet, Expr> encode) {
        this(pattern, encode, null, null);
    }

    private RegexCompiler(String pattern, Function<CharSet, Expr> encode, Expr startAnchor, Expr endAnchor) {
        this.p = pattern;
        this.encode = encode;
        this.startAnchor = startAnchor;
        this.endAnchor = endAnchor;
    }

    /**
     * JSON Schema's search with {@code ^} and {@code $} allowed anywhere, each given back as its marker
     * (a zero-width assertion the caller's automaton enforces), the whole wrapped in "any characters"
     * on both sides; for {@link CharAutomaton}, which can.
     */
    static Expr searchWithAnchors(String pattern, Function<CharSet, Expr> encode, Expr startAnchor, Expr endAnchor) {
        RegexCompiler c = new RegexCompiler(pattern, encode, startAnchor, endAnchor);
        Expr body = c.alternation();
        if (c.i < pattern.length()) {
            throw c.error("unbalanced ')'");
        }
        Expr any = Expr.star(c.chars(CharSet.ALL));
        return Expr.seq(any, body, any);
    }

    /** The strings that match {@code pattern} in full (vLLM's guided_regex), as UTF-8. */
    static Expr fullMatch(String pattern) {
        return compile(pattern, true, CharSet::utf8);
    }

    /**
     * The strings {@code pattern} finds a match in (JSON Schema's unanchored search; {@code ^} and
     * {@code $} anchor it), each character encoded by {@code encode}.
     */
    static Expr search(String pattern, Function<CharSet, Expr> encode) {
        return compile(pattern, false, encode);
    }

    private static Expr compile(String pattern, boolean full, Function<CharSet, Expr> encode) {
        RegexCompiler c = new RegexCompiler(pattern, encode);
        List<Expr> branches = new ArrayList<>();
        do {
            boolean start = c.eat('^') || full;
            List<Expr> items = c.sequence(true);
            boolean end = full;
            if (!items.isEmpty() && items.get(items.size() - 1) == END_ANCHOR) {
                items.remove(items.size() - 1);
                end = true;
            }
            Expr any = Expr.star(c.chars(CharSet.ALL));
            List<Expr> all = new ArrayList<>();
            if (!start) {
                all.add(any);
            }
            all.addAll(items);
            if (!end) {
                all.add(any);
            }
            branches.add(Expr.seq(all));
        } while (c.eat('|'));
        if (c.i < pattern.length()) {
            throw c.error("unbalanced ')'");
        }
        return Expr.alt(branches);
    }

    /** A marker for {@code $} at the end of a top-level branch (compared by identity). */
    private static final Expr END_ANCHOR = new Expr.Repeat(Expr.EMPTY, 0, 0);

    private List<Expr> sequence(boolean top) {
        List<Expr> items = new ArrayList<>();
        while (i < p.length() && p.charAt(i) != '|' && p.charAt(i) != ')') {
            char c = p.charAt(i);
            if (startAnchor != null && (c == '$' || c == '^')) {
                i++;
                items.add(c == '^' ? startAnchor : endAnchor);
                continue;
            }
            if (c == '$') {
                i++;
                if (top && (i == p.length() || p.charAt(i) == '|')) {
                    items.add(END_ANCHOR);
                    return items;
                }
                throw new InnerAnchor(error("'$' is supported only at the end of the pattern").getMessage());
            }
            if (c == '^') {
                throw new InnerAnchor(error("'^' is supported only at the start of the pattern").getMessage());
            }
            Expr atom = atom();
            items.add(quantified(atom));
        }
        return items;
    }

    private Expr alternation() {
        List<Expr> options = new ArrayList<>();
        do {
            options.add(Expr.seq(sequence(false)));
        } while (eat('|'));
        return Expr.alt(options);
    }

    private Expr atom() {
        char c = p.charAt(i++);
        switch (c) {
            case '(' -> {
                if (eat('?')) {
                    if (eat(':')) {
                        // non-capturing
                    } else if (p.startsWith("<", i) && !p.startsWith("<=", i) && !p.startsWith("<!", i)) {
                        skipName('>');
                    } else if (p.startsWith("P<", i)) {
                        i++;
                        skipName('>');
                    } else {
                        throw error("lookaround and inline flags '(?" + (i < p.length() ? p.charAt(i) : "") + "' are not supported");
                    }
                }
                Expr inner = alternation();
                if (!eat(')')) {
                    throw error("missing ')'");
                }
                return inner;
            }
            case '[' -> {
                return chars(charClass());
            }
            case '.' -> {
                return chars(DOT);
            }
            case '\\' -> {
                return chars(escape(false));
            }
            case '*', '+', '?' -> throw error("nothing to repeat before '" + c + "'");
            case '{' -> {
                if (looksLikeBounds()) {
                    throw error("nothing to repeat before '{'");
                }
                return chars(CharSet.of('{'));
            }
            default -> {
                i--;
                int cp = p.codePointAt(i);
                i += Character.charCount(cp);
                return chars(CharSet.of(cp));
            }
        }
    }

    private void skipName(char close) {
        int e = p.indexOf(close, i);
        if (e < 0) {
            throw error("unterminated group name");
        }
        i = e + 1;
    }

    private Expr chars(CharSet s) {
        Expr e = s.isEmpty() ? null : encode.apply(s);
        if (e == null) {
            throw error("a character class that matches nothing");
        }
        return e;
    }

    private Expr quantified(Expr atom) {
        int min, max;
        if (eat('*')) {
            min = 0;
            max = -1;
        } else if (eat('+')) {
            min = 1;
            max = -1;
        } else if (eat('?')) {
            min = 0;
            max = 1;
        } else if (i < p.length() && p.charAt(i) == '{' && looksLikeBounds()) {
            i++;
            min = number();
            max = min;
            if (eat(',')) {
                max = i < p.length() && p.charAt(i) == '}' ? -1 : number();
            }
            if (!eat('}')) {
                throw error("malformed {n,m}");
            }
            if (max >= 0 && max < min) {
                throw error("{" + min + "," + max + "} has its bounds the wrong way round");
            }
        } else {
            return atom;
        }
        if (min > MAX_REPEAT || max > MAX_REPEAT) {
            throw error("a repetition bound over " + MAX_REPEAT);
        }
        if (eat('+')) {
            throw error("possessive quantifiers are not supported");
        }
        eat('?');   // lazy: the same strings
        return new Expr.Repeat(atom, min, max);
    }

    private boolean looksLikeBounds() {
        int j = i + 1;
        int digits = 0;
        while (j < p.length() && Character.isDigit(p.charAt(j))) {
            j++;
            digits++;
        }
        if (digits == 0) {
            return false;
        }
        if (j < p.length() && p.charAt(j) == ',') {
            j++;
            while (j < p.length() && Character.isDigit(p.charAt(j))) {
                j++;
            }
        }
        return j < p.length() && p.charAt(j) == '}';
    }

    private int number() {
        int start = i;
        while (i < p.length() && Character.isDigit(p.charAt(i))) {
            i++;
        }
        if (start == i) {
            throw error("expected a number");
        }
        String digits = p.substring(start, i);
        return digits.length() > 7 ? Integer.MAX_VALUE : Integer.parseInt(digits);
    }

    private CharSet charClass() {
        boolean negated = eat('^');
        CharSet s = CharSet.NONE;
        while (true) {
            if (i >= p.length()) {
                throw error("missing ']'");
            }
            char c = p.charAt(i);
            if (c == ']') {
                i++;
                break;
            }
            CharSet lo = classAtom();
            if (i + 1 < p.length() && p.charAt(i) == '-' && p.charAt(i + 1) != ']') {
                i++;
                CharSet hi = classAtom();
                if (lo.ranges.length != 2 || lo.ranges[0] != lo.ranges[1] || hi.ranges.length != 2
                        || hi.ranges[0] != hi.ranges[1]) {
                    throw error("a class escape cannot bound a range");
                }
                if (hi.ranges[0] < lo.ranges[0]) {
                    throw error("range out of order in character class");
                }
                s = s.union(CharSet.of(lo.ranges[0], hi.ranges[0]));
            } else {
                s = s.union(lo);
            }
        }
        return negated ? s.complement() : s;
    }

    private CharSet classAtom() {
        char c = p.charAt(i++);
        if (c == '\\') {
            return escape(true);
        }
        if (c == '[' && i < p.length() && p.charAt(i) == ':') {
            throw error("POSIX classes like [:alpha:] are not supported");
        }
        i--;
        int cp = p.codePointAt(i);
        i += Character.charCount(cp);
        return CharSet.of(cp);
    }

    private CharSet escape(boolean inClass) {
        if (i >= p.length()) {
            throw error("a trailing backslash");
        }
        char c = p.charAt(i++);
        return switch (c) {
            case 'd' -> DIGIT;
            case 'D' -> DIGIT.complement();
            case 'w' -> WORD;
            case 'W' -> WORD.complement();
            case 's' -> SPACE;
            case 'S' -> SPACE.complement();
            case 'n' -> CharSet.of('\n');
            case 'r' -> CharSet.of('\r');
            case 't' -> CharSet.of('\t');
            case 'f' -> CharSet.of('\f');
            case 'v' -> CharSet.of(0x0B);
            case '0' -> CharSet.of(0);
            case 'b' -> {
                if (inClass) {
                    yield CharSet.of(8);
                }
                throw error("word boundaries (\\b) are not supported");
            }
            case 'B' -> throw error("word boundaries (\\B) are not supported");
            case 'x' -> CharSet.of(hex(2));
            case 'u' -> {
                if (eat('{')) {
                    int e = p.indexOf('}', i);
                    if (e < 0) {
                        throw error("malformed \\u{...}");
                    }
                    int cp = parseHex(p.substring(i, e));
                    i = e + 1;
                    yield CharSet.of(cp);
                }
                yield CharSet.of(hex(4));
            }
            case 'p', 'P' -> throw error("Unicode property classes (\\" + c + ") are not supported");
            case 'c' -> {
                if (i < p.length() && Character.isLetter(p.charAt(i))) {
                    yield CharSet.of(p.charAt(i++) % 32);
                }
                yield CharSet.of('c');
            }
            default -> {
                if (c >= '1' && c <= '9') {
                    throw error("backreferences are not supported");
                }
                i--;
                int cp = p.codePointAt(i);
                i += Character.charCount(cp);
                yield CharSet.of(cp);
            }
        };
    }

    private int hex(int digits) {
        if (i + digits > p.length()) {
            throw error("malformed hex escape");
        }
        int v = parseHex(p.substring(i, i + digits));
        i += digits;
        return v;
    }

    private int parseHex(String s) {
        try {
            int v = Integer.parseInt(s, 16);
            if (v > CharSet.MAX || s.isEmpty()) {
                throw error("hex escape out of range");
            }
            return v;
        } catch (NumberFormatException e) {
            throw error("malformed hex escape '" + s + "'");
        }
    }

    private boolean eat(char c) {
        if (i < p.length() && p.charAt(i) == c) {
            i++;
            return true;
        }
        return false;
    }

    /** A {@code ^} or {@code $} inside the pattern: the byte compiler cannot take it, {@link CharAutomaton} can. */
    static final class InnerAnchor extends GrammarException {
        InnerAnchor(String message) {
            super(message);
        }
    }

    private GrammarException error(String what) {
        return new GrammarException("regex " + Constraints.quoteShort(p) + " at offset " + i + ": " + what);
    }
}
