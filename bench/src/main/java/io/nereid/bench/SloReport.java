package io.nereid.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A run judged against its latency SLOs ({@code --ttft-slo}, {@code --tpot-slo}, in ms).
 * <ul>
 *   <li><b>Goodput</b>, as GenAI-Perf defines it: the completed requests that meet every given
 *       constraint, per second of the benchmark (the same duration as request throughput). A request
 *       meets the TTFT SLO when its TTFT ≤ the SLO, and the TPOT SLO when its time per output token
 *       ((e2e − TTFT) / (OSL − 1), GenAI-Perf's per-request inter-token latency) ≤ the SLO; a request
 *       with one output token has no TPOT and cannot miss that SLO. Failed requests are never good.</li>
 *   <li><b>SLOs met</b>, as MLPerf's server scenario checks them: the 99th percentile of TTFT and of
 *       TPOT over the successful requests within their SLOs, with at least one successful request and
 *       no failed one (a run with errors is not a valid result).</li>
 * </ul>
 * Immutable; pure.
 *
 * @param ttftSloMs     0 = not constrained
 * @param tpotSloMs     0 = not constrained
 * @param goodRequests  requests meeting every given SLO
 * @param goodput       goodRequests / duration (requests/s); 0 when nothing succeeded
 * @param ttftP99Ms     NaN without samples
 * @param tpotP99Ms     NaN without samples (e.g. every request produced one token)
 * @param reason        why the SLOs are not met; null when they are
 */
public record SloReport(double ttftSloMs, double tpotSloMs, int goodRequests, double goodput, double ttftP99Ms,
                        double tpotP99Ms, boolean ttftMet, boolean tpotMet, boolean met, String reason) {
    static final double PERCENTILE = 99;

    /** The report for {@code config}'s SLOs; null when it gives none. */
    public static SloReport of(RunMetrics m, BenchConfig config) {
        return config.hasSlo() ? of(m, config.ttftSloMs(), config.tpotSloMs()) : null;
    }

    public static SloReport of(RunMetrics m, double ttftSloMs, double tpotSloMs) {
        int good = 0;
        for (RequestMetrics r : m.requests()) {
            boolean ttftOk = ttftSloMs <= 0 || r.ttftNs() / 1e6 <= ttftSloMs;
            boolean tpotOk = tpotSloMs <= 0 || r.itlNs() < 0 || r.itlNs() / 1e6 <= tpotSloMs;
            if (ttftOk && tpotOk) {
                good++;
            }
        }
        double goodput = good == 0 || !(m.durationS() > 0) ? 0 : good / m.durationS();
        double ttftP99 = m.ttftMs().p99();
        double tpotP99 = m.itlMs().p99();
        boolean ttftMet = ttftSloMs <= 0 || (m.ttftMs().count() > 0 && ttftP99 <= ttftSloMs);
        boolean tpotMet = tpotSloMs <= 0 || m.itlMs().count() == 0 || tpotP99 <= tpotSloMs;
        String reason = null;
        if (m.requestCount() == 0) {
            reason = "no successful request";
        } else if (m.errorCount() > 0) {
            reason = m.errorCount() + " failed request(s)";
        } else if (!ttftMet && !tpotMet) {
            reason = "p99 TTFT and p99 TPOT over their SLOs";
        } else if (!ttftMet) {
            reason = "p99 TTFT over its SLO";
        } else if (!tpotMet) {
            reason = "p99 TPOT over its SLO";
        }
        return new SloReport(ttftSloMs, tpotSloMs, good, goodput, ttftP99, tpotP99, ttftMet, tpotMet,
                reason == null, reason);
    }

    /** The JSON object written under {@code "slo"} in profile_export_genai_perf.json. */
    public Map<String, Object> toJson() {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("percentile", PERCENTILE);
        j.put("ttft_slo_ms", ttftSloMs > 0 ? ttftSloMs : null);
        j.put("tpot_slo_ms", tpotSloMs > 0 ? tpotSloMs : null);
        j.put("ttft_p99_ms", Double.isNaN(ttftP99Ms) ? null : ttftP99Ms);
        j.put("tpot_p99_ms", Double.isNaN(tpotP99Ms) ? null : tpotP99Ms);
        j.put("ttft_met", ttftMet);
        j.put("tpot_met", tpotMet);
        j.put("good_request_count", goodRequests);
        j.put("met", met);
        j.put("reason", reason);
        return j;
    }
}
