package io.nereid.engine.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {

    @Test
    void parsesEveryValueKindKeepingKeyOrder() {
        Map<String, Object> m = Json.parseObject(
                "{\"z\":1,\"a\":[true,false,null,-0.5,1e3,\"x\"],\"big\":12345678901234567890,\"o\":{}}");
        assertEquals(List.of("z", "a", "big", "o"), List.copyOf(m.keySet()));
        assertEquals(1L, m.get("z"));
        List<?> a = (List<?>) m.get("a");
        assertEquals(true, a.get(0));
        assertEquals(false, a.get(1));
        assertNull(a.get(2));
        assertEquals(-0.5, a.get(3));
        assertEquals(1000.0, a.get(4));
        assertEquals("x", a.get(5));
        assertEquals(1.2345678901234567e19, m.get("big"));
        assertTrue(((Map<?, ?>) m.get("o")).isEmpty());
    }

    @Test
    void decodesEscapesIncludingSurrogatePairs() {
        assertEquals("a\"b\\c/\b\f\n\r\t\u00e9\ud83e\udd99", Json.parse("\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\ud83e\\udd99\""));
        assertEquals("日本", Json.parse("\"日本\""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", "-", "\"abc", "\"\\x\"",
        "\"\\u12g4\"", "tru", "[1] 2", "{a:1}", "\"tab\there\""})
    void rejectsMalformedInputWithTheOffset(String text) {
        JsonException e = assertThrows(JsonException.class, () -> Json.parse(text));
        assertTrue(e.getMessage().startsWith("JSON at offset "), e.getMessage());
    }

    @Test
    void rejectsPathologicalNesting() {
        String deep = "[".repeat(10_000) + "]".repeat(10_000);
        assertThrows(JsonException.class, () -> Json.parse(deep));
    }
}
