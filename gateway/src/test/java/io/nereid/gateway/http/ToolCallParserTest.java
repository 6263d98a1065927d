package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.api.ToolCallFormat;
import io.nereid.openapi.ChatCompletion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading calls back: the same calls and content however the text is split into stream pieces. */
class ToolCallParserTest {

    private static String describe(ToolCallParser p, StringBuilder streamed, List<String> argumentPieces) {
        StringBuilder b = new StringBuilder("content=").append(p.content().strip()).append(" streamed=").append(streamed.toString().strip());
        for (ChatCompletion.ToolCall c : p.calls()) {
            b.append(" | ").append(c.function().name()).append(' ').append(c.function().arguments());
        }
        b.append(" | pieces=").append(String.join("", argumentPieces));
        return b.toString();
    }

    private static String run(ToolCallFormat f, String text, int step) {
        ToolCallParser p = new ToolCallParser(f);
        StringBuilder streamed = new StringBuilder();
        List<String> pieces = new ArrayList<>();
        List<ToolCallParser.Piece> all = new ArrayList<>();
        for (int i = 0; i < text.length(); i += step) {
            all.add(p.push(text.substring(i, Math.min(text.length(), i + step))));
        }
        all.add(p.finish());
        for (ToolCallParser.Piece piece : all) {
            streamed.append(piece.content());
            for (ChatCompletion.ToolCallDelta d : piece.calls()) {
                pieces.add(d.id() != null ? "[" + d.index() + ":" + d.function().name() + "]" : d.function().arguments());
            }
        }
        return describe(p, streamed, pieces);
    }

    @Test
    void hermesCallsAndContentAreTheSameWhateverTheSplit() {
        String text = "Let me look. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa}ris\\\"\", \"n\": [1, {\"a\": 2}]}}\n"
                + "</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
        String whole = run(ToolCallFormat.HERMES, text, text.length());
        assertEquals("content=Let me look. streamed=Let me look. | get_weather {\"city\": \"Pa}ris\\\"\", \"n\": [1, {\"a\": 2}]}"
                + " | now {} | pieces=[0:get_weather]{\"city\": \"Pa}ris\\\"\", \"n\": [1, {\"a\": 2}]}[1:now]{}", whole);
        for (int step = 1; step < 12; step++) {
            assertEquals(whole, run(ToolCallFormat.HERMES, text, step), "pieces of " + step);
        }
    }

    @Test
    void textThatOnlyLooksLikeAnOpeningIsContent() {
        assertEquals("content=a <tool_ b streamed=a <tool_ b | pieces=", run(ToolCallFormat.HERMES, "a <tool_ b", 1));
        assertEquals("content=ends with <tool_c streamed=ends with <tool_c | pieces=", run(ToolCallFormat.HERMES, "ends with <tool_c", 3));
    }

    @Test
    void llamaJsonCallsStartTheOutput() {
        String text = "{\"name\": \"f\", \"parameters\": {\"x\": 1}}; {\"name\": \"g\", \"parameters\": {}}";
        for (int step = 1; step < 8; step++) {
            assertEquals("content= streamed= | f {\"x\": 1} | g {} | pieces=[0:f]{\"x\": 1}[1:g]{}",
                    run(ToolCallFormat.LLAMA3_JSON, text, step));
        }
        assertEquals("content=Hello {not a call} streamed=Hello {not a call} | pieces=",
                run(ToolCallFormat.LLAMA3_JSON, "Hello {not a call}", 2));
    }

    @Test
    void mistralCallsAreOneBlockAfterTheControlToken() {
        String text = "Checking.[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a], {b\"}}, "
                + "{\"name\": \"now\", \"arguments\": {}}]";
        String whole = run(ToolCallFormat.MISTRAL, text, text.length());
        assertEquals("content=Checking. streamed=Checking. | get_weather {\"city\": \"a], {b\"} | now {} | pieces="
                + "[0:get_weather]{\"city\": \"a], {b\"}[1:now]{}", whole);
        for (int step = 1; step < 9; step++) {
            assertEquals(whole, run(ToolCallFormat.MISTRAL, text, step), "pieces of " + step);
        }
        assertEquals("content=[TOOL streamed=[TOOL | pieces=", run(ToolCallFormat.MISTRAL, "[TOOL", 2), "a partial marker is content");
    }

    @Test
    void mistralCallIdsAreNineLettersOrDigits() {
        for (int i = 0; i < 50; i++) {
            String id = ToolCallParser.callId(ToolCallFormat.MISTRAL);
            assertEquals(true, id.matches("[A-Za-z0-9]{9}"), id);
            assertEquals(true, ToolCallParser.callId(ToolCallFormat.HERMES).matches("call_[0-9a-f]{24}"));
        }
    }
}
