package io.nereid.bench;

/**
 * One measured point of a sweep: the server configuration it ran against, the load level, and
 * its metrics and SLO verdict. Immutable.
 *
 * @param config  the server configuration's label, e.g. {@code max-num-seqs=8 max-num-batched-tokens=512};
 *                empty when the bench did not start the server
 * @param load    the load level's label, e.g. {@code concurrency 4}
 * @param slo     the verdict against {@code --ttft-slo}/{@code --tpot-slo}; null when no SLO was given
 */
public record SweepPoint(String config, String load, RunMetrics metrics, SloReport slo) {

    /** "config, load", or just the load when there is no server configuration. */
    public String label() {
        return config.isEmpty() ? load : config + ", " + load;
    }

    /** Output token throughput (tokens/s); NaN when nothing succeeded. */
    public double throughput() {
        return metrics.outputTokenThroughput();
    }

    /** p99 request latency (ms): the frontier's latency axis. */
    public double p99LatencyMs() {
        return metrics.latencyMs().p99();
    }

    /**
     * Whether the point may be named best: its SLOs are met (p99, no failed request, see
     * {@link SloReport}); without SLOs, at least one request succeeded and none failed.
     */
    public boolean eligible() {
        if (slo != null) {
            return slo.met();
        }
        return metrics.requestCount() > 0 && metrics.errorCount() == 0 && Double.isFinite(throughput());
    }
}
