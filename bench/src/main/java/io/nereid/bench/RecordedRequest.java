package io.nereid.bench;

import java.util.List;

/**
 * Everything the load generator saw of one request: the raw material every metric is computed from.
 *
 * @param id           position in the run (0-based, warm-up excluded)
 * @param payload      the JSON body sent
 * @param sendNs       {@link System#nanoTime()} just before the request was written
 * @param chunks       SSE events in arrival order
 * @param endNs        {@code nanoTime} when the stream ended (the last byte, {@code [DONE]} or the
 *                     failure); {@code -1} when the request never returned (timed out)
 * @param status       HTTP status; 0 when no response head arrived
 * @param error        null when the request succeeded; otherwise the reason, e.g. {@code "timeout"}
 *                     or the error event's message
 * @param inputTokens  prompt tokens from the server's usage (or /tokenize, see {@link RunMetrics#inputTokenSource});
 *                     -1 when not known
 * @param outputTokens completion tokens from the server's usage; -1 when not reported
 */
public record RecordedRequest(int id, String payload, long sendNs, List<Chunk> chunks, long endNs, int status,
                              String error, int inputTokens, int outputTokens) {
    public RecordedRequest {
        chunks = List.copyOf(chunks);
    }

    /** This request with its input token count from another source (the server's /tokenize). */
    public RecordedRequest withInputTokens(int tokens) {
        return new RecordedRequest(id, payload, sendNs, chunks, endNs, status, error, tokens, outputTokens);
    }

    public boolean ok() {
        return error == null && status == 200;
    }

    /** The key errors are counted under: the HTTP status, or the failure's kind for a 200 that broke. */
    public String errorKey() {
        if (ok()) {
            return null;
        }
        if (endNs < 0) {
            return "timeout";
        }
        return status == 200 ? "stream_error" : status == 0 ? "connection_error" : Integer.toString(status);
    }
}
