package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Python methods on str, dict, list and tuple values; checked against CPython. */
class MethodsTest {

    @Test
    void stripAndSplitFollowPython() {
        assertEquals("a b|hi|a|a|a|['a', 'b', '', 'c']|['a', 'b']|['a', 'b,c']|['a,b', 'c']|['a', 'b c  ']",
                eval("{{ ' a b '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '  a'.lstrip() }}|{{ 'a  '.rstrip() }}"
                        + "|{{ 'a\\n\\n'.rstrip('\\n') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}"
                        + "|{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ '  a b c  '.split(none, 1) }}"));
    }

    @Test
    void prefixCaseAndReplaceMethods() {
        assertEquals("True True True True HELLO abc They'Re Bill'S Hello world heLLo heLlo",
                eval("{{ s.startswith('he') }} {{ s.startswith(('x', 'h')) }} {{ s.endswith('lo') }}"
                        + " {{ s.startswith('l', 2) }} {{ s.upper() }} {{ 'ABC'.lower() }} {{ \"they're bill's\".title() }}"
                        + " {{ 'hELLO wORLD'.capitalize() }} {{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 1) }}"));
    }

    @Test
    void searchMethodsCountCodePointsAndFormatWorks() {
        assertEquals("2 3 -1 1 2 8 6 a-b 1 and b aba    1|'q'|3.14",
                eval("{{ s.find('l') }} {{ s.rfind('l') }} {{ s.find('z') }} {{ s.index('e') }} {{ s.count('l') }}"
                        + " {{ u.find('🦙') }} {{ u.index('本') }} {{ '-'.join(['a', 'b']) }}"
                        + " {{ '{} and {}'.format(1, 'b') }} {{ '{0}{1}{0}'.format('a', 'b') }}"
                        + " {{ '{x:>4}|{y!r}|{z:.2f}'.format(x=1, y='q', z=3.14159) }}"));
        TemplateRenderException e = assertThrows(TemplateRenderException.class, () -> eval("{{ s.index('z') }}"));
        assertEquals("ValueError: substring not found", e.reason());
    }

    @Test
    void classificationAndPaddingMethods() {
        assertEquals("True True True True True True ('a', ' ', 'b') 00x ab..   ab ['a', 'b'] x",
                eval("{{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ 'a1'.isalnum() }} {{ ' '.isspace() }}"
                        + " {{ 'ab'.islower() }} {{ 'AB'.isupper() }} {{ 'a b'.partition(' ') }} {{ 'x'.zfill(3) }}"
                        + " {{ 'ab'.ljust(4, '.') }} {{ 'ab'.rjust(4) }} {{ 'a\\nb'.splitlines() }}"
                        + " {{ 'prefix-x'.removeprefix('prefix-') }}"));
    }

    @Test
    void dictAndListMethods() {
        assertEquals("1 dflt None None ['a', 'b'] [1, None] [('a', 1), ('b', None)] 1 1 1",
                eval("{{ d.get('a') }} {{ d.get('z', 'dflt') }} {{ d.get('b', 'x') }} {{ d.get('z') }}"
                        + " {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }} {{ xs.index(2) }}"
                        + " {{ xs.count(1) }} {{ (1, 2).index(2) }}"));
    }

    @Test
    void attributeLookupPrefersDictMethodsAndItemLookupPrefersKeys() {
        java.util.Map<String, Object> vars = TemplateTestSupport.vars("m", java.util.Map.of("items", "key"));
        assertEquals("key True", TemplateTestSupport.render("{{ m['items'] }} {{ m.items is callable }}", vars));
    }

    @Test
    void mutatingCallerDictsIsUnsafe() {
        TemplateRenderException e = assertThrows(TemplateRenderException.class, () -> eval("{{ d.update({'c': 1}) }}"));
        assertEquals("SecurityError: access to attribute 'update' of 'dict' object is unsafe.", e.reason());
    }

    @Test
    void strftimeNowFormatsTheClockWithCLocaleNames() {
        assertEquals("26 Jul 2024|2024-07-26 13:05:09|Fri Friday July 24 208 01 PM 26",
                eval("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M:%S') }}"
                        + "|{{ strftime_now('%a %A %B %y %j %I %p %e') }}"));
    }
}
