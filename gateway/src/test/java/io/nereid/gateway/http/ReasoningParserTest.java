package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Splitting thought from answer: the same however the stream is cut. */
class ReasoningParserTest {

    private static String run(ReasoningParser.Format f, String text, int step) {
        ReasoningParser p = new ReasoningParser(f);
        StringBuilder r = new StringBuilder();
        StringBuilder c = new StringBuilder();
        for (int i = 0; i < text.length(); i += step) {
            ReasoningParser.Piece piece = p.push(text.substring(i, Math.min(text.length(), i + step)));
            r.append(piece.reasoning());
            c.append(piece.content());
        }
        ReasoningParser.Piece last = p.finish();
        r.append(last.reasoning());
        c.append(last.content());
        assertEquals(p.content(), c.toString());
        return p.reasoning() + "|" + r + "|" + c;
    }

    @Test
    void deepseekStartsInTheThought() {
        for (int step = 1; step < 9; step++) {
            assertEquals("Let me see </thin.|Let me see </thin.|{\"a\": 1}",
                    run(ReasoningParser.Format.DEEPSEEK_R1, "Let me see </thin.</think>\n\n{\"a\": 1}", step));
            assertEquals("\nhm|\nhm|ok", run(ReasoningParser.Format.DEEPSEEK_R1, "<think>\nhm</think>ok", step));
            assertEquals("still thinking|still thinking|", run(ReasoningParser.Format.DEEPSEEK_R1, "still thinking", step));
        }
    }

    @Test
    void qwen3ThinksOnlyWhenTheOutputOpensAThought() {
        for (int step = 1; step < 9; step++) {
            assertEquals("\nplan\n|\nplan\n|answer <think>", run(ReasoningParser.Format.QWEN3, "<think>\nplan\n</think>\n\nanswer <think>", step));
            assertEquals("null||no thought", run(ReasoningParser.Format.QWEN3, "no thought", step));
            assertEquals("null||<thin", run(ReasoningParser.Format.QWEN3, "<thin", step));
        }
    }
}
