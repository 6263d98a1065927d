package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.render;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Typed errors: syntax errors at compile time with a line, render errors naming template and line. */
class ErrorReportingTest {

    private static TemplateSyntaxException syntaxError(String source) {
        return assertThrows(TemplateSyntaxException.class, () -> ChatTemplate.compile(source, "my-model"));
    }

    @Test
    void unclosedBlockReportsTheEndOfTheTemplateAndWhatWasExpected() {
        TemplateSyntaxException e = syntaxError("line1\nline2\n{% if x %}\nline4");
        assertEquals(4, e.line());
        assertEquals("my-model", e.templateName());
        assertEquals("Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or"
                + " 'endif'. The innermost block that needs to be closed is 'if'.", e.reason());
        assertEquals("template 'my-model', line 4: " + e.reason(), e.getMessage());
    }

    @Test
    void unknownTagReportsItsLine() {
        TemplateSyntaxException e = syntaxError("a\n{% foo %}");
        assertEquals(2, e.line());
        assertEquals("Encountered unknown tag 'foo'.", e.reason());
    }

    @Test
    void mismatchedEndTagNamesTheInnermostOpenBlock() {
        TemplateSyntaxException e = syntaxError("a\n{% for x in xs %}\n{% endif %}");
        assertEquals(3, e.line());
        assertEquals("Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endfor' or 'else'."
                + " The innermost block that needs to be closed is 'for'.", e.reason());
    }

    @Test
    void unclosedExpressionTagReportsWhereItOpened() {
        TemplateSyntaxException e = syntaxError("a\nb\n{{ x");
        assertEquals(3, e.line());
    }

    @Test
    void otherSyntaxErrors() {
        assertEquals("Missing end of comment tag", syntaxError("{# open").reason());
        assertEquals("Missing end of raw directive", syntaxError("{% raw %}x").reason());
        assertEquals("'break' outside of a loop", syntaxError("{% break %}").reason());
        assertEquals("unexpected '}', expected ')'", syntaxError("{{ (1, 2 }}").reason());
        assertEquals("No test named 'nosuch'.", syntaxError("{{ 1 is nosuch }}").reason());
        assertEquals("tag 'include' is not supported in chat templates", syntaxError("{% include 'x' %}").reason());
        assertEquals("expected token 'end of print statement', got 'a'", syntaxError("{{ x.1a }}").reason());
    }

    @Test
    void renderErrorsNameTemplateAndLine() {
        ChatTemplate t = ChatTemplate.compile("ok\n{% for m in messages %}\n{{ m.content + 1 }}\n{% endfor %}", "tpl");
        TemplateRenderException e = assertThrows(TemplateRenderException.class,
                () -> t.render(ChatRequestContext.of(TemplateTestSupport.conversation("user", "hi"), false)));
        assertEquals("tpl", e.templateName());
        assertEquals(3, e.line());
        assertEquals("TypeError: can only concatenate str (not \"int\") to str", e.reason());
        assertEquals("template 'tpl', line 3: TypeError: can only concatenate str (not \"int\") to str", e.getMessage());
    }

    @Test
    void errorsInsideMacrosReportTheLineInsideTheMacro() {
        TemplateRenderException e = assertThrows(TemplateRenderException.class,
                () -> render("{% macro m() %}\n\n{{ 1 / 0 }}{% endmacro %}\n{{ m() }}"));
        assertEquals(3, e.line());
    }

    @Test
    void raiseExceptionCarriesExactlyTheTemplatesMessage() {
        TemplateRaisedException e = assertThrows(TemplateRaisedException.class,
                () -> render("\n{{ raise_exception('Conversation roles must alternate: ' ~ n) }}", Map.of("n", 2L)));
        assertEquals("Conversation roles must alternate: 2", e.getMessage());
        assertEquals(2, e.line());
        assertEquals("test", e.templateName());
    }

    @Test
    void everyTemplateErrorIsATemplateException() {
        assertInstanceOf(TemplateException.class, syntaxError("{% if %}"));
        assertTrue(RuntimeException.class.isAssignableFrom(TemplateException.class));
    }

    @Test
    void runawayRecursionIsARenderErrorNotAStackOverflow() {
        TemplateRenderException e = assertThrows(TemplateRenderException.class,
                () -> render("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}"));
        assertTrue(e.reason().startsWith("RecursionError"), e.reason());
    }
}
