package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Loops, assignments and scoping, namespaces, macros and call blocks; checked against Python Jinja2. */
class StatementsTest {

    @Test
    void loopVariablesCountFromBothEnds() {
        assertEquals("1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;", eval("{% for x in xs %}{{ loop.index }}"
                + "{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}"
                + "{{ loop.length }};{% endfor %}"));
    }

    @Test
    void loopNeighboursCycleAndDepth() {
        assertEquals("[|2|a|1][1|3|b|1][2||a|1]", eval("{% for x in xs %}[{{ loop.previtem }}|{{ loop.nextitem }}|"
                + "{{ loop.cycle('a', 'b') }}|{{ loop.depth }}]{% endfor %}"));
        assertEquals("TrueFalseTrue", eval("{% for x in [1, 1, 2] %}{{ loop.changed(x) }}{% endfor %}"));
    }

    @Test
    void inlineFilterShapesTheLoopAndElseRunsWhenNothingIsLeft() {
        assertEquals("1:2/2 2:3/2 |empty|filtered away", eval("{% for x in xs if x > 1 %}{{ loop.index }}:{{ x }}/"
                + "{{ loop.length }} {% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}|"
                + "{% for x in xs if x > 5 %}x{% else %}filtered away{% endfor %}"));
    }

    @Test
    void loopsUnpackTuplesAndIterateDictKeysAndCodePoints() {
        assertEquals("a=1;b=None;|ab|37|<C><a><f><é>< ><日><本>< ><🦙>", eval("{% for k, v in d.items() %}{{ k }}={{ v }};"
                + "{% endfor %}|{% for k in d %}{{ k }}{% endfor %}|{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}"
                + "{% endfor %}|{% for c in u %}<{{ c }}>{% endfor %}"));
        TemplateRenderException e = assertThrows(TemplateRenderException.class,
                () -> eval("{% for a, b in [[1, 2, 3]] %}{% endfor %}"));
        assertEquals("ValueError: too many values to unpack (expected 2)", e.reason());
    }

    @Test
    void breakAndContinueControlTheInnermostLoop() {
        assertEquals("0134", eval("{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}"
                + "{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"));
        assertEquals("12|1;12|2;12|3;", eval("{% for x in xs %}{% for y in 'ab' %}{{ loop.index }}{% endfor %}|"
                + "{{ loop.index }};{% endfor %}"));
    }

    @Test
    void recursiveLoopsRenderChildrenOneLevelDeeper() {
        assertEquals("<1<2>><1>", eval("{% for item in [{'c': [{'c': []}]}, {'c': []}] recursive %}<{{ loop.depth }}"
                + "{{ loop(item.c) }}>{% endfor %}"));
    }

    @Test
    void assignmentsInsideALoopDoNotLeakOrSurviveTheIteration() {
        assertEquals("[][]", eval("{% for i in [1, 2] %}{% if i == 2 %}[{{ x }}]{% endif %}{% set x = i %}{% endfor %}"
                + "[{{ x }}]"));
        assertEquals("outerinnerouter", eval("{% set x = 'outer' %}{% for i in [1] %}{{ x }}{% set x = 'inner' %}"
                + "{{ x }}{% endfor %}{{ x }}"));
    }

    @Test
    void assignmentsInsideIfAreVisibleAfterIt() {
        assertEquals("5", eval("{% if true %}{% set y = 5 %}{% endif %}{{ y }}"));
    }

    @Test
    void namespaceAttributesCarryStateOutOfLoops() {
        assertEquals("6 [1, 2, 3]", eval("{% set ns = namespace(total=0, seen=[]) %}{% for x in xs %}"
                + "{% set ns.total = ns.total + x %}{% set ns.seen = ns.seen + [x] %}{% endfor %}"
                + "{{ ns.total }} {{ ns.seen }}"));
        TemplateRenderException e = assertThrows(TemplateRenderException.class,
                () -> eval("{% set z = 1 %}{% set z.attr = 2 %}"));
        assertEquals("TemplateRuntimeError: cannot assign attribute on non-namespace object", e.reason());
    }

    @Test
    void setUnpacksTuplesAndCapturesBlocksThroughFilters() {
        assertEquals("1234", eval("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set (c, d2) = [3, 4] %}{{ c }}{{ d2 }}"));
        assertEquals("[  block hello ]SHOUT", eval("{% set x %}  block {{ s }} {% endset %}[{{ x }}]"
                + "{% set y | upper %}shout{% endset %}{{ y }}"));
    }

    @Test
    void macrosTakeDefaultsKeywordsAndCollectExtras() {
        assertEquals("Hi a! Hi b? Hi c. [Hi !]", eval("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}"
                + "{% endmacro %}{{ greet('a') }} {{ greet('b', '?') }} {{ greet(name='c', punct='.') }} [{{ greet() }}]"));
        assertEquals("1-2-()-{}|1-3-(4,)-{}|1-2-()-{'c': 3}", eval("{% macro m(a, b=a * 2) %}{{ a }}-{{ b }}-"
                + "{{ varargs }}-{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 3, 4) }}|{{ m(1, c=3) }}"));
    }

    @Test
    void macrosRecurseAndSeeTopLevelVariablesButNotTheCallersLoop() {
        assertEquals("120", eval("{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}"
                + "{% endmacro %}{{ fact(5) }}"));
        assertEquals("top|later|top|later", eval("{% set x = 'top' %}{% macro m() %}{{ x }}|{{ y }}{% endmacro %}"
                + "{% set y = 'later' %}{{ m() }}|{% for y in [1] %}{{ m() }}{% endfor %}"));
    }

    @Test
    void callBlocksPassTheirBodyAsCaller() {
        assertEquals("[t: inside hello]", eval("{% macro box(title) %}[{{ title }}: {{ caller() }}]{% endmacro %}"
                + "{% call box('t') %}inside {{ s }}{% endcall %}"));
        assertEquals("<10><20><30>", eval("{% macro each(items) %}{% for i in items %}<{{ caller(i) }}>{% endfor %}"
                + "{% endmacro %}{% call(x) each(xs) %}{{ x * 10 }}{% endcall %}"));
    }

    @Test
    void filterBlocksAndWithBlocks() {
        assertEquals("ABC HELLO|HELLO", eval("{% filter upper %}abc {{ s }}{% endfilter %}|"
                + "{% filter replace('l', 'L') | upper %}hello{% endfilter %}"));
        assertEquals("3[]", eval("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"));
    }

    @Test
    void generationBlocksRenderTheirBodyAsIs() {
        assertEquals("<a>gen 1</a>", eval("<a>{% generation %}gen {{ 1 }}{% endgeneration %}</a>"));
    }

    @Test
    void templateCreatedListsAcceptAppendButCallerListsDoNot() {
        assertEquals("[1, 2]", eval("{% set l = [1] %}{% set _ = l.append(2) %}{{ l }}"));
        TemplateRenderException e = assertThrows(TemplateRenderException.class,
                () -> eval("{% set _ = xs.append(4) %}"));
        assertEquals("SecurityError: access to attribute 'append' of 'list' object is unsafe.", e.reason());
    }
}
