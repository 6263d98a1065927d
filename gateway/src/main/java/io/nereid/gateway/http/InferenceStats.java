package io.nereid.gateway.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-model inference statistics as Triton's statistics extension reports them: requests that
 * succeeded and failed with their total durations, time in the engine's queue, and inference
 * (prompt) and execution (engine step) counts. Thread-safe; counters only grow.
 */
final class InferenceStats {

    private final AtomicLong successCount = new AtomicLong();
    private final AtomicLong successNanos = new AtomicLong();
    private final AtomicLong failCount = new AtomicLong();
    private final AtomicLong failNanos = new AtomicLong();
    private final AtomicLong queueCount = new AtomicLong();
    private final AtomicLong queueNanos = new AtomicLong();
    private final AtomicLong inferences = new AtomicLong();
    private final AtomicLong lastInferenceMillis = new AtomicLong();

    /** A request answered: {@code prompts} inferences, {@code nanos} from arrival to its end. */
    void succeeded(int prompts, long nanos) {
        successCount.incrementAndGet();
        successNanos.addAndGet(nanos);
        inferences.addAndGet(prompts);
        lastInferenceMillis.set(System.currentTimeMillis());
    }

    /** A request refused or failed after {@code nanos}. */
    void failed(long nanos) {
        failCount.incrementAndGet();
        failNanos.addAndGet(nanos);
    }

    /** One prompt waited {@code nanos} in the engine's queue before it was first scheduled. */
    void queued(long nanos) {
        queueCount.incrementAndGet();
        queueNanos.addAndGet(nanos);
    }

    long successes() {
        return successCount.get();
    }

    long failures() {
        return failCount.get();
    }

    long inferenceCount() {
        return inferences.get();
    }

    long successNanos() {
        return successNanos.get();
    }

    long queueNanos() {
        return queueNanos.get();
    }

    long queueCount() {
        return queueCount.get();
    }

    long failNanos() {
        return failNanos.get();
    }

    /** ms since the epoch of the last success, 0 before one. */
    long lastInference() {
        return lastInferenceMillis.get();
    }

    /** Triton's {@code ModelStatistics} as JSON; {@code executions}: engine steps so far. */
    Map<String, Object> json(String model, String version, long executions) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", model);
        m.put("version", version);
        m.put("last_inference", lastInferenceMillis.get());
        m.put("inference_count", inferences.get());
        m.put("execution_count", executions);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("success", Map.of("count", successCount.get(), "ns", successNanos.get()));
        s.put("fail", Map.of("count", failCount.get(), "ns", failNanos.get()));
        s.put("queue", Map.of("count", queueCount.get(), "ns", queueNanos.get()));
        m.put("inference_stats", s);
        return m;
    }
}
