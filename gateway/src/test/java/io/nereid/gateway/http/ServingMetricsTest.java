package io.nereid.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.Usage;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServingMetricsTest {

    private static final long MS = 1_000_000L;

    private static List<String> lines(ServingMetrics m) {
        return m.render(new EngineStats(3, 2, 0.25, 40, 16, 1, 99, 8, 120, 57), io.nereid.engine.api.EngineHealth.RUNNING, 16, 128).lines().toList();
    }

    private static void has(List<String> lines, String line) {
        assertTrue(lines.contains(line), () -> "missing '" + line + "' in\n" + String.join("\n", lines));
    }

    @Test
    void engineGaugesAndCountersCarryVllmsNamesTypesAndModelLabel() {
        List<String> l = lines(new ServingMetrics("m\"x"));
        has(l, "# TYPE vllm:num_requests_running gauge");
        has(l, "vllm:num_requests_running{model_name=\"m\\\"x\"} 2.0");
        has(l, "vllm:num_requests_waiting{model_name=\"m\\\"x\"} 3.0");
        has(l, "vllm:kv_cache_usage_perc{model_name=\"m\\\"x\"} 0.25");
        has(l, "# TYPE vllm:prefix_cache_queries_total counter");
        has(l, "vllm:prefix_cache_queries_total{model_name=\"m\\\"x\"} 40.0");
        has(l, "vllm:prefix_cache_hits_total{model_name=\"m\\\"x\"} 16.0");
        has(l, "vllm:num_preemptions_total{model_name=\"m\\\"x\"} 1.0");
        has(l, "vllm:prompt_tokens_total{model_name=\"m\\\"x\"} 120.0");
        has(l, "# TYPE vllm:generation_tokens_total counter");
        has(l, "vllm:generation_tokens_total{model_name=\"m\\\"x\"} 57.0");
        has(l, "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"128\",model_name=\"m\\\"x\"} 1.0");
    }

    @Test
    void finishedRequestsFillTheHistogramsAndTheSuccessCounterByFinishedReason() {
        ServingMetrics m = new ServingMetrics("m");
        // queued 10 ms, first token at 30 ms, done at 2 s.
        m.finished(FinishReason.STOP, new Usage(5, 9, 0, 10 * MS, 30 * MS, 2000 * MS));
        m.finished(FinishReason.LENGTH, new Usage(5, 9, 0, 10 * MS, 0, 20 * MS));
        m.tokenGap(40 * MS, 2);   // two tokens, 20 ms apart
        List<String> l = lines(m);
        has(l, "# TYPE vllm:request_success_total counter");
        has(l, "vllm:request_success_total{finished_reason=\"stop\",model_name=\"m\"} 1.0");
        has(l, "vllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} 1.0");
        has(l, "vllm:request_success_total{finished_reason=\"abort\",model_name=\"m\"} 0.0");
        has(l, "# TYPE vllm:time_to_first_token_seconds histogram");
        has(l, "vllm:time_to_first_token_seconds_bucket{le=\"0.02\",model_name=\"m\"} 0.0");
        has(l, "vllm:time_to_first_token_seconds_bucket{le=\"0.04\",model_name=\"m\"} 1.0");
        has(l, "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 1.0");
        has(l, "vllm:time_to_first_token_seconds_count{model_name=\"m\"} 1.0");
        has(l, "vllm:inter_token_latency_seconds_bucket{le=\"0.01\",model_name=\"m\"} 0.0");
        has(l, "vllm:inter_token_latency_seconds_bucket{le=\"0.025\",model_name=\"m\"} 2.0");
        has(l, "vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 2.0");
        has(l, "vllm:e2e_request_latency_seconds_bucket{le=\"0.3\",model_name=\"m\"} 1.0");
        has(l, "vllm:request_queue_time_seconds_bucket{le=\"0.3\",model_name=\"m\"} 2.0");
        has(l, "# TYPE vllm:request_prefill_time_seconds histogram");
        has(l, "vllm:request_decode_time_seconds_count{model_name=\"m\"} 1.0");
    }

    @Test
    void nereidOwnCountersComeThroughMicrometer() {
        ServingMetrics m = new ServingMetrics("m");
        m.clientDisconnected();
        m.admissionRejected("queue_full");
        List<String> l = lines(m);
        assertTrue(l.stream().anyMatch(s -> s.startsWith("nereid_client_disconnects_total{model_name=\"m\"} 1")), () -> String.join("\n", l));
        assertTrue(l.stream().anyMatch(s -> s.startsWith("nereid_admission_rejections_total{model_name=\"m\",reason=\"queue_full\"} 1")),
                () -> String.join("\n", l));
    }

    @Test
    void tritonsCountersForTheSameEventsLabelledByModelAndVersion() {
        ServingMetrics m = new ServingMetrics("m");
        m.finished(FinishReason.STOP, new Usage(5, 9, 0, 10 * MS, 30 * MS, 2000 * MS));
        m.finished(FinishReason.LENGTH, new Usage(5, 9, 0, 4 * MS, 6 * MS, 20 * MS));
        m.finished(FinishReason.CANCELLED, new Usage(5, 1, 0, 1 * MS, 2 * MS, 3 * MS));
        m.admissionRejected("queue_full");
        List<String> l = lines(m);
        has(l, "# TYPE nv_inference_request_success counter");
        has(l, "nv_inference_request_success{model=\"m\",version=\"1\"} 2.0");
        has(l, "nv_inference_request_failure{model=\"m\",version=\"1\"} 2.0");
        has(l, "nv_inference_count{model=\"m\",version=\"1\"} 2.0");
        has(l, "nv_inference_exec_count{model=\"m\",version=\"1\"} 99.0");
        has(l, "nv_inference_request_duration_us{model=\"m\",version=\"1\"} 2020000.0");
        has(l, "nv_inference_queue_duration_us{model=\"m\",version=\"1\"} 14000.0");
        has(l, "nv_inference_compute_infer_duration_us{model=\"m\",version=\"1\"} 2006000.0");
    }

    @Test
    void severalModelsPagesMergeIntoOnePageWithEachFamilyDescribedOnce() {
        ServingMetrics a = new ServingMetrics("a");
        ServingMetrics b = new ServingMetrics("b");
        b.admissionRejected("queue_full");   // a family only b has
        List<String> l = ServingMetrics.merge(List.of(String.join("\n", lines(a)), String.join("\n", lines(b))))
                .lines().toList();
        for (String family : List.of("vllm:num_requests_running", "vllm:time_to_first_token_seconds",
                "nv_inference_request_success", "nereid_admission_rejections_total")) {
            assertEquals(1, l.stream().filter(x -> x.startsWith("# HELP " + family + " ")).count(), family);
            assertEquals(1, l.stream().filter(x -> x.startsWith("# TYPE " + family + " ")).count(), family);
        }
        int help = l.indexOf(l.stream().filter(x -> x.startsWith("# HELP vllm:num_requests_running ")).findFirst()
                .orElseThrow());
        assertEquals(List.of("# TYPE vllm:num_requests_running gauge", "vllm:num_requests_running{model_name=\"a\"} 2.0",
                "vllm:num_requests_running{model_name=\"b\"} 2.0"), l.subList(help + 1, help + 4));
        has(l, "nv_inference_request_failure{model=\"a\",version=\"1\"} 0.0");
        has(l, "nv_inference_request_failure{model=\"b\",version=\"1\"} 1.0");
        assertTrue(l.stream().anyMatch(x -> x.startsWith("nereid_admission_rejections_total{model_name=\"b\"")));
        java.util.function.Function<List<String>, Long> samples = p -> p.stream().filter(x -> !x.startsWith("#")).count();
        assertEquals(samples.apply(lines(a)) + samples.apply(lines(b)), samples.apply(l), "every sample of both pages");
    }
}
