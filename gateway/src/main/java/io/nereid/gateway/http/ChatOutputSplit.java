package io.nereid.gateway.http;

import io.nereid.engine.api.ToolCallFormat;
import io.nereid.openapi.ChatCompletion;
import java.util.ArrayList;
import java.util.List;

/**
 * One chat choice's text taken apart as it arrives: the thought first ({@link ReasoningParser},
 * with {@code --reasoning-parser}), then the tool calls in the answer ({@link ToolCallParser},
 * when the request has tools); what is left is the content. Streamed responses push each new
 * piece, whole ones push the full text once. Context only; one per choice.
 */
final class ChatOutputSplit {

    /** What one push produced (each part may be empty). */
    record Piece(String reasoning, String content, List<ChatCompletion.ToolCallDelta> calls) {
        boolean isEmpty() {
            return reasoning.isEmpty() && content.isEmpty() && calls.isEmpty();
        }
    }

    private final ReasoningParser reasoning;   // null without a reasoning parser
    private final ToolCallParser toolCalls;    // null without tools

    private final boolean functionCall;       // the deprecated functions: the call is a function_call

    /**
     * Null when there is nothing to split: no reasoning parser and no tool format. {@code
     * functionCall}: the request sent the deprecated {@code functions} (its call is reported as a
     * {@code function_call}).
     */
    static ChatOutputSplit of(ReasoningParser.Format reasoning, ToolCallFormat tools, boolean functionCall) {
        return reasoning == null && tools == null ? null : new ChatOutputSplit(reasoning, tools, functionCall);
    }

    private ChatOutputSplit(ReasoningParser.Format reasoning, ToolCallFormat tools, boolean functionCall) {
        this.reasoning = reasoning == null ? null : new ReasoningParser(reasoning);
        this.toolCalls = tools == null ? null : new ToolCallParser(tools);
        this.functionCall = functionCall;
    }

    /** Whether the call is reported in the deprecated {@code function_call} shape. */
    boolean functionCall() {
        return functionCall;
    }

    /** The next text; {@code last}: the choice ended with it (what was held back comes out). */
    Piece push(String text, boolean last) {
        String thought = "";
        String content = text;
        if (reasoning != null) {
            ReasoningParser.Piece r = reasoning.push(text);
            thought = r.reasoning();
            content = r.content();
            if (last) {
                ReasoningParser.Piece rest = reasoning.finish();
                thought += rest.reasoning();
                content += rest.content();
            }
        }
        List<ChatCompletion.ToolCallDelta> calls = new ArrayList<>();
        if (toolCalls != null) {
            ToolCallParser.Piece p = toolCalls.push(content);
            content = p.content();
            calls.addAll(p.calls());
            if (last) {
                ToolCallParser.Piece rest = toolCalls.finish();
                content += rest.content();
                calls.addAll(rest.calls());
            }
        }
        return new Piece(thought, content, calls);
    }

    /** The thought so far, or null when the output has none (or there is no reasoning parser). */
    String reasoning() {
        return reasoning == null ? null : reasoning.reasoning();
    }

    /** The calls read so far. */
    List<ChatCompletion.ToolCall> calls() {
        return toolCalls == null ? List.of() : toolCalls.calls();
    }

    /** The content so far: the answer before any call. */
    String content() {
        return toolCalls != null ? toolCalls.content() : reasoning != null ? reasoning.content() : "";
    }

    /**
     * The finish reason as OpenAI reports it: {@code tool_calls} for a choice that stopped after
     * calling tools ({@code function_call} for the deprecated functions).
     */
    String finishReason(String engineReason) {
        return "stop".equals(engineReason) && !calls().isEmpty() ? functionCall ? "function_call" : "tool_calls"
                : engineReason;
    }
}
