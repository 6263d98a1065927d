package io.nereid.gateway;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.core.CpuBackend;
import io.nereid.engine.core.EngineConfig;
import io.nereid.engine.core.InflightEngine;
import io.nereid.engine.json.Json;
import io.nereid.engine.kernel.ComputePool;
import io.nereid.engine.kernel.Kernels;
import io.nereid.engine.model.CpuModel;
import io.nereid.engine.model.KvStorage;
import io.nereid.engine.model.RangeRunner;
import io.nereid.engine.sampling.SamplingParams;
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

    private OfflineBatch() {
    }

    static int run(CpuModel model, ComputePool pool, SamplingParams params, int defaultMaxTokens, Map<String, String> opt,
            PrintStream out, PrintStream err) {
        List<String> lines;
        Path file = Path.of(opt.get("--batch"));
        try {
            lines = Files.readAllLines(file).stream().filter(l -> !l.isBlank()).toList();
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
        int context = Integer.parseInt(opt.getOrDefault("--context", Integer.toString(model.config().contextLength())));
        int blocks = Integer.parseInt(opt.getOrDefault("--kv-blocks", Integer.toString(Math.max(64, 4 * (context / 16 + 1)))));
        EngineConfig config = new EngineConfig(64, 512, Math.max(1024, lines.size()), context, blocks, 16, 0.01, true, true);
        RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
        Result[] results = new Result[lines.size()];
        CountDownLatch done = new CountDownLatch(lines.size());
        long t0 = System.nanoTime();
        try (InflightEngine engine = new InflightEngine(config,
                new CpuBackend(model.forward(Kernels.provider(), runner, context), new KvStorage(model.config(), blocks, 16,
                        io.nereid.engine.model.KvPrecision.parse(opt.getOrDefault("--kv-type", "f16")))),
                model.tokenizer())) {
            for (int i = 0; i < lines.size(); i++) {
                Map<String, Object> line;
                try {
                    line = Json.parseObject(lines.get(i));
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + e.getMessage(), e);
                }
                if (!(line.get("prompt") instanceof String prompt)) {
                    throw new IllegalArgumentException(file + " line " + (i + 1) + ": \"prompt\" must be a string");
                }
                int max = line.get("max_tokens") instanceof Long l ? l.intValue() : defaultMaxTokens;
                results[i] = new Result(done);
                engine.submit(new GenerationRequest("batch-" + i, model.tokenizer().encode(prompt, true, true), params,
                        List.of(), new int[0], max, 0, opt.containsKey("--ignore-eos"), 1, false, 0, null), results[i]);
            }
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 1;
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long outputTokens = 0;
        for (int i = 0; i < results.length; i++) {
            Result r = results[i];
            outputTokens += r.usage == null ? 0 : r.usage.completionTokens();
            out.println("{\"index\":" + i + ",\"text\":" + Json.quote(r.text.toString()) + ",\"finish_reason\":"
                    + (r.reason == null ? "null" : Json.quote(r.reason.name().toLowerCase(java.util.Locale.ROOT)))
                    + ",\"prompt_tokens\":" + (r.usage == null ? 0 : r.usage.promptTokens())
                    + ",\"completion_tokens\":" + (r.usage == null ? 0 : r.usage.completionTokens()) + "}");
        }
        err.printf("offline: %d prompts, %d output tokens in %.2f s: %.1f output tok/s%n", results.length, outputTokens, secs,
                outputTokens / secs);
        return 0;
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
