package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The {@code is} tests, with Python's type rules (bool is a number but not an integer, strings are iterable). */
class IsOperatorTest {

    @Test
    void typeTests() {
        assertEquals("False True True True True False True True True True True False",
                eval("{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 1 is number }} {{ true is number }}"
                        + " {{ true is integer }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is boolean }}"
                        + " {{ 's' is string }} {{ d is mapping }} {{ xs is mapping }}"));
        assertEquals("True False True True False True", eval("{{ s is iterable }} {{ 1 is iterable }}"
                + " {{ x is iterable }} {{ d is sequence }} {{ none is sequence }} {{ range is callable }}"));
    }

    @Test
    void valueTestsTakeTheirArgumentWithOrWithoutParentheses() {
        assertEquals("True True True True False True", eval("{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }}"
                + " {{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne(2) }}"));
        assertEquals("True True True False True True True True True False True True True True",
                eval("{{ 1 is lt 2 }} {{ 2 is le 2 }} {{ 3 is gt 2 }} {{ 3 is ge 4 }} {{ 'a' is in 'abc' }}"
                        + " {{ none is sameas none }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ true is true }}"
                        + " {{ 0 is false }} {{ false is false }} {{ 'upper' is filter }} {{ 'odd' is test }}"
                        + " {{ s is not none }}"));
    }

    @Test
    void isBindsTighterThanArithmeticAndNot() {
        assertEquals("True False", eval("{{ not x is defined }} {{ not s is defined }}"));
    }
}
