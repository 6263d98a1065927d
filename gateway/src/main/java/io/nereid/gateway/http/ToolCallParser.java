package io.nereid.gateway.http;

import io.nereid.engine.api.ToolCallFormat;
import io.nereid.openapi.ChatCompletion;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads tool calls back out of one choice's text as it streams (vLLM's tool parsers): content up to
 * the format's opening of a call (a possible beginning of it held back until it is decided), then for
 * each call its name (a delta with index, id, type and name once the name is complete) and its
 * arguments (delta fragments, the JSON text as the model writes it, up to the end of the arguments
 * value). The text is grammar-constrained, so a call is well formed unless the output was cut off
 * (max_tokens); a call cut off before its name is dropped, one cut off in its arguments keeps what
 * arrived. Context only; one per choice.
 */
final class ToolCallParser {

    /** What one push produced: content to stream and tool-call pieces. */
    record Piece(String content, List<ChatCompletion.ToolCallDelta> calls) {
    }

    private enum State { CONTENT, HEAD, ARGS, TAIL }

    private final ToolCallFormat format;
    private final Pattern head;
    private final StringBuilder pending = new StringBuilder();   // text not yet decided
    private State state = State.CONTENT;
    private final StringBuilder content = new StringBuilder();
    private final List<ChatCompletion.ToolCall> calls = new ArrayList<>();
    private String id;
    private String name;
    private final StringBuilder arguments = new StringBuilder();
    private int depth;
    private boolean inString;
    private boolean escaped;
    private boolean started;

    ToolCallParser(ToolCallFormat format) {
        this.format = format;
        this.head = Pattern.compile("^\\s*\\{\\s*\"name\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\s*,\\s*\"" + format.argumentsKey()
                + "\"\\s*:\\s*");
    }

    /** The next text of the choice. */
    Piece push(String text) {
        pending.append(text);
        StringBuilder out = new StringBuilder();
        List<ChatCompletion.ToolCallDelta> deltas = new ArrayList<>();
        boolean progress = true;
        while (progress) {
            progress = switch (state) {
                case CONTENT -> content(out);
                case HEAD -> head(deltas);
                case ARGS -> args(deltas);
                case TAIL -> tail();
            };
        }
        content.append(out);
        return new Piece(out.toString(), deltas);
    }

    /** The end of the choice: content still held back (a partial opening that never completed). */
    Piece finish() {
        if (state == State.CONTENT && !pending.isEmpty()) {
            String rest = pending.toString();
            pending.setLength(0);
            content.append(rest);
            return new Piece(rest, List.of());
        }
        if (state == State.ARGS && name != null) {
            calls.add(call());   // cut off inside its arguments: what arrived
        }
        pending.setLength(0);
        return new Piece("", List.of());
    }

    /** The calls read so far (all of them after {@link #finish}). */
    List<ChatCompletion.ToolCall> calls() {
        return calls;
    }

    /** The text before the first call (all of it when there was none). */
    String content() {
        return content.toString();
    }

    private boolean content(StringBuilder out) {
        String open = format.opening();
        if (open.isEmpty()) {
            // bare JSON calls: the output is a call when it starts with '{'
            String p = pending.toString();
            String trimmed = p.stripLeading();
            if (trimmed.isEmpty() && content.isEmpty() && out.isEmpty()) {
                return false;   // only whitespace so far: undecided
            }
            if (content.isEmpty() && out.isEmpty() && trimmed.startsWith("{")) {
                pending.setLength(0);
                pending.append(trimmed);
                state = State.HEAD;
                return true;
            }
            out.append(p);
            pending.setLength(0);
            return false;
        }
        int at = pending.indexOf(open);
        if (at >= 0) {
            out.append(pending, 0, at);
            pending.delete(0, at + open.length());
            state = State.HEAD;
            return true;
        }
        // hold back the longest suffix that could begin the opening
        int keep = partialMarker(pending, open);
        out.append(pending, 0, pending.length() - keep);
        pending.delete(0, pending.length() - keep);
        return false;
    }

    private boolean head(List<ChatCompletion.ToolCallDelta> deltas) {
        Matcher m = head.matcher(pending);
        if (!m.find()) {
            return false;
        }
        name = m.group(1);
        id = callId(format);
        pending.delete(0, m.end());
        arguments.setLength(0);
        depth = 0;
        inString = false;
        escaped = false;
        started = false;
        deltas.add(new ChatCompletion.ToolCallDelta(calls.size(), id, "function", new ChatCompletion.FunctionDelta(name, "")));
        state = State.ARGS;
        return true;
    }

    private boolean args(List<ChatCompletion.ToolCallDelta> deltas) {
        int i = 0;
        boolean done = false;
        for (; i < pending.length() && !done; i++) {
            char c = pending.charAt(i);
            if (!started && Character.isWhitespace(c)) {
                continue;
            }
            started = true;
            if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            }
            if (depth == 0 && !inString) {
                done = true;
            }
        }
        String piece = !started ? "" : arguments.isEmpty() ? pending.substring(0, i).stripLeading() : pending.substring(0, i);
        pending.delete(0, i);
        if (!piece.isEmpty()) {
            arguments.append(piece);
            deltas.add(new ChatCompletion.ToolCallDelta(calls.size(), null, null, new ChatCompletion.FunctionDelta(null, piece)));
        }
        if (done) {
            calls.add(call());
            name = null;
            state = State.TAIL;
            return true;
        }
        return false;
    }

    /** After a call's arguments: its closing, then another call (what comes between two) or the end. */
    private boolean tail() {
        String next = format.between();
        int at = pending.indexOf(next);
        if (at < 0) {
            return false;
        }
        pending.delete(0, at + next.length());
        state = State.HEAD;
        return true;
    }

    /**
     * A new call id: {@code call_} and 24 hex digits (OpenAI's shape), or for Mistral 9 letters and
     * digits, the only ids its chat templates take back (vLLM's {@code MistralToolCall.generate_random_id}).
     */
    static String callId(ToolCallFormat format) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        if (format == ToolCallFormat.MISTRAL) {
            String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
            StringBuilder b = new StringBuilder(9);
            for (int i = 0; i < 9; i++) {
                b.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            return b.toString();
        }
        return "call_" + HexFormat.of().toHexDigits(r.nextLong()) + HexFormat.of().toHexDigits(r.nextInt());
    }

    /** How many characters at the end of {@code text} could be the beginning of {@code marker} (held back in a stream). */
    static int partialMarker(CharSequence text, String marker) {
        for (int k = Math.min(marker.length() - 1, text.length()); k > 0; k--) {
            if (marker.startsWith(text.subSequence(text.length() - k, text.length()).toString())) {
                return k;
            }
        }
        return 0;
    }

    private ChatCompletion.ToolCall call() {
        return new ChatCompletion.ToolCall(id, "function", new ChatCompletion.FunctionCall(name, arguments.toString()));
    }
}
