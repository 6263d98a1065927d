package io.nereid.engine.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Python {@code str} operations on Java strings. Python indexes strings by code point, Java by
 * UTF-16 unit; every length, index and slice here counts code points so that emoji and other
 * astral characters behave as in Python. Whitespace is Python's {@code str.isspace}. Stateless;
 * thread-safe.
 */
final class PyStrings {

    private PyStrings() {
    }

    // ---------------------------------------------------------------- characters and indices

    /** Python's {@code str.isspace} for one code point. */
    static boolean isSpace(int cp) {
        return cp == ' ' || cp >= '\t' && cp <= '\r' || cp >= 0x1c && cp <= 0x1f
                || cp > 0x7f && (cp == 0x85 || Character.isWhitespace(cp) || Character.isSpaceChar(cp));
    }

    static boolean hasSurrogates(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isSurrogate(s.charAt(i))) {
                return true;
            }
        }
        return false;
    }

    static int length(String s) {
        return s.codePointCount(0, s.length());
    }

    /** UTF-16 offset of code point index {@code cp} (0 ≤ cp ≤ length). */
    static int offset(String s, int cp) {
        return hasSurrogates(s) ? s.offsetByCodePoints(0, cp) : cp;
    }

    /** Code point index of UTF-16 offset {@code off}. */
    static int index(String s, int off) {
        return s.codePointCount(0, off);
    }

    static List<Object> characters(String s) {
        List<Object> out = new ArrayList<>(s.length());
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            int n = Character.charCount(cp);
            out.add(s.substring(i, i + n));
            i += n;
        }
        return out;
    }

    /** Code-point order (Java's {@code compareTo} orders by UTF-16 unit, which differs above U+FFFF). */
    static int compare(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    // ---------------------------------------------------------------- strip / split

    static String strip(String s, String chars) {
        return rstrip(lstrip(s, chars), chars);
    }

    static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            if (!stripped(cp, chars)) {
                break;
            }
            i += Character.charCount(cp);
        }
        return s.substring(i);
    }

    static String rstrip(String s, String chars) {
        int i = s.length();
        while (i > 0) {
            int cp = s.codePointBefore(i);
            if (!stripped(cp, chars)) {
                break;
            }
            i -= Character.charCount(cp);
        }
        return s.substring(0, i);
    }

    private static boolean stripped(int cp, String chars) {
        return chars == null ? isSpace(cp) : chars.indexOf(cp) >= 0;
    }

    /** Python {@code str.split(sep, maxsplit)}; {@code sep == null} splits on whitespace runs. */
    static List<Object> split(String s, String sep, long maxsplit) {
        List<Object> out = new ArrayList<>();
        if (maxsplit < 0) {
            maxsplit = Long.MAX_VALUE;
        }
        if (sep == null) {
            int i = 0;
            int n = s.length();
            while (true) {
                while (i < n && isSpace(s.charAt(i))) {
                    i++;
                }
                if (i >= n) {
                    return out;
                }
                if (out.size() == maxsplit) {
                    out.add(s.substring(i));
                    return out;
                }
                int j = i;
                while (j < n && !isSpace(s.charAt(j))) {
                    j++;
                }
                out.add(s.substring(i, j));
                i = j;
            }
        }
        if (sep.isEmpty()) {
            throw PyError.value("empty separator");
        }
        int start = 0;
        for (int i = s.indexOf(sep); i >= 0 && out.size() < maxsplit; i = s.indexOf(sep, start)) {
            out.add(s.substring(start, i));
            start = i + sep.length();
        }
        out.add(s.substring(start));
        return out;
    }

    /** Python {@code str.rsplit(sep, maxsplit)}. */
    static List<Object> rsplit(String s, String sep, long maxsplit) {
        List<Object> out = new ArrayList<>();
        if (maxsplit < 0) {
            maxsplit = Long.MAX_VALUE;
        }
        if (sep == null) {
            int j = s.length();
            while (true) {
                while (j > 0 && isSpace(s.charAt(j - 1))) {
                    j--;
                }
                if (j <= 0) {
                    break;
                }
                if (out.size() == maxsplit) {
                    out.add(s.substring(0, j));
                    break;
                }
                int i = j;
                while (i > 0 && !isSpace(s.charAt(i - 1))) {
                    i--;
                }
                out.add(s.substring(i, j));
                j = i;
            }
        } else {
            if (sep.isEmpty()) {
                throw PyError.value("empty separator");
            }
            int end = s.length();
            while (out.size() < maxsplit) {
                int i = s.lastIndexOf(sep, end - sep.length());
                if (i < 0) {
                    break;
                }
                out.add(s.substring(i + sep.length(), end));
                end = i;
            }
            out.add(s.substring(0, end));
        }
        java.util.Collections.reverse(out);
        return out;
    }

    private static boolean isLineBreak(char c) {
        return c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c >= 0x1c && c <= 0x1e || c == 0x85
                || c == 0x2028 || c == 0x2029;
    }

    /** Python {@code str.splitlines(keepends)}. */
    static List<Object> splitlines(String s, boolean keepends) {
        List<Object> out = new ArrayList<>();
        int start = 0;
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (!isLineBreak(c)) {
                i++;
                continue;
            }
            int eol = i;
            i += c == '\r' && i + 1 < s.length() && s.charAt(i + 1) == '\n' ? 2 : 1;
            out.add(s.substring(start, keepends ? i : eol));
            start = i;
        }
        if (start < s.length()) {
            out.add(s.substring(start));
        }
        return out;
    }

    // ---------------------------------------------------------------- case

    static String upper(String s) {
        return s.toUpperCase(Locale.ROOT);
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    static boolean isCased(int cp) {
        return Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
    }

    /** Python {@code str.title()}: title-case a cased character after an uncased one, lower-case the rest. */
    static String title(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean previousCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            sb.appendCodePoint(previousCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp));
            previousCased = isCased(cp);
        }
        return sb.toString();
    }

    /** Python {@code str.capitalize()}: first character title-cased, the rest lower-cased. */
    static String capitalize(String s) {
        if (s.isEmpty()) {
            return s;
        }
        int first = s.codePointAt(0);
        int n = Character.charCount(first);
        return new StringBuilder().appendCodePoint(Character.toTitleCase(first))
                .append(lower(s.substring(n))).toString();
    }

    static String swapcase(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        s.codePoints().forEach(cp -> sb.appendCodePoint(
                Character.isUpperCase(cp) ? Character.toLowerCase(cp)
                        : Character.isLowerCase(cp) ? Character.toUpperCase(cp) : cp));
        return sb.toString();
    }

    /** {@code islower}/{@code isupper}: at least one cased character, and all cased ones in that case. */
    static boolean isCase(String s, boolean upper) {
        boolean cased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            if (upper ? Character.isLowerCase(cp) || Character.isTitleCase(cp)
                    : Character.isUpperCase(cp) || Character.isTitleCase(cp)) {
                return false;
            }
            cased |= isCased(cp);
        }
        return cased;
    }

    // ---------------------------------------------------------------- search / replace / pad

    /** Python {@code str.replace(old, new, count)}; {@code count < 0} replaces all. */
    static String replace(String s, String old, String replacement, long count) {
        if (count < 0) {
            count = Long.MAX_VALUE;
        }
        StringBuilder sb = new StringBuilder(s.length());
        if (old.isEmpty()) {
            int done = 0;
            for (int i = 0; i < s.length(); ) {
                if (done < count) {
                    sb.append(replacement);
                    done++;
                }
                int cp = s.codePointAt(i);
                sb.appendCodePoint(cp);
                i += Character.charCount(cp);
            }
            if (done < count) {
                sb.append(replacement);
            }
            return sb.toString();
        }
        int start = 0;
        long done = 0;
        for (int i = s.indexOf(old); i >= 0 && done < count; i = s.indexOf(old, start)) {
            sb.append(s, start, i).append(replacement);
            start = i + old.length();
            done++;
        }
        return sb.append(s, start, s.length()).toString();
    }

    /** Python {@code str.center(width, fill)}. */
    static String center(String s, int width, String fill) {
        int len = length(s);
        int marg = width - len;
        if (marg <= 0) {
            return s;
        }
        int left = marg / 2 + (marg & width & 1);
        return fill.repeat(left) + s + fill.repeat(marg - left);
    }

    static String ljust(String s, int width, String fill) {
        int pad = width - length(s);
        return pad <= 0 ? s : s + fill.repeat(pad);
    }

    static String rjust(String s, int width, String fill) {
        int pad = width - length(s);
        return pad <= 0 ? s : fill.repeat(pad) + s;
    }

    static String zfill(String s, int width) {
        int pad = width - length(s);
        if (pad <= 0) {
            return s;
        }
        boolean signed = !s.isEmpty() && (s.charAt(0) == '+' || s.charAt(0) == '-');
        return signed ? s.charAt(0) + "0".repeat(pad) + s.substring(1) : "0".repeat(pad) + s;
    }

    /** Jinja2's {@code title} filter: capitalize after any run of {@code - whitespace ( { [ <}. */
    static String jinjaTitle(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean wordStart = true;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            boolean separator = cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || isSpace(cp);
            if (separator) {
                sb.appendCodePoint(cp);
                wordStart = true;
            } else if (wordStart) {
                sb.append(upper(new String(Character.toChars(cp))));
                wordStart = false;
            } else {
                sb.append(lower(new String(Character.toChars(cp))));
            }
        }
        return sb.toString();
    }
}
