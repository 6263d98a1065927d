package io.nereid.engine.structured;

/** Regexes of the regular JSON Schema formats (RFC 3339 dates and times, RFC 1123 host names). */
final class Formats {

    /** A year, 0001 to 9999. */
    static final String YEAR = "([0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)";
    /** Leap years: divisible by 4 but not 100, or by 400. */
    static final String LEAP_YEAR = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)";
    /** A calendar date: 31 days where the month has them, 29 February only in a leap year. */
    static final String DATE = "(" + YEAR + "-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
            + "|02-(0[1-9]|1[0-9]|2[0-8]))|" + LEAP_YEAR + "-02-29)";
    static final String TIME = "([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";
    static final String LABEL = "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
    static final String HOST = LABEL + "(\\." + LABEL + ")*";
    static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";

    private Formats() {
    }
}
