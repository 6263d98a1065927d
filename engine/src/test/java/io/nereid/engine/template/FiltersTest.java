package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Built-in filters, with Jinja2 3.1.6's results (and HF's tojson); checked against Python. */
class FiltersTest {

    @Test
    void tojsonUsesPythonSeparatorsAndKeepsKeyOrder() {
        assertEquals("{\"name\": \"f\", \"args\": {\"x\": [1, 2.5, null, true]}, \"empty\": {}, \"none\": []}",
                eval("{{ {'name': 'f', 'args': {'x': [1, 2.5, none, true]}, 'empty': {}, 'none': []}|tojson }}"));
    }

    @Test
    void tojsonWithIndentPutsOneItemPerLineAndKeepsEmptyContainersInline() {
        assertEquals("{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\"\n    }\n  ],\n  \"e\": {}\n}",
                eval("{{ {'a': [1, {'b': 'c'}], 'e': {}}|tojson(indent=2) }}"));
    }

    @Test
    void tojsonEscapesLikeJsonDumpsWithEnsureAsciiOff() {
        assertEquals("{\"a\": \"é\\\"\\\\\\n\\t\\u0001/\"} \"\\u00e9\\ud83e\\udd99\" [1,2] {\"a\": 2, \"b\": 1} [1, \"x\"]"
                        + " {\"1\": \"bool\"} [1.0, 1e+20, 1.5e-07]",
                eval("{{ {'a': 'é\"\\\\\\n\\t\\x01/'}|tojson }} {{ 'é🦙'|tojson(ensure_ascii=true) }}"
                        + " {{ [1, 2]|tojson(separators=(',', ':')) }} {{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}"
                        + " {{ (1, 'x')|tojson }} {{ {1: 'int', true: 'bool'}|tojson }} {{ [1.0, 1e20, 1.5e-7]|tojson }}"));
    }

    @Test
    void tojsonRejectsUndefined() {
        TemplateRenderException e = assertThrows(TemplateRenderException.class, () -> eval("{{ x|tojson }}"));
        assertEquals("TypeError: Object of type Undefined is not JSON serializable", e.reason());
    }

    @Test
    void stringFilters() {
        assertEquals("Hello World-Foo Abc def MIXED mixed pad| hi heLLo heLlo    hello   | 3",
                eval("{{ 'hello world-foo'|title }} {{ 'aBC dEF'|capitalize }} {{ 'MiXed'|upper }} {{ 'MiXed'|lower }}"
                        + " {{ '  pad  '|trim }}| {{ 'xxhixx'|trim('x') }} {{ 'hello'|replace('l', 'L') }}"
                        + " {{ 'hello'|replace('l', 'L', 1) }} {{ 'hello'|center(11) }}| {{ 'a b  c'|wordcount }}"));
    }

    @Test
    void lengthFirstLastAndJoin() {
        assertEquals("3 5 2 9 1 3 h 1, 2, 3 1-None-a bob,Al,cy",
                eval("{{ xs|length }} {{ s|length }} {{ d|count }} {{ u|length }} {{ xs|first }} {{ xs|last }}"
                        + " {{ s|first }} {{ xs|join(', ') }} {{ [1, none, 'a']|join('-') }}"
                        + " {{ users|join(',', attribute='name') }}"));
    }

    @Test
    void defaultReplacesUndefinedAndWithBooleanAlsoFalsyValues() {
        assertEquals("undef  empty None 5", eval("{{ x|default('undef') }} {{ ''|default('empty') }}"
                + " {{ ''|default('empty', true) }} {{ none|d('dflt') }} {{ 0|default(5, boolean=true) }}"));
    }

    @Test
    void numberConversionsAndRounding() {
        assertEquals("42 42 0 7 3 26 12 1.5 0.0 3.0 3 2.5", eval("{{ '42'|int }} {{ '42.7'|int }} {{ 'x'|int }}"
                + " {{ 'x'|int(7) }} {{ 3.9|int }} {{ '0x1A'|int(base=16) }} {{ ' 12 '|int }} {{ '1.5'|float }}"
                + " {{ 'x'|float }} {{ 3|float }} {{ -3|abs }} {{ -2.5|abs }}"));
        assertEquals("2.0 4.0 2.67 2.0 3.0 5 1200", eval("{{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }}"
                + " {{ 2.7|round(method='floor') }} {{ 2.1|round(method='ceil') }} {{ 5|round }} {{ 1234|round(-2) }}"));
    }

    @Test
    void itemsAndMap() {
        assertEquals("[('a', 1), ('b', None)] ['bob', 'Al', 'cy'] 123 ['A', 'B'] ['-', '-', '-']",
                eval("{{ d|items|list }} {{ users|map(attribute='name')|list }} {{ xs|map('string')|join }}"
                        + " {{ ['a', 'b']|map('upper')|list }} {{ users|map(attribute='tags.0', default='-')|list }}"));
    }

    @Test
    void selectRejectAndTheirAttributeForms() {
        assertEquals("[1, 3] [2] ['bob', 'cy'] ['Al'] [1, 'a'] []",
                eval("{{ xs|select('odd')|list }} {{ xs|reject('odd')|list }}"
                        + " {{ users|selectattr('age', 'equalto', 30)|map(attribute='name')|list }}"
                        + " {{ users|rejectattr('age', 'gt', 26)|map(attribute='name')|list }}"
                        + " {{ [0, 1, '', 'a', none]|select|list }} {{ users|selectattr('tags')|list }}"));
    }

    @Test
    void sortIsStableCaseInsensitiveByDefaultAndTakesAttributes() {
        assertEquals("['A', 'a', 'b', 'c'] ['A', 'a', 'b', 'c'] [3, 2, 1] ['Al', 'bob', 'cy'] ['Al', 'bob', 'cy']",
                eval("{{ ['b', 'A', 'c', 'a']|sort }} {{ ['b', 'A', 'c', 'a']|sort(case_sensitive=true) }}"
                        + " {{ [3, 1, 2]|sort(reverse=true) }} {{ users|sort(attribute='age')|map(attribute='name')|list }}"
                        + " {{ users|sort(attribute='age,name')|map(attribute='name')|list }}"));
    }

    @Test
    void uniqueReverseAndDictsort() {
        assertEquals("['a', 'b'] ['a', 'A'] [3, 2, 1] olleh [('a', 2), ('b', 1)] [('b', 1), ('a', 2)]",
                eval("{{ ['a', 'A', 'b', 'a']|unique|list }} {{ ['a', 'A']|unique(case_sensitive=true)|list }}"
                        + " {{ xs|reverse|list }} {{ s|reverse }} {{ {'b': 1, 'a': 2}|dictsort }}"
                        + " {{ {'b': 1, 'a': 2}|dictsort(by='value') }}"));
    }

    @Test
    void aggregatesAndBatch() {
        assertEquals("6 85 3 a  False [[1, 2], [3, 4], [5]] [[1, 2], [3, 0]]",
                eval("{{ xs|sum }} {{ users|sum(attribute='age') }} {{ xs|max }} {{ ['B', 'a']|min }}"
                        + " {{ users|max(attribute='age')|attr('name') }} {{ []|max is defined }}"
                        + " {{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 0)|list }}"));
    }

    @Test
    void indentFollowsJinjaFirstAndBlankRules() {
        assertEquals("a\n    b\n\n    c|  a\n  b|a\n  \n  b|a\n> b", eval("{{ \"a\\nb\\n\\nc\"|indent }}|"
                + "{{ \"a\\nb\"|indent(2, true) }}|{{ \"a\\n\\nb\"|indent(2, blank=true) }}|{{ \"a\\nb\"|indent('> ') }}"));
    }

    @Test
    void truncateEscapeSafeFormatAndList() {
        assertEquals("hello... hello ... hello world foo short", eval("{{ 'hello world foo'|truncate(9) }}"
                + " {{ 'hello world foo'|truncate(9, true) }} {{ 'hello world foo'|truncate(12, end='~') }}"
                + " {{ 'short'|truncate(3, leeway=5) }}"));
        assertEquals("&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt; <b> 1.5! x-003.1-7 1 ['a', 'b', 'c'] True",
                eval("{{ '<a href=\"x\">&\\'</a>'|e }} {{ '<b>'|safe }} {{ 1.5|string ~ '!' }}"
                        + " {{ '%s-%05.1f-%d'|format('x', 3.14159, 7) }} {{ '%(a)s'|format(a=1) }} {{ 'abc'|list }}"
                        + " {{ 'x'|attr('upper') is defined }}"));
    }

    @Test
    void unknownFilterIsASyntaxErrorAndAKnownUnsupportedOneFailsOnlyWhenRendered() {
        TemplateSyntaxException e = assertThrows(TemplateSyntaxException.class, () -> eval("{{ x|nosuch }}"));
        assertEquals("No filter named 'nosuch'.", e.reason());
        assertEquals("", eval("{% if false %}{{ x|urlize }}{% endif %}"));
    }
}
