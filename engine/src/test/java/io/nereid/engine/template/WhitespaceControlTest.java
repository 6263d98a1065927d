package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.render;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Jinja2's lexer rules with HF's trim_blocks/lstrip_blocks and the dropped trailing newline. */
class WhitespaceControlTest {

    @Test
    void trimBlocksDropsTheNewlineAfterABlockTagButNotAfterAnExpression() {
        assertEquals("x\ny", render("{% if true %}\nx\n{% endif %}\n{{ 'y' }}\n"));
        assertEquals("a\nb", render("{{ 'a' }}\n{{ 'b' }}"));
    }

    @Test
    void lstripBlocksRemovesIndentationBeforeBlockTagsOnly() {
        assertEquals("    x\n  y", render("  {% if true %}\n    x\n  {% endif %}\n  y"));
        assertEquals("  x\n", render("  {{ 'x' }}\n  {% if true %}{% endif %}"));
        assertEquals("x", render("\t{% if true %}x{% endif %}"));
    }

    @Test
    void lstripAppliesOnlyWhenNothingButWhitespacePrecedesTheTagOnItsLine() {
        assertEquals("a   b", render("a   {% if true %}b{% endif %}"));
        assertEquals("x   y", render("{% if true %}x{% endif %}   {% if true %}y{% endif %}"));
        assertEquals("x   \ny", render("{% if true %}x{% endif %}   \n   {% if true %}y{% endif %}"));
    }

    @Test
    void minusStripsAllWhitespaceIncludingNewlinesOnItsSide() {
        assertEquals("abc", render("a {{- 'b' -}} c"));
        assertEquals("a  b\nc", render("a\n  {%- if true %}\n  b\n{% endif -%}\n  c"));
        assertEquals("12", render("{%- for i in [1,2] %}\n    {{- i }}\n{%- endfor %}"));
        assertEquals("1", render("{{-1}}"));
    }

    @Test
    void plusDisablesLstripAndTrim() {
        // {%+ keeps the indentation before it; +%} keeps the newline after it.
        assertEquals("a\n    b\n\nc", render("a\n  {%+ if true %}\n  b\n  {% endif +%}\nc"));
    }

    @Test
    void commentsVanishAndFollowTheBlockRules() {
        assertEquals("x y", render("x {# comment #}y"));
        assertEquals("x\ny", render("x\n  {# comment #}\ny"));
        assertEquals("xy", render("x\n  {#- comment -#}\n  y"));
        assertEquals("12", render("{{ 1 }}{# c #}\n{{ 2 }}"));
    }

    @Test
    void rawBlocksEmitTheirBodyVerbatimAndDoNotTrimAfterTheOpeningTag() {
        assertEquals("\n  {{ x }}\nz", render("{% raw %}\n  {{ x }}\n{% endraw %}\nz"));
        assertEquals("xy", render("{% raw -%}\n  x\n  {%- endraw %}\ny"));
    }

    @Test
    void exactlyOneTrailingNewlineOfTheSourceIsDropped() {
        assertEquals("x", render("x\n"));
        assertEquals("x\n", render("x\n\n"));
        assertEquals("x", render("x"));
        assertEquals("1\n", render("{% set x = 1 %}\n{{ x }}\n\n"));
    }

    @Test
    void carriageReturnsAreNormalizedToNewlines() {
        assertEquals("x\ny\nz", render("x\r\ny\r\n{% if true %}\r\nz{% endif %}\r\n"));
    }

    @Test
    void lonelyBracesAreText() {
        assertEquals("text with { braces } and {x}", render("text with { braces } and {x}"));
        assertEquals("{{ }} {'a': {'b': 1}}", render("{{ '{{' }} {{ '}}' }} {{ {'a': {'b': 1}} }}"));
    }

    @Test
    void blockSetAndMacroBodiesHonourWhitespaceControl() {
        assertEquals("[inner]", render("{%- set x -%}\n  inner\n{%- endset -%}\n[{{ x }}]"));
        assertEquals("[body]", render("{% macro m() -%}\n  body\n{%- endmacro %}\n[{{ m() }}]"));
    }
}
