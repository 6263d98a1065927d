package io.nereid.engine.api;

/**
 * Token counts and timings of one choice, delivered with its terminal event.
 *
 * @param promptTokens     tokens in the prompt
 * @param completionTokens tokens generated for this choice (the stop token included)
 * @param cachedTokens     prompt tokens whose K/V came from the prefix cache
 * @param queueNanos       submit → first scheduled
 * @param firstTokenNanos  submit → first output token (0 when none was produced)
 * @param totalNanos       submit → finish
 */
public record Usage(int promptTokens, int completionTokens, int cachedTokens, long queueNanos, long firstTokenNanos,
        long totalNanos) {
}
