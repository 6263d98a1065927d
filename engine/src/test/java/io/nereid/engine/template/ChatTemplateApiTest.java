package io.nereid.engine.template;

import static io.nereid.engine.template.TemplateTestSupport.conversation;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nereid.engine.Fixtures;
import io.nereid.engine.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The public API: how the context becomes template variables, immutability of inputs, thread safety. */
class ChatTemplateApiTest {

    private static final String SHOW = "{{ messages|length }}|{{ add_generation_prompt }}|{{ tools is defined }}|"
            + "{{ bos_token is defined }}|{{ eos_token is defined }}|{{ enable_thinking }}";

    @Test
    void nullToolsAndTokensAreUndefinedAndExtraContextKeysAreVariables() {
        ChatTemplate t = ChatTemplate.compile(SHOW, "show");
        assertEquals("1|True|False|False|False|", t.render(ChatRequestContext.of(conversation("user", "hi"), true)));
        assertEquals("1|False|True|True|True|False", t.render(new ChatRequestContext(conversation("user", "hi"),
                List.of(), false, "<s>", "</s>", Map.of("enable_thinking", false), TemplateTestSupport.CLOCK)));
    }

    @Test
    void namedFieldsTakePrecedenceOverExtraContext() {
        ChatTemplate t = ChatTemplate.compile("{{ bos_token }}{{ messages|length }}", "t");
        assertEquals("<s>1", t.render(new ChatRequestContext(conversation("user", "hi"), null, false, "<s>", null,
                Map.of("bos_token", "X", "messages", List.of()), null)));
    }

    @Test
    void contextDefaultsExtraContextAndClockAndRequiresMessages() {
        ChatRequestContext ctx = new ChatRequestContext(List.of(), null, false, null, null, null, null);
        assertEquals(Map.of(), ctx.extraContext());
        assertNotNull(ctx.clock());
        assertThrows(NullPointerException.class, () -> ChatRequestContext.of(null, true));
    }

    @Test
    void contentPartsAndNullContentPassThroughUnchanged() {
        List<Map<String, Object>> messages = List.of(Json.parseObject(
                "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"a\"}, {\"type\": \"text\", \"text\": \"b\"}]}"),
                Json.parseObject("{\"role\": \"assistant\", \"content\": null}"));
        ChatTemplate t = ChatTemplate.compile("{% for m in messages %}{% if m.content is string %}{{ m.content }}"
                + "{% elif m.content is none %}<none>{% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %};"
                + "{% endfor %}", "parts");
        assertEquals("ab;<none>;", t.render(ChatRequestContext.of(messages, false)));
    }

    @Test
    void oneCompiledTemplateRendersConcurrently() throws Exception {
        List<Map<String, Object>> lines = Fixtures.jsonLines("templates/renders.jsonl").stream()
                .filter(l -> l.get("template").equals("Qwen-Qwen3.jinja") && l.get("error") == null).toList();
        ChatTemplate qwen3 = ChatTemplate.compile(Fixtures.read("templates/Qwen-Qwen3.jinja"), "qwen3");
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                Map<String, Object> line = lines.get(i % lines.size());
                results.add(pool.submit(() -> line.get("expected").equals(
                        qwen3.render(RendersFixtureTest.context(line)))));
            }
            for (Future<Boolean> r : results) {
                assertEquals(true, r.get());
            }
        }
    }

    @Test
    void toStringNamesTheTemplate() {
        assertEquals("ChatTemplate[x]", ChatTemplate.compile("", "x").toString());
        assertEquals("", ChatTemplate.compile("", "x").render(ChatRequestContext.of(List.of(), false)));
    }
}
