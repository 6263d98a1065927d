package io.nereid.bench;

/**
 * One SSE event as it arrived.
 *
 * @param arrivalNs {@link System#nanoTime()} when the event's line was read
 * @param data      the event's {@code data:} payload, verbatim (JSON, or {@code [DONE]})
 * @param content   generated text the event carries (empty for role-only, usage-only and
 *                  {@code [DONE]} events)
 */
public record Chunk(long arrivalNs, String data, String content) {
    public Chunk {
        if (data == null || content == null) {
            throw new IllegalArgumentException("chunk: data and content must not be null");
        }
    }

    public boolean hasContent() {
        return !content.isEmpty();
    }
}
