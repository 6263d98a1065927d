package io.nereid.engine.sampling;

import io.nereid.engine.api.SamplingParams;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What choosing one token costs the engine thread on the host, per logit row of Llama 3's vocabulary
 * (128,256): the sampling chain greedy, drawing from the whole softmax (temperature 1, as the OpenAI
 * defaults and GenAI-Perf send), with top-p 0.9, with top-k 40, with llama.cpp's defaults and with min-p 0.05
 * alone; greedy with 20 top logprobs, and its top 20 found in one pass and by the repeated selection it used
 * before; the top-p and top-k cuts by sorting the whole vocabulary ({@code Distribution.sorted}, the definition,
 * as they were computed before the bucketed {@code ranked}); and {@code baselineSum}, one plain pass over the
 * row (read the others as multiples of it). A step of 64 sequences pays this 64 times on the
 * engine thread unless the backend chooses the tokens where the logits are (the CUDA backend's
 * {@code sample_rows}, for greedy draws and draws within 256 ranks).
 * Run: {@code bin/nereid jmh engine SamplingBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SamplingBenchmark {

    static final int VOCAB = 128_256;

    float[] row;
    SamplingChain greedy;
    SamplingChain whole;
    SamplingChain topP;
    SamplingChain topK;
    SamplingChain llamaCpp;
    SamplingChain minP;
    SamplingChain logprobs;
    Distribution topPCut;
    Distribution topKCut;

    @Setup
    public void setUp() {
        SplittableRandom r = new SplittableRandom(1);
        row = new float[VOCAB];
        for (int i = 0; i < VOCAB; i++) {
            row[i] = (float) (3 * r.nextGaussian());
        }
        greedy = new SamplingChain(SamplingParams.GREEDY, VOCAB, new int[0], 1);
        whole = new SamplingChain(params(1f, -1, 1f, 0f, 0), VOCAB, new int[0], 1);
        topP = new SamplingChain(params(0.7f, -1, 0.9f, 0f, 0), VOCAB, new int[0], 1);
        topK = new SamplingChain(params(0.7f, 40, 1f, 0f, 0), VOCAB, new int[0], 1);
        llamaCpp = new SamplingChain(params(0.8f, 40, 0.95f, 0.05f, 0), VOCAB, new int[0], 1);
        minP = new SamplingChain(params(1f, -1, 1f, 0.05f, 0), VOCAB, new int[0], 1);
        logprobs = new SamplingChain(params(0f, -1, 1f, 0f, 20), VOCAB, new int[0], 1);
        topPCut = new Distribution(params(0.7f, -1, 0.9f, 0f, 0));
        topKCut = new Distribution(params(0.7f, 40, 1f, 0f, 0));
    }

    /** Sampling parameters without penalties or bias, seeded (temperature 0: greedy, no seed). */
    private static SamplingParams params(float temperature, int topK, float topP, float minP, int topLogprobs) {
        return new SamplingParams(temperature, topK, topP, minP, 1f, 0f, 0f, Map.of(), temperature > 0 ? 1L : null,
                topLogprobs);
    }

    @Benchmark
    public double baselineSum() {
        double s = 0;
        for (float v : row) {
            s += v;
        }
        return s;
    }

    @Benchmark
    public int greedy() {
        return greedy.sample(row, false).id();
    }

    @Benchmark
    public int wholeSoftmax() {
        return whole.sample(row, false).id();
    }

    @Benchmark
    public int topP() {
        return topP.sample(row, false).id();
    }

    @Benchmark
    public int topK() {
        return topK.sample(row, false).id();
    }

    /** llama.cpp's defaults: top-k 40, top-p 0.95, min-p 0.05 (temperature 0.8). */
    @Benchmark
    public int llamaCppDefaults() {
        return llamaCpp.sample(row, false).id();
    }

    @Benchmark
    public int minP() {
        return minP.sample(row, false).id();
    }

    /** Greedy with logprobs and 20 top logprobs: the log-softmax, the top 20 in one pass, the rank. */
    @Benchmark
    public int greedyTopLogprobs20() {
        return logprobs.sample(row, true).rank();
    }

    /** The top 20 by repeated selection (how they were found before the one pass; still the rule for NaN rows). */
    @Benchmark
    public int top20BySelection() {
        int[] ids = new int[20];
        RawLogprobs.bySelection(row, ids, new float[20]);
        return ids[19];
    }

    /** The top 20 in one pass, the same tokens. */
    @Benchmark
    public int top20OnePass() {
        int[] ids = new int[20];
        RawLogprobs.topInOnePass(row, ids, new float[20]);
        return ids[19];
    }

    /** top-p 0.9's cut by sorting the whole vocabulary (the definition, and how it was computed before). */
    @Benchmark
    public int topPSortedCut() {
        return topPCut.sorted(row).size();
    }

    /** top-k 40's cut by sorting the whole vocabulary. */
    @Benchmark
    public int topKSortedCut() {
        return topKCut.sorted(row).size();
    }
}
