package io.nereid.engine.core;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.KvCacheSpec;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.engine.tokenizer.Tokenizer;
import io.nereid.kvcache.BlockCopy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the engine thread costs a step when the forward pass costs nothing: a backend that answers every slice
 * instantly with the token ids it was asked to choose (as the CUDA backend does for greedy and plain sampled
 * requests, where the device chooses), so a step's time is the scheduler's, the output processor's (detokenising,
 * stop strings, usage), the sinks' and the engine loop's. One operation is {@code batch} requests of
 * {@value #TOKENS} tokens each after a 32-token prompt: divide the score by {@value #TOKENS} for the time a decode
 * step of that batch adds on the host, beside the device's step (an 8B model on an H200: a few ms at batch 1, tens
 * at batch 64). The engine does not overlap it with the device's work, so it adds to every step.
 *
 * <p>{@code bin/nereid jmh engine EngineOverheadBenchmark -f 1 -wi 5 -i 10}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class EngineOverheadBenchmark {

    static final int TOKENS = 64;

    @Param({"1", "8", "64"})
    public int batch;

    /** greedy: the argmax asked for; sampled: a draw at temperature 0.8 with top-p 0.95 (the device draws). */
    @Param({"greedy", "sampled"})
    public String sampling;

    private Path model;
    private InflightEngine engine;
    private InstantBackend backend;
    private int[][] prompts;
    private long round;

    /** Answers every slice instantly: chosen ids where it may choose, else rows of zeros (prefill ends choose too). */
    static final class InstantBackend implements Backend {
        final int vocab;
        long steps;

        InstantBackend(int vocab) {
            this.vocab = vocab;
        }

        @Override
        public int vocabSize() {
            return vocab;
        }

        @Override
        public KvCacheSpec kvCacheSpec(int blockSize) {
            return new KvCacheSpec(blockSize, KvPrecision.F16, 1, 1 << 20);
        }

        @Override
        public void allocate(int numBlocks, int blockSize, int maxPositions) {
        }

        @Override
        public void copy(List<BlockCopy> copies) {
        }

        @Override
        public StepOutput forward(Step step) {
            steps++;
            int n = step.slices().size();
            float[][] rows = new float[n][];
            int[][] chosen = new int[n][];
            for (int i = 0; i < n; i++) {
                Slice s = step.slices().get(i);
                if (s.choice() != null) {
                    chosen[i] = new int[s.logitRows()];
                    for (int r = 0; r < chosen[i].length; r++) {   // ordinary text tokens, never EOS
                        chosen[i][r] = 300 + (s.startPos() * 7919 + r * 104729) % (vocab - 300);
                    }
                } else if (s.logitRows() > 0) {
                    rows[i] = new float[s.logitRows() * vocab];
                }
            }
            return new StepOutput(rows, vocab, new float[n][], 0, chosen);
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        model = Files.createTempFile("nereid-overhead-", ".gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 64, 1, 2, 1, 128, 32_000, 4096,
                GgmlType.F32, false, 1), model);
        Tokenizer tokenizer;
        try (ModelSource source = ModelSource.open(model)) {
            tokenizer = source.tokenizer();
        }
        EngineConfig c = new EngineConfig(64, 4096, 4096, 4096, 64 * 8 + 64, 16, 0.01, true, true);
        backend = new InstantBackend(32_000);
        engine = new InflightEngine(c, backend, tokenizer);
        SplittableRandom r = new SplittableRandom(5);
        prompts = new int[batch][];
        for (int i = 0; i < batch; i++) {
            prompts[i] = r.ints(32, 300, 32_000).toArray();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        engine.close();
        System.out.printf("%n%d steps for %d rounds of %d requests: %.1f steps a round%n", backend.steps, round, batch,
                (double) backend.steps / round);
        Files.deleteIfExists(model);
    }

    @Benchmark
    public int requests() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(batch);
        int[] tokens = new int[2];   // ids that arrived, errors
        SamplingParams params = sampling.equals("greedy") ? SamplingParams.GREEDY
                : new SamplingParams(0.8f, -1, 0.95f, 0f, 1f, 0f, 0f, Map.of(), 7L, 0);
        round++;
        for (int i = 0; i < batch; i++) {
            int[] prompt = prompts[i].clone();
            prompt[0] = 300 + (int) (round % 1000);   // no prefix-cache hit across rounds
            engine.submit(GenerationRequest.builder("r" + round + "-" + i, prompt).maxTokens(TOKENS).ignoreEos(true)
                    .sampling(params).build(), new Sink(done, tokens));
        }
        if (!done.await(5, TimeUnit.MINUTES)) {
            throw new IllegalStateException("requests did not finish");
        }
        if (tokens[1] > 0 || tokens[0] != batch * TOKENS) {
            throw new IllegalStateException(tokens[1] + " requests failed, " + tokens[0] + " tokens of " + batch * TOKENS);
        }
        return tokens[0];
    }

    /** Counts what arrives (on the engine thread); counts down when the request ends. */
    private record Sink(CountDownLatch done, int[] tokens) implements TokenSink {

        @Override
        public void onDelta(int choice, String text, int[] ids, List<TokenLogprob> logprobs) {
            tokens[0] += ids.length;
        }

        @Override
        public void onFinish(int choice, FinishReason reason, Object stopReason, Usage usage) {
            done.countDown();
        }

        @Override
        public void onError(int choice, EngineException error) {
            if (tokens[1]++ == 0) {
                error.printStackTrace();
            }
            done.countDown();
        }
    }
}
