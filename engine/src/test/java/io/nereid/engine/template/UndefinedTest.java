package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.eval;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Jinja2's default Undefined: harmless when printed, tested or iterated; an error when dereferenced. */
class UndefinedTest {

    @Test
    void undefinedPrintsEmptyIsFalsyHasNoItemsAndEqualsOnlyUndefined() {
        assertEquals("[] False True 0  True False [] a d [] False False",
                eval("[{{ x }}] {{ x is defined }} {{ not x }} {{ x|length }} {% for i in x %}never{% endfor %}"
                        + " {{ x == x }} {{ 'a' in x }} [{{ x|string }}] {{ x ~ 'a' }} {{ x|default('d') }}"
                        + " {{ x|list }} {{ d.c is defined }} {{ xs[5] is defined }}"));
    }

    @Test
    void attributeOfNoneIsUndefinedNotAnError() {
        assertEquals("", eval("{{ d.get('zz').x }}"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '#', quoteCharacter = '`', value = {
        "{{ x.y }}         # 'x' is undefined",
        "{{ x['y'] }}      # 'x' is undefined",
        "{{ d.c.e }}       # 'dict object' has no attribute 'c'",
        "{{ xs[5].a }}     # list object has no element 5",
        "{{ n.x.y }}       # 'None' has no attribute 'x'",
        "{{ x + 1 }}       # 'x' is undefined",
        "{{ x < 1 }}       # 'x' is undefined",
        "{{ x() }}         # 'x' is undefined",
        "{{ s.nosuch() }}  # 'str object' has no attribute 'nosuch'",
    })
    void dereferencingUndefinedRaisesWithJinjasMessage(String source, String message) {
        TemplateRenderException e = assertThrows(TemplateRenderException.class, () -> eval(source.strip()));
        assertEquals("UndefinedError: " + message.strip(), e.reason());
    }
}
