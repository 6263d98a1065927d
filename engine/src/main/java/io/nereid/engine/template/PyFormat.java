package io.nereid.engine.template;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Python string formatting: printf-style {@code fmt % args} (also the {@code format} filter) and
 * {@code str.format}. Supports the conversions {@code s r a d i u o x X e E f F g G c %} with flags,
 * width and precision, and for {@code str.format} automatic/numbered/named fields with
 * {@code .attr}/{@code [key]} access, {@code !r/!s/!a} and the common format-spec mini-language.
 * Floats round like C (exact binary value, ties to even). Stateless; thread-safe.
 */
final class PyFormat {

    private PyFormat() {
    }

    // ---------------------------------------------------------------- printf-style

    static String percent(String fmt, Object args) {
        List<Object> positional = args instanceof PyTuple t ? t.items() : List.of();
        boolean single = !(args instanceof PyTuple);
        Map<?, ?> mapping = args instanceof Map<?, ?> m ? m : null;
        int next = 0;
        boolean usedSingle = false;
        StringBuilder out = new StringBuilder(fmt.length() + 16);
        int i = 0;
        int n = fmt.length();
        while (i < n) {
            char c = fmt.charAt(i++);
            if (c != '%') {
                out.append(c);
                continue;
            }
            if (i >= n) {
                throw PyError.value("incomplete format");
            }
            Object value = null;
            boolean haveValue = false;
            if (fmt.charAt(i) == '(') {
                int close = fmt.indexOf(')', i);
                if (mapping == null || close < 0) {
                    throw PyError.type("format requires a mapping");
                }
                String key = fmt.substring(i + 1, close);
                if (!mapping.containsKey(key)) {
                    throw new PyError("KeyError", PyValues.repr(key));
                }
                value = mapping.get(key);
                haveValue = true;
                i = close + 1;
            }
            StringBuilder flags = new StringBuilder();
            while (i < n && "-+ #0".indexOf(fmt.charAt(i)) >= 0) {
                flags.append(fmt.charAt(i++));
            }
            int width = -1;
            int start = i;
            while (i < n && Character.isDigit(fmt.charAt(i))) {
                i++;
            }
            if (i > start) {
                width = Integer.parseInt(fmt.substring(start, i));
            }
            int precision = -1;
            if (i < n && fmt.charAt(i) == '.') {
                start = ++i;
                while (i < n && Character.isDigit(fmt.charAt(i))) {
                    i++;
                }
                precision = i > start ? Integer.parseInt(fmt.substring(start, i)) : 0;
            }
            while (i < n && "hlL".indexOf(fmt.charAt(i)) >= 0) {
                i++;
            }
            if (i >= n) {
                throw PyError.value("incomplete format");
            }
            char conv = fmt.charAt(i++);
            if (conv == '%') {
                out.append('%');
                continue;
            }
            if (!haveValue) {
                if (single) {
                    if (usedSingle) {
                        throw PyError.type("not enough arguments for format string");
                    }
                    usedSingle = true;
                    value = args;
                } else {
                    if (next >= positional.size()) {
                        throw PyError.type("not enough arguments for format string");
                    }
                    value = positional.get(next++);
                }
            }
            Spec spec = new Spec(flags.indexOf("-") >= 0 ? '<' : '>', ' ', sign(flags), flags.indexOf("#") >= 0,
                    flags.indexOf("0") >= 0 && flags.indexOf("-") < 0, width, precision, conv, (char) 0);
            out.append(convert(value, spec, true));
        }
        if (!single && next < positional.size() || single && !usedSingle && mapping == null
                && !(args instanceof Map<?, ?>)) {
            throw PyError.type("not all arguments converted during string formatting");
        }
        return out.toString();
    }

    private static char sign(CharSequence flags) {
        String f = flags.toString();
        return f.indexOf('+') >= 0 ? '+' : f.indexOf(' ') >= 0 ? ' ' : '-';
    }

    /**
     * A parsed conversion: alignment {@code < > ^ =}, fill, sign {@code + - space}, alternate form,
     * zero padding, width and precision (-1 when absent), type (0 when absent).
     */
    private record Spec(char align, char fill, char sign, boolean alternate, boolean zero, int width,
                        int precision, char type, char grouping) { }

    private static String convert(Object value, Spec spec, boolean printf) {
        if (spec.type() == 0 && PyValues.isInt(value)) {
            return convert(value, withType(spec, 'd'), printf);
        }
        if (spec.type() == 0 && PyValues.isFloat(value)) {
            if (spec.precision() >= 0) {
                return convert(value, withType(spec, 'g'), printf);
            }
            double d = PyValues.toDouble(value);
            return numeric(d < 0 || d == 0 && 1 / d < 0, PyValues.floatRepr(Math.abs(d)), spec);
        }
        String body;
        switch (spec.type()) {
            case 's', 0 -> {
                body = PyValues.str(value);
                if (spec.precision() >= 0 && PyStrings.length(body) > spec.precision()) {
                    body = body.substring(0, PyStrings.offset(body, spec.precision()));
                }
                return pad(body, spec, value instanceof String || !PyValues.isNumber(value) ? '<' : '>');
            }
            case 'r', 'a' -> body = PyValues.repr(value);
            case 'c' -> body = value instanceof String s ? s : new String(Character.toChars((int) integer(value, spec)));
            case 'd', 'i', 'u', 'o', 'x', 'X', 'b', 'n' -> {
                long v = integer(value, spec);
                String digits = switch (spec.type()) {
                    case 'o' -> Long.toOctalString(Math.abs(v));
                    case 'x' -> Long.toHexString(Math.abs(v));
                    case 'X' -> Long.toHexString(Math.abs(v)).toUpperCase(Locale.ROOT);
                    case 'b' -> Long.toBinaryString(Math.abs(v));
                    default -> Long.toString(Math.abs(v));
                };
                if (v == Long.MIN_VALUE) {
                    digits = digits.replace("-", "");
                }
                if (spec.alternate()) {
                    digits = switch (spec.type()) {
                        case 'o' -> "0o" + digits;
                        case 'x' -> "0x" + digits;
                        case 'X' -> "0X" + digits;
                        case 'b' -> "0b" + digits;
                        default -> digits;
                    };
                }
                return numeric(v < 0, digits, spec);
            }
            case 'e', 'E', 'f', 'F', 'g', 'G', '%' -> {
                if (!PyValues.isNumber(value)) {
                    throw PyError.type("must be real number, not " + PyValues.typeName(value));
                }
                double d = PyValues.toDouble(value);
                return numeric(d < 0 || d == 0 && 1 / d < 0, floatDigits(Math.abs(d), spec), spec);
            }
            default -> throw PyError.value("unsupported format character '" + spec.type() + "'");
        }
        return pad(body, spec, '<');
    }

    private static Spec withType(Spec s, char type) {
        return new Spec(s.align(), s.fill(), s.sign(), s.alternate(), s.zero(), s.width(), s.precision(), type,
                s.grouping());
    }

    private static long integer(Object value, Spec spec) {
        if (PyValues.isIntegral(value)) {
            return PyValues.toLong(value);
        }
        if (PyValues.isFloat(value)) {
            double d = PyValues.toDouble(value);
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw PyError.value("cannot convert float " + PyValues.floatRepr(d) + " to integer");
            }
            return (long) d;
        }
        throw PyError.type("%" + spec.type() + " format: a real number is required, not " + PyValues.typeName(value));
    }

    private static String floatDigits(double d, Spec spec) {
        if (Double.isNaN(d)) {
            return Character.isUpperCase(spec.type()) ? "NAN" : "nan";
        }
        if (Double.isInfinite(d)) {
            return Character.isUpperCase(spec.type()) ? "INF" : "inf";
        }
        int p = spec.precision() < 0 ? 6 : spec.precision();
        BigDecimal exact = new BigDecimal(d);
        return switch (spec.type()) {
            case 'f', 'F' -> fixed(exact, p, spec.alternate());
            case '%' -> fixed(exact.movePointRight(2), p, spec.alternate()) + "%";
            case 'e', 'E' -> exponent(exact, p, spec.alternate(), spec.type() == 'E');
            default -> general(exact, p == 0 ? 1 : p, spec.alternate(), spec.type() == 'G');
        };
    }

    private static String fixed(BigDecimal v, int p, boolean alternate) {
        String s = v.setScale(p, RoundingMode.HALF_EVEN).toPlainString();
        return alternate && p == 0 ? s + "." : s;
    }

    private static String exponent(BigDecimal v, int p, boolean alternate, boolean upper) {
        int exp = 0;
        String digits;
        if (v.signum() == 0) {
            digits = "0".repeat(p + 1);
        } else {
            BigDecimal r = v.round(new MathContext(p + 1, RoundingMode.HALF_EVEN));
            digits = r.unscaledValue().toString();
            exp = digits.length() - 1 - r.scale();
            digits = (digits + "0".repeat(p + 1)).substring(0, p + 1);
        }
        StringBuilder sb = new StringBuilder().append(digits.charAt(0));
        if (p > 0 || alternate) {
            sb.append('.').append(digits, 1, digits.length());
        }
        sb.append(upper ? 'E' : 'e').append(exp < 0 ? '-' : '+');
        if (Math.abs(exp) < 10) {
            sb.append('0');
        }
        return sb.append(Math.abs(exp)).toString();
    }

    private static String general(BigDecimal v, int p, boolean alternate, boolean upper) {
        int exp = 0;
        if (v.signum() != 0) {
            BigDecimal r = v.round(new MathContext(p, RoundingMode.HALF_EVEN));
            exp = r.precision() - r.scale() - 1;
        }
        String s;
        if (exp < -4 || exp >= p) {
            s = exponent(v, p - 1, alternate, upper);
            if (!alternate) {
                int e = s.indexOf(upper ? 'E' : 'e');
                s = stripZeros(s.substring(0, e)) + s.substring(e);
            }
        } else {
            s = fixed(v, p - 1 - exp, alternate);
            if (!alternate) {
                s = stripZeros(s);
            }
        }
        return s;
    }

    private static String stripZeros(String s) {
        if (s.indexOf('.') < 0) {
            return s;
        }
        int end = s.length();
        while (s.charAt(end - 1) == '0') {
            end--;
        }
        if (s.charAt(end - 1) == '.') {
            end--;
        }
        return s.substring(0, end);
    }

    /** Sign, then zero padding between sign and digits, or fill padding per the alignment. */
    private static String numeric(boolean negative, String digits, Spec spec) {
        if (spec.grouping() != 0 && "dnfF%eEgG".indexOf(spec.type()) >= 0 || spec.grouping() != 0 && spec.type() == 0) {
            digits = group(digits, spec.grouping());
        }
        String sign = negative ? "-" : spec.sign() == '+' ? "+" : spec.sign() == ' ' ? " " : "";
        if (spec.zero() && spec.width() > 0 && (spec.align() == '>' || spec.align() == '=')) {
            int pad = spec.width() - sign.length() - digits.length();
            return sign + "0".repeat(Math.max(0, pad)) + digits;
        }
        if (spec.align() == '=') {
            int pad = spec.width() - sign.length() - digits.length();
            return sign + String.valueOf(spec.fill()).repeat(Math.max(0, pad)) + digits;
        }
        return pad(sign + digits, spec, '>');
    }

    /** Thousands separators in the integer part of a decimal digit string. */
    private static String group(String digits, char separator) {
        int end = 0;
        while (end < digits.length() && Character.isDigit(digits.charAt(end))) {
            end++;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < end; i++) {
            if (i > 0 && (end - i) % 3 == 0) {
                sb.append(separator);
            }
            sb.append(digits.charAt(i));
        }
        return sb.append(digits, end, digits.length()).toString();
    }

    private static String pad(String body, Spec spec, char defaultAlign) {
        int pad = spec.width() - PyStrings.length(body);
        if (pad <= 0) {
            return body;
        }
        String fill = String.valueOf(spec.fill());
        char align = spec.align() == 0 ? defaultAlign : spec.align();
        return switch (align) {
            case '<' -> body + fill.repeat(pad);
            case '^' -> fill.repeat(pad / 2) + body + fill.repeat(pad - pad / 2);
            default -> fill.repeat(pad) + body;
        };
    }

    // ---------------------------------------------------------------- str.format

    static String format(String fmt, List<Object> args, Map<String, Object> kwargs) {
        StringBuilder out = new StringBuilder(fmt.length() + 16);
        int auto = 0;
        int i = 0;
        while (i < fmt.length()) {
            char c = fmt.charAt(i);
            if (c == '}') {
                if (i + 1 < fmt.length() && fmt.charAt(i + 1) == '}') {
                    out.append('}');
                    i += 2;
                    continue;
                }
                throw PyError.value("Single '}' encountered in format string");
            }
            if (c != '{') {
                out.append(c);
                i++;
                continue;
            }
            if (i + 1 < fmt.length() && fmt.charAt(i + 1) == '{') {
                out.append('{');
                i += 2;
                continue;
            }
            int close = fmt.indexOf('}', i);
            if (close < 0) {
                throw PyError.value("expected '}' before end of string");
            }
            String field = fmt.substring(i + 1, close);
            i = close + 1;
            String specText = "";
            int colon = field.indexOf(':');
            if (colon >= 0) {
                specText = field.substring(colon + 1);
                field = field.substring(0, colon);
            }
            char conversion = 0;
            int bang = field.indexOf('!');
            if (bang >= 0) {
                conversion = bang + 1 < field.length() ? field.charAt(bang + 1) : 0;
                field = field.substring(0, bang);
            }
            int end = 0;
            while (end < field.length() && field.charAt(end) != '.' && field.charAt(end) != '[') {
                end++;
            }
            String head = field.substring(0, end);
            Object value;
            if (head.isEmpty()) {
                if (auto >= args.size()) {
                    throw new PyError("IndexError", "Replacement index " + auto + " out of range for positional args tuple");
                }
                value = args.get(auto++);
            } else if (head.chars().allMatch(Character::isDigit)) {
                int k = Integer.parseInt(head);
                if (k >= args.size()) {
                    throw new PyError("IndexError", "Replacement index " + k + " out of range for positional args tuple");
                }
                value = args.get(k);
            } else {
                if (!kwargs.containsKey(head)) {
                    throw new PyError("KeyError", PyValues.repr(head));
                }
                value = kwargs.get(head);
            }
            value = access(value, field.substring(end));
            value = switch (conversion) {
                case 'r', 'a' -> PyValues.repr(value);
                case 's' -> PyValues.str(value);
                default -> value;
            };
            out.append(convert(value, parseSpec(specText), false));
        }
        return out.toString();
    }

    private static Object access(Object value, String chain) {
        int i = 0;
        while (i < chain.length()) {
            if (chain.charAt(i) == '.') {
                int j = i + 1;
                while (j < chain.length() && chain.charAt(j) != '.' && chain.charAt(j) != '[') {
                    j++;
                }
                value = PyAccess.getattr(value, chain.substring(i + 1, j));
                i = j;
            } else {
                int close = chain.indexOf(']', i);
                String key = chain.substring(i + 1, close < 0 ? chain.length() : close);
                Object k = !key.isEmpty() && key.chars().allMatch(Character::isDigit) ? (Object) Long.parseLong(key) : key;
                value = PyAccess.getitem(value, k);
                i = close < 0 ? chain.length() : close + 1;
            }
        }
        return value;
    }

    /** {@code [[fill]align][sign][#][0][width][,|_][.precision][type]}. */
    private static Spec parseSpec(String s) {
        int i = 0;
        char fill = ' ';
        char align = 0;
        if (s.length() >= 2 && "<>^=".indexOf(s.charAt(1)) >= 0) {
            fill = s.charAt(0);
            align = s.charAt(1);
            i = 2;
        } else if (!s.isEmpty() && "<>^=".indexOf(s.charAt(0)) >= 0) {
            align = s.charAt(0);
            i = 1;
        }
        char sign = '-';
        if (i < s.length() && "+- ".indexOf(s.charAt(i)) >= 0) {
            sign = s.charAt(i++);
        }
        boolean alternate = i < s.length() && s.charAt(i) == '#';
        if (alternate) {
            i++;
        }
        boolean zero = i < s.length() && s.charAt(i) == '0';
        if (zero) {
            i++;
        }
        int start = i;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        int width = i > start ? Integer.parseInt(s.substring(start, i)) : -1;
        char grouping = 0;
        if (i < s.length() && (s.charAt(i) == ',' || s.charAt(i) == '_')) {
            grouping = s.charAt(i++);
        }
        int precision = -1;
        if (i < s.length() && s.charAt(i) == '.') {
            start = ++i;
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            precision = Integer.parseInt(s.substring(start, i));
        }
        char type = i < s.length() ? s.charAt(i) : 0;
        if (zero && align == 0) {
            align = '=';
            fill = '0';
        }
        return new Spec(align, fill, sign, alternate, false, width, precision, type, grouping);
    }
}
