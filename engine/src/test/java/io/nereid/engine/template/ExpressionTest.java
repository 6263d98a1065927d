package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Expression syntax and Python operator semantics; expectations checked against Python Jinja2 3.1.6. */
class ExpressionTest {

    @Test
    void arithmeticFollowsJinjaPrecedenceIncludingLeftAssociativePower() {
        assertEquals("7 9 64 4 4 9 64", eval("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}"
                + " {{ 7 - 2 - 1 }} {{ 10 // 3 * 3 }} {{ 2 * 3 ~ 4 }}"));
    }

    @Test
    void concatBindsTighterThanPlus() {
        TemplateRenderException e = assertThrows(TemplateRenderException.class, () -> eval("{{ 1 + 2 ~ 3 }}"));
        assertEquals("TypeError: unsupported operand type(s) for +: 'int' and 'str'", e.reason());
    }

    @Test
    void divisionAndModuloBehaveLikePython() {
        assertEquals("3 -4 2 -2 3.0 3.5 2.0 2.5 2 0.5 0.5 1.4142135623730951",
                eval("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ 7 / 2 }} {{ 6 / 3 }}"
                        + " {{ 1 + 1.5 }} {{ true + 1 }} {{ -7.5 % 2 }} {{ 2 ** -1 }} {{ 2 ** 0.5 }}"));
    }

    @Test
    void sequencesConcatenateAndRepeat() {
        assertEquals("abab xx [1, 1] [1, 2] (1, 2) ab |",
                eval("{{ 'ab' * 2 }} {{ 2 * 'x' }} {{ [1] * 2 }} {{ [1] + [2] }} {{ (1,) + (2,) }} {{ 'a' + 'b' }}"
                        + " {{ 'x' * 0 }}|"));
    }

    @Test
    void andOrReturnOperandsAndShortCircuit() {
        assertEquals("a [] True 0  v", eval("{{ 0 or 'a' }} {{ 1 and [] }} {{ not none }} {{ none or 0 }}"
                + " {{ '' and x }} {{ 'v' or x.y.z }}"));
    }

    @Test
    void conditionalExpressionWithoutElseIsUndefined() {
        assertEquals("y c [] False", eval("{{ 'x' if 1 > 2 else 'y' }} {{ 'a' if false else 'b' if false else 'c' }}"
                + " [{{ 'x' if false }}] {{ ('x' if false) is defined }}"));
    }

    @Test
    void comparisonsChainAndCompareAcrossNumericTypes() {
        assertEquals("True False True True True False True", eval("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}"
                + " {{ 1 == 1.0 == true }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ (1,) == [1] }} {{ 1 != 2 }}"));
    }

    @Test
    void membershipWorksOnStringsListsTuplesAndDictKeys() {
        assertEquals("True True True True True True", eval("{{ 'b' in 'abc' }} {{ 'z' not in 'abc' }}"
                + " {{ 1 in [1, 2] }} {{ 'a' in {'a': 1} }} {{ 1.0 in [1] }} {{ 2 not in (1,) }}"));
    }

    @Test
    void subscriptsAcceptNegativeIndicesAttributesAndDottedIntegers() {
        assertEquals("1 3 False e o 1 1 2 🦙", eval("{{ xs[0] }} {{ xs[-1] }} {{ xs[5] is defined }} {{ s[1] }}"
                + " {{ s[-1] }} {{ d.a }} {{ d['a'] }} {{ xs.1 }} {{ u[-1] }}"));
    }

    @Test
    void slicesFollowPythonIncludingStepsAndAstralCharacters() {
        assertEquals("[2, 3] [1, 2] [3, 2, 1] [1, 3] ell olleh llo fd 🦙 本日 éfaC []",
                eval("{{ xs[1:] }} {{ xs[:-1] }} {{ xs[::-1] }} {{ xs[::2] }} {{ s[1:4] }} {{ s[::-1] }} {{ s[-3:] }}"
                        + " {{ 'abcdef'[-1:-5:-2] }} {{ u[::-1] }} {{ xs[5:] }}"));
    }

    @Test
    void stringLiteralsDecodePythonEscapes() {
        assertEquals("a\tb|it's|say \"hi\"|Aé🦙|abc|•|\\q|A",
                eval("{{ 'a\\tb' }}|{{ 'it\\'s' }}|{{ \"say \\\"hi\\\"\" }}|{{ '\\x41\\u00e9\\U0001F999' }}"
                        + "|{{ 'a' 'b' \"c\" }}|{{ '\\N{BULLET}' }}|{{ '\\q' }}|{{ '\\101' }}"));
    }

    @Test
    void numberLiteralsSupportPrefixesUnderscoresAndExponents() {
        assertEquals("31 15 5 1000 1000.0 0.01 2.5 True None None",
                eval("{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1e3 }} {{ 1E-2 }} {{ 2.5 }} {{ True }}"
                        + " {{ none }} {{ None }}"));
    }

    @Test
    void literalsOfEveryContainerKind() {
        assertEquals("[1, 'a', None, True, 1.5] {'k': \"it's\", 'n': [1, {'x': None}]} (1,) () (1, 'b') {1: 2, None: 3}",
                eval("{{ [1, 'a', none, true, 1.5] }} {{ {'k': \"it's\", 'n': [1, {'x': none}]} }} {{ (1,) }} {{ () }}"
                        + " {{ (1, 'b') }} {{ {1: 2, none: 3} }}"));
        assertEquals("(1, 2)", eval("{{ 1, 2 }}"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '#', quoteCharacter = '`', value = {
        "{{ 'a' + 1 }}          # TypeError: can only concatenate str (not \"int\") to str",
        "{{ none + 'a' }}       # TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'",
        "{{ -'a' }}             # TypeError: bad operand type for unary -: 'str'",
        "{{ -xs|length }}       # TypeError: bad operand type for unary -: 'list'",
        "{{ 1 / 0 }}            # ZeroDivisionError: division by zero",
        "{{ 5 % 0 }}            # ZeroDivisionError: integer modulo by zero",
        "{{ 1 < 'a' }}          # TypeError: '<' not supported between instances of 'int' and 'str'",
        "{{ 'a' in none }}      # TypeError: argument of type 'NoneType' is not iterable",
        "{{ 1 in 'abc' }}       # TypeError: 'in <string>' requires string as left operand, not int",
        "{{ xs() }}             # TypeError: 'list' object is not callable",
        "{{ 2 ** 64 }}          # OverflowError: integer result does not fit in 64 bits",
    })
    void operatorTypeErrorsReadLikePython(String source, String reason) {
        TemplateRenderException e = assertThrows(TemplateRenderException.class, () -> eval(source.strip()));
        assertEquals(reason.strip(), e.reason());
    }
}
