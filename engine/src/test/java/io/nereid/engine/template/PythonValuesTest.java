package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code str()}/{@code repr()} of values as Python prints them; checked against CPython 3.11. */
class PythonValuesTest {

    @Test
    void scalarsPrintLikePythonStr() {
        assertEquals("None True False 42 -3 str [] {}",
                eval("{{ none }} {{ true }} {{ false }} {{ 42 }} {{ -3 }} {{ 'str' }} {{ [] }} {{ {} }}"));
    }

    @Test
    void floatsPrintAsShortestReprWithPythonsExponentThresholds() {
        assertEquals("1.0 1e+16 1000000000000000.0 0.0001 1e-05 0.3333333333333333 0.30000000000000004 1e+100 -0.0"
                        + " 123456789.125 1.5e-07",
                eval("{{ 1.0 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 1/3 }} {{ 0.1 + 0.2 }} {{ 1e100 }}"
                        + " {{ -0.0 }} {{ 123456789.125 }} {{ 1.5e-7 }}"));
        assertEquals("5e-324", PyValues.floatRepr(Double.MIN_VALUE));
        assertEquals("nan inf -inf", PyValues.floatRepr(Double.NaN) + " " + PyValues.floatRepr(1 / 0.0) + " "
                + PyValues.floatRepr(-1 / 0.0));
    }

    @Test
    void stringReprPicksQuotesAndEscapesNonPrintables() {
        assertEquals("['é', 'a\\nb', '\\x00', '\\u200b', 'a\\\\b', \"it's\", 'say \"x\"', 'both \\' and \"']",
                eval("{{ ['é', 'a\\nb', '\\x00', '\\u200b', 'a\\\\b', \"it's\", 'say \"x\"', \"both ' and \\\"\"] }}"));
    }

    @Test
    void javaIntegersAndFloatsFromCallersCountAsPythonNumbers() {
        assertEquals("3 2.5 True", TemplateTestSupport.render("{{ a + b }} {{ c }} {{ a == 1 }}",
                TemplateTestSupport.vars("a", 1, "b", (short) 2, "c", 2.5f)));
        assertEquals("[1, 2]", TemplateTestSupport.render("{{ l }}", TemplateTestSupport.vars("l", List.of(1, 2))));
    }
}
