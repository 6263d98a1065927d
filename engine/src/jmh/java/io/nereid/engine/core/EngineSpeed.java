package io.nereid.engine.core;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.KvStorage;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Serving-engine figures on a generated model (see {@code bench/models/speed.sh} for the files):
 * aggregate output tok/s at several concurrencies (ratio to one request), time to first token of a
 * request whose 1,000-token prefix is cached vs not, and TTFT / inter-token latency of short
 * requests while a long prompt is prefilled, with and without chunked prefill.
 *
 * <p>Usage: {@code EngineSpeed MODEL.gguf THREADS LONG_PROMPT MAX_TOKENS CONCURRENCIES}, e.g.
 * {@code EngineSpeed /tmp/nereid-models/llama-110m-Q8_0.gguf 2 4000 32 1,4,16,32}.
 */
public final class EngineSpeed {

    private EngineSpeed() {
    }

    public static void main(String[] args) throws Exception {
        Path model = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int longPrompt = Integer.parseInt(args[2]);
        int maxTokens = Integer.parseInt(args[3]);
        int[] concurrencies = Arrays.stream(args[4].split(",")).mapToInt(Integer::parseInt).toArray();
        int context = longPrompt + 1100;
        try (CpuModel m = CpuModel.open(model); ComputePool pool = new ComputePool(new ComputePool.Config(threads))) {
            RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
            System.out.println(model.getFileName() + ", " + threads + " threads, output " + maxTokens + " tokens per request");
            double base = 0;
            for (int c : concurrencies) {
                try (InflightEngine e = engine(m, runner, context, true)) {
                    run(e, c, 64, maxTokens, 0); // warm-up
                    long t0 = System.nanoTime();
                    run(e, c, 64, maxTokens, 1);
                    double tps = (double) c * maxTokens / ((System.nanoTime() - t0) / 1e9);
                    base = base == 0 ? tps : base;
                    System.out.printf("concurrency %2d: %8.1f output tok/s  (x%.2f of 1)%n", c, tps, tps / base);
                }
            }
            try (InflightEngine e = engine(m, runner, context, true)) {
                int[] prefix = tokens(7, 1000);
                long uncached = ttft(e, concat(prefix, tokens(8, 24)));
                long cached = ttft(e, concat(prefix, tokens(9, 24)));
                System.out.printf("TTFT, 1,024-token prompt: uncached %.1f ms, 1,000-token prefix cached %.1f ms (x%.2f)%n",
                        uncached / 1e6, cached / 1e6, (double) cached / uncached);
            }
            for (boolean chunked : new boolean[] {true, false}) {
                try (InflightEngine e = engine(m, runner, context, chunked)) {
                    interference(e, longPrompt, chunked);
                }
            }
        }
    }

    private static InflightEngine engine(CpuModel m, RangeRunner runner, int context, boolean chunked) {
        int blocks = 64 * (context / 16 + 1);
        // At most ~1 GB of F16 K/V: layers x kvDim x 16 slots x (K, V) x 2 bytes per block.
        blocks = Math.min(blocks, (int) (1_000_000_000L / ((long) m.config().layers() * m.config().kvDim() * 16 * 2 * 2)) + 1);
        EngineConfig c = new EngineConfig(64, 512, 4096, context, blocks, 16, 0.01, true, chunked);
        return new InflightEngine(c, m.backend(Kernels.provider(), runner, io.nereid.engine.backend.KvPrecision.F16, blocks,
                16, context), m.tokenizer());
    }

    private static void run(InflightEngine e, int concurrency, int prompt, int maxTokens, long salt) throws InterruptedException {
        List<Timing> all = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            Timing t = new Timing();
            e.submit(request("r" + salt + "-" + i, tokens(salt * 1000 + i, prompt), maxTokens), t);
            all.add(t);
        }
        for (Timing t : all) {
            t.await();
        }
    }

    private static long ttft(InflightEngine e, int[] prompt) throws InterruptedException {
        Timing t = new Timing();
        e.submit(request("ttft", prompt, 1), t);
        t.await();
        return t.usage.firstTokenNanos();
    }

    /**
     * Four short requests are decoding when a long prompt arrives: their inter-token latency while
     * it is prefilled (p50/p99), and the TTFT of a fifth short request arriving just after it.
     */
    private static void interference(InflightEngine e, int longPrompt, boolean chunked) throws InterruptedException {
        List<Timing> small = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Timing t = new Timing();
            e.submit(request("short-" + i, tokens(100 + i, 32), 48), t);
            small.add(t);
        }
        for (Timing t : small) {
            t.awaitTokens(2);
        }
        long arrival = System.nanoTime();
        Timing big = new Timing();
        e.submit(request("long", tokens(42, longPrompt), 1), big);
        Timing late = new Timing();
        e.submit(request("late", tokens(200, 32), 4), late);
        List<Long> itls = new ArrayList<>();
        for (Timing t : small) {
            t.await();
            for (int i = 1; i < t.arrivals.size(); i++) {
                if (t.arrivals.get(i) > arrival) {
                    itls.add(t.arrivals.get(i) - t.arrivals.get(i - 1));
                }
            }
        }
        big.await();
        late.await();
        System.out.printf("%s prefill of a %d-token prompt: decoding requests ITL p50 %.1f ms p99 %.1f ms (%d gaps);"
                        + " long prompt TTFT %.1f s; a short request arriving after it TTFT %.1f s%n",
                chunked ? "chunked  " : "unchunked", longPrompt, pct(itls, 50) / 1e6, pct(itls, 99) / 1e6, itls.size(),
                big.usage.firstTokenNanos() / 1e9, late.usage.firstTokenNanos() / 1e9);
    }

    private static double pct(List<Long> values, int p) {
        long[] v = values.stream().mapToLong(Long::longValue).sorted().toArray();
        return v[Math.min(v.length - 1, (int) Math.ceil(p / 100.0 * v.length) - 1)];
    }

    private static GenerationRequest request(String id, int[] prompt, int maxTokens) {
        return GenerationRequest.builder(id, prompt).maxTokens(maxTokens).ignoreEos(true).build();
    }

    private static int[] tokens(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = 300 + r.nextInt(30_000);
        }
        return t;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Records token arrival times; runs on the engine thread. */
    private static final class Timing implements TokenSink {
        final List<Long> arrivals = new ArrayList<>();
        final CountDownLatch done = new CountDownLatch(1);
        volatile Usage usage;

        @Override
        public synchronized void onDelta(int choice, String text, int[] ids, List<TokenLogprob> logprobs) {
            arrivals.add(System.nanoTime());
        }

        @Override
        public void onFinish(int choice, FinishReason reason, Object stopReason, Usage u) {
            usage = u;
            done.countDown();
        }

        @Override
        public void onError(int choice, EngineException error) {
            error.printStackTrace();
            done.countDown();
        }

        void awaitTokens(int n) throws InterruptedException {
            long until = System.nanoTime() + 600_000_000_000L;
            while (arrivalsSize() < n && done.getCount() > 0 && System.nanoTime() < until) {
                Thread.sleep(1);
            }
        }

        synchronized int arrivalsSize() {
            return arrivals.size();
        }

        void await() throws InterruptedException {
            if (!done.await(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("request did not finish");
            }
        }
    }
}
