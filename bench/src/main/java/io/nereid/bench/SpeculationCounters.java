package io.nereid.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's speculative-decoding counters (vLLM's {@code vllm:spec_decode_*_total} on
 * {@code /metrics}), read before and after a load level so that the report can give that level's
 * acceptance rate. Absent when the server does not speculate (it then exports none). Immutable.
 *
 * @param drafts      decode steps that carried drafts
 * @param draftTokens draft tokens verified
 * @param accepted    of those, accepted
 */
record SpeculationCounters(double drafts, double draftTokens, double accepted) {

    /** The counters at {@code baseUrl}, or empty when the server exports none or cannot be read. */
    static Optional<SpeculationCounters> scrape(String baseUrl, String apiKey) {
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + "/metrics")).timeout(Duration.ofSeconds(10));
            if (apiKey != null && !apiKey.isEmpty()) {
                b.header("Authorization", "Bearer " + apiKey);
            }
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? parse(r.body()) : Optional.empty();
        } catch (java.io.IOException | IllegalArgumentException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The counters in a Prometheus text exposition, or empty without them. */
    static Optional<SpeculationCounters> parse(String metrics) {
        Double drafts = value(metrics, "vllm:spec_decode_num_drafts_total");
        Double tokens = value(metrics, "vllm:spec_decode_num_draft_tokens_total");
        Double accepted = value(metrics, "vllm:spec_decode_num_accepted_tokens_total");
        return drafts == null || tokens == null || accepted == null ? Optional.empty()
                : Optional.of(new SpeculationCounters(drafts, tokens, accepted));
    }

    private static Double value(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*})? ([-+0-9.eE]+)$").matcher(metrics);
        return m.find() ? Double.valueOf(m.group(1)) : null;
    }

    /** What happened between {@code before} and this snapshot. */
    SpeculationCounters since(SpeculationCounters before) {
        return new SpeculationCounters(drafts - before.drafts, draftTokens - before.draftTokens, accepted - before.accepted);
    }

    /** Accepted ÷ proposed draft tokens, NaN when none were proposed. */
    double acceptanceRate() {
        return draftTokens == 0 ? Double.NaN : accepted / draftTokens;
    }

    /** One console line. */
    String describe() {
        return String.format("speculative decoding: %.0f of %.0f draft tokens accepted (acceptance rate %.3f) in %.0f"
                + " drafting steps", accepted, draftTokens, acceptanceRate(), drafts);
    }

    /** The level's figures as JSON. */
    String json() {
        return String.format(java.util.Locale.ROOT, "{\"drafts\":%.0f,\"draft_tokens\":%.0f,\"accepted_tokens\":%.0f,"
                + "\"acceptance_rate\":%s}%n", drafts, draftTokens, accepted,
                Double.isNaN(acceptanceRate()) ? "null" : Double.toString(acceptanceRate()));
    }
}
