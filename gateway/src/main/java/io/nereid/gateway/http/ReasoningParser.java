package io.nereid.gateway.http;

/**
 * Splits one choice's text into its thought and its answer as it streams (vLLM's reasoning
 * parsers): {@code deepseek_r1} starts in the thought (the template opened it; a leading
 * {@code <think>} is dropped) and everything up to {@code </think>} is reasoning; {@code qwen3}
 * has a thought only when the output starts with {@code <think>}. A possible start of a marker is
 * held back until it is decided. Context only; one per choice.
 */
final class ReasoningParser {

    /** The models' thought syntax, by vLLM's {@code --reasoning-parser} names. */
    enum Format {
        DEEPSEEK_R1("deepseek_r1", true), QWEN3("qwen3", false);

        final String parserName;
        final boolean startsInThought;

        Format(String parserName, boolean startsInThought) {
            this.parserName = parserName;
            this.startsInThought = startsInThought;
        }

        static Format named(String name) {
            for (Format f : values()) {
                if (f.parserName.equals(name)) {
                    return f;
                }
            }
            return null;
        }
    }

    /** What one push produced. */
    record Piece(String reasoning, String content) {
    }

    private static final String START = "<think>";
    private static final String END = "</think>";

    private enum State { OPENING, THOUGHT, AFTER, ANSWER }

    private final StringBuilder pending = new StringBuilder();
    private final StringBuilder reasoning = new StringBuilder();
    private final StringBuilder content = new StringBuilder();
    private State state;
    private final boolean startsInThought;

    ReasoningParser(Format format) {
        this.startsInThought = format.startsInThought;
        this.state = State.OPENING;
    }

    Piece push(String text) {
        pending.append(text);
        StringBuilder r = new StringBuilder();
        StringBuilder c = new StringBuilder();
        boolean progress = true;
        while (progress && !pending.isEmpty()) {
            progress = switch (state) {
                case OPENING -> opening();
                case THOUGHT -> thought(r);
                case AFTER -> after();
                case ANSWER -> {
                    c.append(pending);
                    pending.setLength(0);
                    yield false;
                }
            };
        }
        reasoning.append(r);
        content.append(c);
        return new Piece(r.toString(), c.toString());
    }

    /** The end of the choice: what is still held back goes where it was heading. */
    Piece finish() {
        String rest = pending.toString();
        pending.setLength(0);
        if (state == State.THOUGHT || (state == State.OPENING && startsInThought)) {
            reasoning.append(rest);
            return new Piece(rest, "");
        }
        content.append(rest);
        return new Piece("", rest);
    }

    /** All the reasoning so far, or null when the output has no thought. */
    String reasoning() {
        return sawThought || (state == State.OPENING && startsInThought) ? reasoning.toString() : null;
    }

    /** The answer so far. */
    String content() {
        return content.toString();
    }

    private boolean sawThought;

    /** The output's start: a {@code <think>} opens the thought (qwen3) or is dropped (deepseek_r1). */
    private boolean opening() {
        String p = pending.toString();
        String trimmed = p.stripLeading();
        if (START.startsWith(trimmed) && trimmed.length() < START.length()) {
            return false;   // could still become <think>
        }
        if (trimmed.startsWith(START)) {
            pending.setLength(0);
            pending.append(trimmed.substring(START.length()));
            state = State.THOUGHT;
            sawThought = true;
            return true;
        }
        state = startsInThought ? State.THOUGHT : State.ANSWER;
        sawThought = startsInThought;
        return true;
    }

    private boolean thought(StringBuilder r) {
        int at = pending.indexOf(END);
        if (at >= 0) {
            r.append(pending, 0, at);
            pending.delete(0, at + END.length());
            state = State.AFTER;
            return true;
        }
        int keep = ToolCallParser.partialMarker(pending, END);
        r.append(pending, 0, pending.length() - keep);
        pending.delete(0, pending.length() - keep);
        return false;
    }

    /** Right after {@code </think>}: the newlines before the answer are dropped. */
    private boolean after() {
        int i = 0;
        while (i < pending.length() && (pending.charAt(i) == '\n' || pending.charAt(i) == ' ')) {
            i++;
        }
        pending.delete(0, i);
        if (pending.isEmpty()) {
            return false;
        }
        state = State.ANSWER;
        return true;
    }
}
