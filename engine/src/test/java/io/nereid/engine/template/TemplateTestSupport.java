package io.nereid.engine.template;

import io.nereid.engine.json.Json;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Shared helpers: compile and render a snippet with given variables and a fixed clock. */
final class TemplateTestSupport {

    /** Friday 26 July 2024, 13:05:09 (UTC). */
    static final Clock CLOCK = Clock.fixed(Instant.parse("2024-07-26T13:05:09Z"), ZoneOffset.UTC);

    /** Variables most tests use, as a JSON reader delivers them (Long ints, ordered maps, nulls). */
    static final Map<String, Object> COMMON = Json.parseObject("""
            {"xs": [1, 2, 3], "d": {"a": 1, "b": null}, "s": "hello", "n": null, "u": "Café 日本 🦙",
             "users": [{"name": "bob", "age": 30}, {"name": "Al", "age": 25}, {"name": "cy", "age": 30}]}
            """);

    private TemplateTestSupport() {
    }

    static String render(String source, Map<String, Object> vars) {
        return ChatTemplate.compile(source, "test").render(vars, CLOCK);
    }

    static String render(String source) {
        return render(source, Map.of());
    }

    /** Renders with {@link #COMMON}. */
    static String eval(String source) {
        return render(source, COMMON);
    }

    /** Alternating names and values; values may be null. */
    static Map<String, Object> vars(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static Map<String, Object> message(String role, Object content) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("role", role);
        m.put("content", content);
        return m;
    }

    /** Alternating roles and contents. */
    static List<Map<String, Object>> conversation(String... roleContent) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < roleContent.length; i += 2) {
            out.add(message(roleContent[i], roleContent[i + 1]));
        }
        return out;
    }
}
