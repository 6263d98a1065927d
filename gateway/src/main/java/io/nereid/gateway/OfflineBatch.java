package io.nereid.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.LoadedModel;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/nereid generate --batch FILE.jsonl}: MLPerf's "Offline" scenario — every prompt is
 * submitted to the batching engine at once; prints one JSON line per prompt (in input order) and
 * the total output throughput.
 */
final class OfflineBatch {

    private static final ObjectMapper JSON = new ObjectMapper();

    private OfflineBatch() {
    }

    static int run(LoadedModel model, SamplingParams params, int defaultMaxTokens, Map<String, String> opt,
            PrintStream out, PrintStream err) {
        List<String> lines;
        Path file = Path.of(opt.get("--batch"));
        try {
            lines = Files.readAllLines(file).stream().filter(l -> !l.isBlank()).toList();
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
        Result[] results = new Result[lines.size()];
        CountDownLatch done = new CountDownLatch(lines.size());
        long t0 = System.nanoTime();
        for (int i = 0; i < lines.size(); i++) {
            JsonNode line;
            try {
                line = JSON.readTree(lines.get(i));
            } catch (IOException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + e.getMessage(), e);
            }
            if (line == null || !line.path("prompt").isTextual()) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": \"prompt\" must be a string");
            }
            int max = line.path("max_tokens").canConvertToInt() && line.path("max_tokens").isIntegralNumber()
                    ? line.get("max_tokens").asInt() : defaultMaxTokens;
            results[i] = new Result(done);
            model.engine().submit(GenerationRequest.builder("batch-" + i, model.tokenizer().encode(line.get("prompt").asText(),
                    true, true)).sampling(params).maxTokens(max).ignoreEos(opt.containsKey("--ignore-eos")).build(),
                    results[i]);
        }
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long outputTokens = 0;
        for (int i = 0; i < results.length; i++) {
            Result r = results[i];
            outputTokens += r.usage == null ? 0 : r.usage.completionTokens();
            out.println("{\"index\":" + i + ",\"text\":" + quote(r.text.toString()) + ",\"finish_reason\":"
                    + (r.reason == null ? "null" : quote(r.reason.name().toLowerCase(java.util.Locale.ROOT)))
                    + ",\"prompt_tokens\":" + (r.usage == null ? 0 : r.usage.promptTokens())
                    + ",\"completion_tokens\":" + (r.usage == null ? 0 : r.usage.completionTokens()) + "}");
        }
        err.printf("offline: %d prompts, %d output tokens in %.2f s: %.1f output tok/s%n", results.length, outputTokens, secs,
                outputTokens / secs);
        return 0;
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One prompt's output; written on the engine thread, read after the latch. */
    private static final class Result implements TokenSink {
        private final CountDownLatch done;
        final StringBuilder text = new StringBuilder();
        volatile FinishReason reason;
        volatile Usage usage;

        Result(CountDownLatch done) {
            this.done = done;
        }

        @Override
        public void onDelta(int choice, String t, int[] ids, List<TokenLogprob> logprobs) {
            text.append(t);
        }

        @Override
        public void onFinish(int choice, FinishReason r, Object stopReason, Usage u) {
            reason = r;
            usage = u;
            done.countDown();
        }

        @Override
        public void onError(int choice, EngineException error) {
            text.append("[error: ").append(error.getMessage()).append(']');
            done.countDown();
        }
    }
}
