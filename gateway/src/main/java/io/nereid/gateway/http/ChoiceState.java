package io.nereid.gateway.http;

import io.nereid.engine.api.TokenLogprob;
import io.nereid.openapi.Logprobs;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one choice of an OpenAI response has received so far, and how much of it a stream has sent:
 * its text (the echo first, when there is one), its tokens' logprobs, the characters those tokens
 * cover (for legacy {@code text_offset}), its prompt logprobs and echoed prompt's logprobs, and its
 * finish. Context only.
 */
final class ChoiceState {

    private final StringBuilder text;
    private final List<TokenLogprob> logprobs = new ArrayList<>();
    private int textSent;        // chars of text already streamed
    private int logprobsSent;    // entries of logprobs already streamed
    int logprobChars;            // chars covered by the tokens whose logprobs were formatted (legacy text_offset)
    List<Map<String, Logprobs.PromptToken>> promptLogprobs;   // vLLM's prompt_logprobs, or null
    Logprobs.Completion echoLogprobs;                          // the echoed prompt's, until sent
    String finishReason;
    Object stopReason;
    ChatOutputSplit split;      // chat with tools or --reasoning-parser: takes the text apart; else null

    /** @param echo text the choice starts with ("" for none) */
    ChoiceState(String echo) {
        this.text = new StringBuilder(echo);
    }

    void append(String delta, List<TokenLogprob> lps) {
        text.append(delta);
        logprobs.addAll(lps);
    }

    String text() {
        return text.toString();
    }

    List<TokenLogprob> logprobs() {
        return logprobs;
    }

    boolean finished() {
        return finishReason != null;
    }

    /** Everything so far counts as sent (the echo, written before any event). */
    void markSent() {
        textSent = text.length();
        logprobsSent = logprobs.size();
    }

    /** Whether text or logprobs arrived that a stream has not sent yet. */
    boolean hasUnsent() {
        return textSent < text.length() || logprobsSent < logprobs.size();
    }

    /** The text not sent yet; marks it sent. */
    String takeUnsentText() {
        String out = text.substring(textSent);
        textSent = text.length();
        return out;
    }

    /** The logprobs not sent yet; marks them sent. */
    List<TokenLogprob> takeUnsentLogprobs() {
        List<TokenLogprob> out = List.copyOf(logprobs.subList(logprobsSent, logprobs.size()));
        logprobsSent = logprobs.size();
        return out;
    }
}
