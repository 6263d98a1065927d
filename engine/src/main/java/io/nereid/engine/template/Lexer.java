package io.nereid.engine.template;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * Turns template source into {@link Token}s exactly as Jinja2's lexer does with the settings HF
 * transformers uses: {@code trim_blocks=True}, {@code lstrip_blocks=True},
 * {@code keep_trailing_newline=False}.
 *
 * <ul>
 *   <li>Newlines ({@code \r\n}, {@code \r}) are normalized to {@code \n}, then one trailing newline
 *       of the source is dropped.</li>
 *   <li>{@code {%-}, {@code {{-}, {@code {#-} strip all whitespace before the tag;
 *       {@code -%}}, {@code -}}}, {@code -#}} all whitespace after it.</li>
 *   <li>trim_blocks: one newline right after {@code %}} or {@code #}} is dropped (not after
 *       {@code }}}, not after {@code {% raw %}}); {@code +%}} keeps it.</li>
 *   <li>lstrip_blocks: spaces/tabs between the start of a line and a {@code {%} or {@code {#} are
 *       dropped (never before {@code {{}); {@code {%+} keeps them. "Start of a line" includes the
 *       start of the template and the point right after a tag whose match ended in a newline.</li>
 *   <li>{@code {% raw %}...{% endraw %}} yields its body as data.</li>
 * </ul>
 *
 * Comments vanish. Not thread-safe; one instance lexes one source.
 */
final class Lexer {

    private static final String[] OPERATORS = {
        "**", "//", "==", "!=", ">=", "<=",
        "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"};

    private final String src;
    private final String name;
    private final int[] newlines; // positions of '\n' in src, ascending
    private final List<Token> tokens = new ArrayList<>();
    private int pos;
    /** Whether the previous match ended with a newline (Jinja2's {@code line_starting}). */
    private boolean lineStarting = true;

    private Lexer(String source, String name) {
        this.src = normalize(source);
        this.name = name;
        this.newlines = indexNewlines(src);
    }

    static List<Token> tokenize(String source, String name) {
        Lexer lexer = new Lexer(source, name);
        lexer.root();
        lexer.tokens.add(new Token(Token.Kind.EOF, "", null, lexer.lineAt(lexer.src.length())));
        return lexer.tokens;
    }

    /** Newline normalization plus Jinja2's removal of a single trailing newline. */
    static String normalize(String source) {
        String s = source.indexOf('\r') < 0 ? source : source.replace("\r\n", "\n").replace('\r', '\n');
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }

    private static int[] indexNewlines(String s) {
        int[] out = new int[16];
        int n = 0;
        for (int i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) {
            if (n == out.length) {
                out = Arrays.copyOf(out, n * 2);
            }
            out[n++] = i;
        }
        return Arrays.copyOf(out, n);
    }

    int lineAt(int offset) {
        int i = Arrays.binarySearch(newlines, offset);
        return (i >= 0 ? i : -i - 1) + 1;
    }

    private TemplateSyntaxException error(int offset, String reason) {
        return new TemplateSyntaxException(name, lineAt(offset), reason);
    }

    // ---------------------------------------------------------------- root state

    private void root() {
        int len = src.length();
        while (pos < len) {
            int tag = nextTagStart(pos);
            if (tag < 0) {
                emit(Token.Kind.DATA, src.substring(pos), pos);
                pos = len;
                return;
            }
            String text = src.substring(pos, tag);
            int textStart = pos;
            char kind = src.charAt(tag + 1);
            int after = tag + 2;
            char sign = after < len && (src.charAt(after) == '-' || src.charAt(after) == '+') ? src.charAt(after) : 0;
            int rawBodyStart = kind == '%' ? rawBegin(tag) : -1;
            text = stripBefore(text, sign, kind != '{');
            if (!text.isEmpty()) {
                emit(Token.Kind.DATA, text, textStart);
            }
            if (rawBodyStart >= 0) {
                raw(tag, rawBodyStart);
                continue;
            }
            pos = sign != 0 ? after + 1 : after;
            lineStarting = false;
            switch (kind) {
                case '{' -> {
                    emit(Token.Kind.VARIABLE_BEGIN, "{{", tag);
                    tag(Token.Kind.VARIABLE_END, tag);
                }
                case '%' -> {
                    emit(Token.Kind.BLOCK_BEGIN, "{%", tag);
                    tag(Token.Kind.BLOCK_END, tag);
                }
                default -> comment(tag);
            }
        }
    }

    /** Earliest {@code {{}, {@code {%} or {@code {#} at or after {@code from}; -1 if none. */
    private int nextTagStart(int from) {
        for (int i = src.indexOf('{', from); i >= 0 && i + 1 < src.length(); i = src.indexOf('{', i + 1)) {
            char c = src.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') {
                return i;
            }
        }
        return -1;
    }

    /** Whitespace control on the data before a tag: {@code -} strips, lstrip_blocks trims indentation. */
    private String stripBefore(String text, char sign, boolean blockOrComment) {
        if (sign == '-') {
            return PyStrings.rstrip(text, null);
        }
        if (sign != '+' && blockOrComment) {
            int lineStart = text.lastIndexOf('\n') + 1;
            if ((lineStart > 0 || lineStarting) && lineStart < text.length() && isAllSpace(text, lineStart)) {
                return text.substring(0, lineStart);
            }
        }
        return text;
    }

    private static boolean isAllSpace(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            if (!PyStrings.isSpace(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private int skipSpace(int i) {
        while (i < src.length() && PyStrings.isSpace(src.charAt(i))) {
            i++;
        }
        return i;
    }

    private void emit(Token.Kind kind, String text, int offset) {
        tokens.add(new Token(kind, text, null, lineAt(offset)));
    }

    // ---------------------------------------------------------------- raw

    /** If a {@code {% raw %}} tag starts at {@code tag}, the offset right after it; else -1. */
    private int rawBegin(int tag) {
        int i = tag + 2;
        if (i < src.length() && (src.charAt(i) == '-' || src.charAt(i) == '+')) {
            i++;
        }
        i = skipSpace(i);
        if (!src.startsWith("raw", i)) {
            return -1;
        }
        i = skipSpace(i + 3);
        if (src.startsWith("-%}", i)) {
            return skipSpace(i + 3);
        }
        return src.startsWith("%}", i) ? i + 2 : -1;
    }

    private void raw(int tag, int bodyStart) {
        lineStarting = src.charAt(bodyStart - 1) == '\n';
        for (int i = src.indexOf("{%", bodyStart); i >= 0; i = src.indexOf("{%", i + 1)) {
            int j = i + 2;
            char sign = j < src.length() && (src.charAt(j) == '-' || src.charAt(j) == '+') ? src.charAt(j) : 0;
            j = skipSpace(sign != 0 ? j + 1 : j);
            if (!src.startsWith("endraw", j)) {
                continue;
            }
            j = skipSpace(j + 6);
            int end = blockEnd(j);
            if (end < 0) {
                continue;
            }
            String body = stripBefore(src.substring(bodyStart, i), sign, true);
            if (!body.isEmpty()) {
                emit(Token.Kind.DATA, body, bodyStart);
            }
            pos = end;
            lineStarting = src.charAt(end - 1) == '\n';
            return;
        }
        throw error(tag, "Missing end of raw directive");
    }

    /** If a block end ({@code +%}}, {@code -%}}+whitespace, {@code %}}+optional newline) starts at i, its end. */
    private int blockEnd(int i) {
        if (src.startsWith("+%}", i)) {
            return i + 3;
        }
        if (src.startsWith("-%}", i)) {
            return skipSpace(i + 3);
        }
        if (src.startsWith("%}", i)) {
            return i + 2 < src.length() && src.charAt(i + 2) == '\n' ? i + 3 : i + 2;
        }
        return -1;
    }

    // ---------------------------------------------------------------- comment

    private void comment(int tag) {
        int close = src.indexOf("#}", pos);
        if (close < 0) {
            throw error(tag, "Missing end of comment tag");
        }
        int end;
        char before = close - 1 >= pos ? src.charAt(close - 1) : 0;
        if (before == '-') {
            end = skipSpace(close + 2);
        } else if (before == '+') {
            end = close + 2;
        } else {
            end = close + 2 < src.length() && src.charAt(close + 2) == '\n' ? close + 3 : close + 2;
        }
        pos = end;
        lineStarting = src.charAt(end - 1) == '\n';
    }

    // ---------------------------------------------------------------- inside {{ }} and {% %}

    private void tag(Token.Kind endKind, int tagStart) {
        Deque<Character> balance = new ArrayDeque<>();
        int len = src.length();
        while (true) {
            if (pos >= len) {
                throw error(tagStart, "unexpected end of template, expected '"
                        + (endKind == Token.Kind.BLOCK_END ? "%}" : "}}") + "' to close the tag opened here");
            }
            if (balance.isEmpty()) {
                int end = endKind == Token.Kind.BLOCK_END ? blockEnd(pos) : variableEnd(pos);
                if (end >= 0) {
                    emit(endKind, src.substring(pos, end), pos);
                    pos = end;
                    lineStarting = src.charAt(end - 1) == '\n';
                    return;
                }
            }
            char c = src.charAt(pos);
            if (PyStrings.isSpace(c)) {
                pos = skipSpace(pos);
            } else if (c >= '0' && c <= '9') {
                number();
            } else if (c == '\'' || c == '"') {
                string();
            } else if (c == '_' || Character.isUnicodeIdentifierStart(src.codePointAt(pos))) {
                name();
            } else {
                operator(balance);
            }
        }
    }

    private int variableEnd(int i) {
        if (src.startsWith("-}}", i)) {
            return skipSpace(i + 3);
        }
        return src.startsWith("}}", i) ? i + 2 : -1;
    }

    private void name() {
        int start = pos;
        pos += Character.charCount(src.codePointAt(pos));
        while (pos < src.length()) {
            int cp = src.codePointAt(pos);
            if (cp != '_' && !Character.isUnicodeIdentifierPart(cp) || Character.isIdentifierIgnorable(cp)) {
                break;
            }
            pos += Character.charCount(cp);
        }
        emit(Token.Kind.NAME, src.substring(start, pos), start);
    }

    private void operator(Deque<Character> balance) {
        for (String op : OPERATORS) {
            if (src.startsWith(op, pos)) {
                char c = op.charAt(0);
                if (op.length() == 1 && (c == '(' || c == '[' || c == '{')) {
                    balance.push(c == '(' ? ')' : c == '[' ? ']' : '}');
                } else if (op.length() == 1 && (c == ')' || c == ']' || c == '}')) {
                    if (balance.isEmpty()) {
                        throw error(pos, "unexpected '" + c + "'");
                    }
                    char expected = balance.pop();
                    if (expected != c) {
                        throw error(pos, "unexpected '" + c + "', expected '" + expected + "'");
                    }
                }
                emit(Token.Kind.OPERATOR, op, pos);
                pos += op.length();
                return;
            }
        }
        throw error(pos, "unexpected char '" + new String(Character.toChars(src.codePointAt(pos))) + "' at " + pos);
    }

    // ---------------------------------------------------------------- literals

    private void number() {
        int start = pos;
        int end = digits(pos);
        boolean isFloat = false;
        boolean afterDot = start > 0 && src.charAt(start - 1) == '.';
        if (!afterDot && end < src.length() && src.charAt(end) == '.' && end + 1 < src.length()
                && isDigit(src.charAt(end + 1))) {
            end = digits(end + 1);
            isFloat = true;
        }
        if (!afterDot && end < src.length() && (src.charAt(end) == 'e' || src.charAt(end) == 'E')) {
            int e = end + 1;
            if (e < src.length() && (src.charAt(e) == '+' || src.charAt(e) == '-')) {
                e++;
            }
            if (e < src.length() && isDigit(src.charAt(e))) {
                end = digits(e);
                isFloat = true;
            }
        }
        if (isFloat) {
            String text = src.substring(start, end);
            tokens.add(new Token(Token.Kind.FLOAT, text, Double.parseDouble(text.replace("_", "")), lineAt(start)));
            pos = end;
            return;
        }
        integer(start);
    }

    private void integer(int start) {
        int radix = 10;
        int digitsStart = start;
        if (src.charAt(start) == '0' && start + 1 < src.length()) {
            char p = Character.toLowerCase(src.charAt(start + 1));
            radix = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 10;
            if (radix != 10) {
                digitsStart = start + 2;
            }
        }
        int end = digitsStart;
        while (end < src.length() && (src.charAt(end) == '_' || src.charAt(end) < 128
                && Character.digit(src.charAt(end), radix) >= 0)) {
            end++;
        }
        if (radix != 10 && end == digitsStart) { // "0x" with no digits: just the integer 0
            radix = 10;
            end = start + 1;
            digitsStart = start;
        }
        String text = src.substring(start, end);
        try {
            long value = Long.parseLong(src.substring(digitsStart, end).replace("_", ""), radix);
            tokens.add(new Token(Token.Kind.INTEGER, text, value, lineAt(start)));
        } catch (NumberFormatException e) {
            throw error(start, "integer literal out of the 64-bit range: " + text);
        }
        pos = end;
    }

    private int digits(int i) {
        while (i < src.length() && (isDigit(src.charAt(i)) || src.charAt(i) == '_' && i + 1 < src.length()
                && isDigit(src.charAt(i + 1)))) {
            i++;
        }
        return i;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private void string() {
        char quote = src.charAt(pos);
        int start = pos;
        int i = pos + 1;
        while (i < src.length() && src.charAt(i) != quote) {
            i += src.charAt(i) == '\\' ? 2 : 1;
        }
        if (i >= src.length()) {
            throw error(start, "unterminated string literal");
        }
        String body = src.substring(start + 1, i);
        tokens.add(new Token(Token.Kind.STRING, src.substring(start, i + 1), unescape(body, start), lineAt(start)));
        pos = i + 1;
    }

    /** Python's {@code unicode-escape} decoding, which Jinja2 applies to string literals. */
    private String unescape(String s, int offset) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) {
                out.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case '\n' -> { } // line continuation
                case '\\' -> out.append('\\');
                case '\'' -> out.append('\'');
                case '"' -> out.append('"');
                case 'a' -> out.append('\u0007');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'v' -> out.append('\u000b');
                case 'x' -> i = hexEscape(s, i, 2, out, offset);
                case 'u' -> i = hexEscape(s, i, 4, out, offset);
                case 'U' -> i = hexEscape(s, i, 8, out, offset);
                case 'N' -> i = namedEscape(s, i, out, offset);
                default -> {
                    if (e >= '0' && e <= '7') {
                        int end = i;
                        while (end < s.length() && end < i + 3 && s.charAt(end) >= '0' && s.charAt(end) <= '7') {
                            end++;
                        }
                        out.appendCodePoint(Integer.parseInt(s.substring(i, end), 8));
                        i = end - 1;
                    } else {
                        out.append('\\').append(e); // unknown escapes stay as written
                    }
                }
            }
        }
        return out.toString();
    }

    private int hexEscape(String s, int i, int n, StringBuilder out, int offset) {
        if (i + n >= s.length()) {
            throw error(offset, "truncated \\" + s.charAt(i) + " escape in string literal");
        }
        String hex = s.substring(i + 1, i + 1 + n);
        int cp;
        try {
            cp = Integer.parseUnsignedInt(hex, 16);
        } catch (NumberFormatException ex) {
            throw error(offset, "truncated \\" + s.charAt(i) + " escape in string literal");
        }
        if (hex.charAt(0) == '+' || !Character.isValidCodePoint(cp)) {
            throw error(offset, "illegal Unicode character in \\" + s.charAt(i) + " escape");
        }
        out.appendCodePoint(cp);
        return i + n;
    }

    private int namedEscape(String s, int i, StringBuilder out, int offset) {
        int close = s.indexOf('}', i);
        if (i + 1 >= s.length() || s.charAt(i + 1) != '{' || close < 0) {
            throw error(offset, "malformed \\N character escape in string literal");
        }
        try {
            out.appendCodePoint(Character.codePointOf(s.substring(i + 2, close)));
        } catch (IllegalArgumentException ex) {
            throw error(offset, "unknown Unicode character name in \\N escape");
        }
        return close;
    }
}
