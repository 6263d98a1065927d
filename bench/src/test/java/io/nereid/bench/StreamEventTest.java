package io.nereid.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StreamEventTest {
    @Test
    void chatDeltaCompletionTextUsageErrorAndDoneAreRecognised() {
        assertEquals("Hi", StreamEvent.parse("{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}").content());
        assertEquals("", StreamEvent.parse("{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}").content());
        assertEquals("yo", StreamEvent.parse("{\"choices\":[{\"text\":\"yo\"}]}").content());
        assertEquals(" yo", StreamEvent.parse("{\"model_name\":\"m\",\"model_version\":\"1\",\"text_output\":\" yo\"}").content());
        assertEquals("boom", StreamEvent.parse("{\"error\":\"boom\"}").error());
        StreamEvent usage = StreamEvent.parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9}}");
        assertEquals(5, usage.promptTokens());
        assertEquals(9, usage.completionTokens());
        assertNull(usage.error());
        assertEquals("overloaded", StreamEvent.parse("{\"error\":{\"message\":\"overloaded\",\"code\":503}}").error());
        assertTrue(StreamEvent.parse("[DONE]").done());
        assertTrue(StreamEvent.parse("{not json").error().startsWith("unparsable"));
    }
}
