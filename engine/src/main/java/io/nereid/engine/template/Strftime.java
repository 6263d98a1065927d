package io.nereid.engine.template;

import java.time.ZonedDateTime;
import java.time.temporal.IsoFields;

/**
 * C {@code strftime} with the C locale, as Python's {@code datetime.strftime} gives it on Linux:
 * {@code %a %A %b %B %c %C %d %D %e %F %g %G %h %H %I %j %k %l %m %M %n %p %r %R %s %S %t %T %u
 * %U %V %w %W %x %X %y %Y %%}, {@code %z}/{@code %Z} as empty (HF formats a naive local time), Python's {@code %f}, and glibc's {@code %-d} style flag that
 * drops padding. Unknown directives are copied as written. Stateless; thread-safe.
 */
final class Strftime {

    private static final String[] DAYS = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
        "Sunday"};
    private static final String[] MONTHS = {"January", "February", "March", "April", "May", "June", "July",
        "August", "September", "October", "November", "December"};

    private Strftime() {
    }

    static String format(String fmt, ZonedDateTime t) {
        StringBuilder sb = new StringBuilder(fmt.length() * 2);
        for (int i = 0; i < fmt.length(); i++) {
            char c = fmt.charAt(i);
            if (c != '%' || i + 1 >= fmt.length()) {
                sb.append(c);
                continue;
            }
            boolean noPad = fmt.charAt(i + 1) == '-' && i + 2 < fmt.length();
            char d = fmt.charAt(noPad ? i + 2 : i + 1);
            String s = directive(d, t, noPad);
            if (s == null) {
                sb.append(c);
                continue;
            }
            sb.append(s);
            i += noPad ? 2 : 1;
        }
        return sb.toString();
    }

    private static String num(long v, int width, boolean noPad) {
        String s = Long.toString(v);
        return noPad || s.length() >= width ? s : "0".repeat(width - s.length()) + s;
    }

    private static String spaced(long v, int width) {
        String s = Long.toString(v);
        return s.length() >= width ? s : " ".repeat(width - s.length()) + s;
    }

    private static String directive(char d, ZonedDateTime t, boolean noPad) {
        int hour12 = t.getHour() % 12 == 0 ? 12 : t.getHour() % 12;
        int yday = t.getDayOfYear() - 1;
        int sundayBased = t.getDayOfWeek().getValue() % 7; // 0 = Sunday, as C's tm_wday
        return switch (d) {
            case 'a' -> DAYS[t.getDayOfWeek().getValue() - 1].substring(0, 3);
            case 'A' -> DAYS[t.getDayOfWeek().getValue() - 1];
            case 'b', 'h' -> MONTHS[t.getMonthValue() - 1].substring(0, 3);
            case 'B' -> MONTHS[t.getMonthValue() - 1];
            case 'c' -> format("%a %b %e %H:%M:%S %Y", t);
            case 'C' -> num(t.getYear() / 100, 2, noPad);
            case 'd' -> num(t.getDayOfMonth(), 2, noPad);
            case 'D', 'x' -> format("%m/%d/%y", t);
            case 'e' -> noPad ? Integer.toString(t.getDayOfMonth()) : spaced(t.getDayOfMonth(), 2);
            case 'f' -> num(t.getNano() / 1000, 6, false);
            case 'F' -> format("%Y-%m-%d", t);
            case 'g' -> num(t.get(IsoFields.WEEK_BASED_YEAR) % 100, 2, noPad);
            case 'G' -> Integer.toString(t.get(IsoFields.WEEK_BASED_YEAR));
            case 'H' -> num(t.getHour(), 2, noPad);
            case 'I' -> num(hour12, 2, noPad);
            case 'j' -> num(t.getDayOfYear(), 3, noPad);
            case 'k' -> spaced(t.getHour(), 2);
            case 'l' -> spaced(hour12, 2);
            case 'm' -> num(t.getMonthValue(), 2, noPad);
            case 'M' -> num(t.getMinute(), 2, noPad);
            case 'n' -> "\n";
            case 'p' -> t.getHour() < 12 ? "AM" : "PM";
            case 'r' -> format("%I:%M:%S %p", t);
            case 'R' -> format("%H:%M", t);
            case 's' -> Long.toString(t.toEpochSecond());
            case 'S' -> num(t.getSecond(), 2, noPad);
            case 't' -> "\t";
            case 'T', 'X' -> format("%H:%M:%S", t);
            case 'u' -> Integer.toString(t.getDayOfWeek().getValue());
            case 'U' -> num((yday + 7 - sundayBased) / 7, 2, noPad);
            case 'V' -> num(t.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR), 2, noPad);
            case 'w' -> Integer.toString(sundayBased);
            case 'W' -> num((yday + 7 - (sundayBased + 6) % 7) / 7, 2, noPad);
            case 'y' -> num(t.getYear() % 100, 2, noPad);
            case 'Y' -> Integer.toString(t.getYear());
            case 'z', 'Z' -> ""; // HF formats a naive datetime.now(): no zone
            case '%' -> "%";
            default -> null;
        };
    }
}
