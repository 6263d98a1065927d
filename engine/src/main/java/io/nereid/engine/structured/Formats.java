package io.nereid.engine.structured;

/** Regexes of the regular JSON Schema formats (RFC 3339 dates and times, RFC 1123 host names, RFC 4291 IPv6). */
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
    /**
     * A URI reference (RFC 3986 section 4.1): a URI, or a relative reference whose first path
     * segment holds no ':'. Characters as the RFC allows them (unreserved, sub-delims, percent
     * escapes, ':' '@' in paths, '/' '?' in queries and fragments); an authority is userinfo, a
     * registered name and a numeric port. IP-literal hosts ({@code [::1]}) are left out: fewer
     * strings, never an invalid one.
     */
    static final String URI_REFERENCE;

    static {
        String u = "[A-Za-z0-9._~!$&'()*+,;=-]";
        String pct = "%[0-9A-Fa-f]{2}";
        String pchar = "(" + u + "|" + pct + "|[:@])";
        String seg = pchar + "*";
        String segNz = pchar + "+";
        String segNzNc = "(" + u + "|" + pct + "|@)+";
        String authority = "((" + u + "|" + pct + "|:)*@)?(" + u + "|" + pct + ")*(:[0-9]*)?";
        String tail = "(\\?(" + pchar + "|[/?])*)?(#(" + pchar + "|[/?])*)?";
        String abempty = "//" + authority + "(/" + seg + ")*";
        String absolute = "/(" + segNz + "(/" + seg + ")*)?";
        String uri = "[A-Za-z][A-Za-z0-9+.-]*:(" + abempty + "|" + absolute + "|" + segNz + "(/" + seg + ")*|)" + tail;
        String relative = "(" + abempty + "|" + absolute + "|" + segNzNc + "(/" + seg + ")*|)" + tail;
        URI_REFERENCE = "(" + uri + "|" + relative + ")";
    }

    static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
    static final String IPV4 = OCTET + "(\\." + OCTET + "){3}";
    /**
     * An IPv6 address in RFC 4291's text forms (section 2.2), as Python's {@code ipaddress} (the
     * validators' check) reads them: eight groups of one to four hex digits, or six and a dotted
     * IPv4 address; one {@code ::} may stand for one or more zero groups. No zone ({@code %eth0}).
     */
    static final String IPV6 = ipv6();

    private Formats() {
    }

    /** Every split of the groups around a {@code ::}, spelled out: a regex has no counter to share. */
    private static String ipv6() {
        StringBuilder alternatives = new StringBuilder();
        for (boolean v4 : new boolean[] {false, true}) {
            int groups = v4 ? 6 : 8;
            String end = v4 ? IPV4 : "";
            alternatives.append('|').append(groups(groups)).append(v4 ? ":" : "").append(end);
            for (int left = 0; left < groups; left++) {
                for (int right = 0; left + right < groups; right++) {
                    alternatives.append('|').append(groups(left)).append("::").append(groups(right))
                            .append(v4 && right > 0 ? ":" : "").append(end);
                }
            }
        }
        return "(" + alternatives.substring(1) + ")";
    }

    /** {@code n} hex groups joined by colons (empty for none). */
    private static String groups(int n) {
        String hex = "[0-9A-Fa-f]{1,4}";
        return switch (n) {
            case 0 -> "";
            case 1 -> hex;
            case 2 -> hex + ":" + hex;
            default -> hex + "(:" + hex + "){" + (n - 1) + "}";
        };
    }
}
