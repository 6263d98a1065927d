package io.nereid.engine.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.Fixtures;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every render of {@code templates/renders.jsonl} (55 renders over 10 real templates, expected
 * output from @huggingface/jinja and Python Jinja2) reproduced byte for byte, with the context
 * built as the fixture README describes. Prints the pass count per template.
 */
class RendersFixtureTest {

    /** strftime_now's fixed date: 26 July 2024, 00:00:00. */
    static final Clock FIXTURE_CLOCK = Clock.fixed(Instant.parse("2024-07-26T00:00:00Z"), ZoneOffset.UTC);

    private static final Map<String, int[]> TALLY = new ConcurrentHashMap<>(); // template -> {passed, total}
    private static final Map<String, ChatTemplate> COMPILED = new ConcurrentHashMap<>();

    @TestFactory
    Stream<DynamicTest> everyFixtureRenderMatches() {
        List<Map<String, Object>> lines = Fixtures.jsonLines("templates/renders.jsonl");
        assertEquals(55, lines.size(), "renders.jsonl should hold 55 renders");
        return lines.stream().map(line -> DynamicTest.dynamicTest(line.get("template") + " / " + line.get("case"),
                () -> check(line)));
    }

    @SuppressWarnings("unchecked")
    static ChatRequestContext context(Map<String, Object> line) {
        return new ChatRequestContext(
                (List<Map<String, Object>>) line.get("messages"),
                (List<Map<String, Object>>) line.get("tools"),
                (Boolean) line.get("add_generation_prompt"),
                (String) line.get("bos_token"),
                (String) line.get("eos_token"),
                (Map<String, Object>) line.get("extra_context"),
                FIXTURE_CLOCK);
    }

    private static void check(Map<String, Object> line) {
        String file = (String) line.get("template");
        int[] tally = TALLY.computeIfAbsent(file, f -> new int[2]);
        synchronized (tally) {
            tally[1]++;
        }
        ChatTemplate template = COMPILED.computeIfAbsent(file,
                f -> ChatTemplate.compile(Fixtures.read("templates/" + f), f));
        ChatRequestContext ctx = context(line);
        String error = (String) line.get("error");
        if (error != null) {
            TemplateException e = assertThrows(TemplateException.class, () -> template.render(ctx));
            if (error.equals("System role not supported")) {
                assertInstanceOf(TemplateRaisedException.class, e);
                assertEquals("System role not supported", e.getMessage());
            } else {
                TemplateRenderException r = assertInstanceOf(TemplateRenderException.class, e);
                assertTrue(r.reason().startsWith("TypeError: argument of type 'NoneType' is not iterable"), r.reason());
                assertEquals(file, r.templateName());
            }
        } else {
            assertEquals(line.get("expected"), template.render(ctx));
        }
        synchronized (tally) {
            tally[0]++;
        }
    }

    @AfterAll
    static void printTally() {
        int passed = 0;
        int total = 0;
        StringBuilder sb = new StringBuilder("chat template fixture renders:\n");
        for (Map.Entry<String, int[]> e : new TreeMap<>(TALLY).entrySet()) {
            sb.append(String.format("  %-52s %d/%d%n", e.getKey(), e.getValue()[0], e.getValue()[1]));
            passed += e.getValue()[0];
            total += e.getValue()[1];
        }
        sb.append(String.format("  %-52s %d/%d", "total", passed, total));
        System.out.println(sb);
    }
}
