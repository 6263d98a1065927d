package io.nereid.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * One successful request's metrics, defined as GenAI-Perf's LLM profile parser defines them.
 * Only events with content count as responses (role-only, usage-only and {@code [DONE]} events are
 * dropped first), so:
 * <pre>
 *   TTFT            = first content event − send
 *   time to 2nd tok = second content event − first content event     (needs ≥ 2 content events)
 *   request latency = last content event − send
 *   ITL             = round((latency − TTFT) / (OSL − 1))            (needs ≥ 2 events and OSL > 1)
 *   TPS per user    = 1 / ITL in seconds
 * </pre>
 * All times are in nanoseconds. OSL comes from the server's usage; without it, the number of
 * content events. ISL is the recorded request's (usage, or the server's /tokenize), -1 when unknown.
 *
 * @param ttftNs         NaN-free: always present for a request with content
 * @param ttstNs         -1 when fewer than two content events arrived
 * @param itlNs          -1 when not defined (one event, or OSL ≤ 1)
 * @param tpsPerUser     tokens/s/user, NaN when ITL is not defined
 * @param lastResponseNs {@code nanoTime} of the last content event
 */
public record RequestMetrics(int id, long sendNs, long ttftNs, long ttstNs, long latencyNs, long itlNs,
                             double tpsPerUser, int inputTokens, int outputTokens, boolean usageReported,
                             long lastResponseNs, List<Long> contentArrivalsNs) {

    /** The metrics of {@code r}, or null when it failed or never produced content (GenAI-Perf skips those). */
    public static RequestMetrics of(RecordedRequest r) {
        if (!r.ok()) {
            return null;
        }
        List<Long> arrivals = new ArrayList<>();
        for (Chunk c : r.chunks()) {
            if (c.hasContent()) {
                arrivals.add(c.arrivalNs());
            }
        }
        if (arrivals.isEmpty()) {
            return null;
        }
        long first = arrivals.getFirst();
        long last = arrivals.getLast();
        long ttft = first - r.sendNs();
        long ttst = arrivals.size() > 1 ? arrivals.get(1) - first : -1;
        long latency = last - r.sendNs();
        boolean usage = r.outputTokens() >= 0;
        int osl = usage ? r.outputTokens() : arrivals.size();
        long itl = -1;
        double tps = Double.NaN;
        if (arrivals.size() > 1 && osl > 1) {
            itl = Math.round((double) (latency - ttft) / (osl - 1));
            tps = itl > 0 ? 1e9 / itl : Double.NaN;
        }
        return new RequestMetrics(r.id(), r.sendNs(), ttft, ttst, latency, itl, tps, r.inputTokens(), osl, usage,
                last, arrivals);
    }
}
