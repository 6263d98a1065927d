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

    @Test
    void responsesApiEventsGiveTheirTextDeltasUsageAndEnd() {
        assertEquals("Hi", StreamEvent.parse("{\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\","
                + "\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\",\"sequence_number\":4}").content());
        StreamEvent created = StreamEvent.parse("{\"type\":\"response.created\",\"response\":{\"status\":"
                + "\"in_progress\"},\"sequence_number\":0}");
        assertEquals("", created.content());
        assertTrue(!created.done());
        StreamEvent end = StreamEvent.parse("{\"type\":\"response.incomplete\",\"response\":{\"usage\":{\"input_tokens\":7,"
                + "\"output_tokens\":3}},\"sequence_number\":9}");
        assertTrue(end.done());
        assertEquals(7, end.promptTokens());
        assertEquals(3, end.completionTokens());
        StreamEvent failed = StreamEvent.parse("{\"type\":\"response.failed\",\"response\":{\"error\":{\"message\":"
                + "\"generation failed\"}}}");
        assertEquals("generation failed", failed.error());
    }
}
