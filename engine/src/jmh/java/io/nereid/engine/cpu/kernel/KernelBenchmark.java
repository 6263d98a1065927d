package io.nereid.engine.cpu.kernel;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scalar against Vector API kernels in the same run ({@code impl}): {@code dot} over {@code n}
 * floats, and single-head paged {@code attention} over {@code tokens} positions (headDim 128,
 * blockSize 16, 8 KV heads, a shuffled block table). Average time per call.
 * Run: {@code bin/nereid jmh engine KernelBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
public class KernelBenchmark {

    static final int HEAD_DIM = 128;
    static final int BLOCK_SIZE = 16;
    static final int KV_HEADS = 8;

    @State(Scope.Thread)
    public static class DotInput {
        @Param({"scalar", "vector"})
        String impl;

        @Param({"128", "4096"})
        int n;

        KernelSupport kernels;
        float[] a;
        float[] b;

        @Setup(Level.Trial)
        public void setUp() {
            kernels = kernels(impl);
            Random r = new Random(42);
            a = random(r, n);
            b = random(r, n);
        }
    }

    @State(Scope.Thread)
    public static class AttentionInput {
        @Param({"scalar", "vector"})
        String impl;

        @Param({"128", "2048"})
        int tokens;

        KernelSupport kernels;
        float[] q;
        float[] keys; // (KV_HEADS, blocks, BLOCK_SIZE, HEAD_DIM), as KvStorage
        int blocks;
        float[] values;
        int[] blockTable;
        float[] scores;
        float[] out;

        @Setup(Level.Trial)
        public void setUp() {
            kernels = kernels(impl);
            Random r = new Random(42);
            q = random(r, HEAD_DIM);
            blocks = (tokens + BLOCK_SIZE - 1) / BLOCK_SIZE;
            keys = random(r, blocks * KV_HEADS * BLOCK_SIZE * HEAD_DIM);
            values = random(r, keys.length);
            blockTable = new int[blocks];
            for (int i = 0; i < blocks; i++) {
                blockTable[i] = i;
            }
            for (int i = blocks - 1; i > 0; i--) { // Fisher-Yates: blocks in no order, the slowest case (a
                // fragmented pool; a sequence's blocks in order stream ~2.5x faster: bench/kernels/AttentionProbe)
                int j = r.nextInt(i + 1);
                int t = blockTable[i];
                blockTable[i] = blockTable[j];
                blockTable[j] = t;
            }
            scores = new float[tokens];
            out = new float[HEAD_DIM];
        }
    }

    @Benchmark
    public float dot(DotInput in) {
        return in.kernels.dot(in.a, 0, in.b, 0, in.n);
    }

    @Benchmark
    public float[] attention(AttentionInput in) {
        in.kernels.attention(in.q, 0, in.keys, in.values, in.blockTable, in.tokens, BLOCK_SIZE,
                KV_HEADS / 2 * in.blocks * BLOCK_SIZE * HEAD_DIM, BLOCK_SIZE * HEAD_DIM, HEAD_DIM,
                (float) (1 / Math.sqrt(HEAD_DIM)), in.scores, in.out, 0);
        return in.out;
    }

    static KernelSupport kernels(String impl) {
        return impl.equals("vector")
                ? new VectorMathKernels()
                : ScalarKernels.INSTANCE;
    }

    static float[] random(Random r, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextFloat() * 2 - 1;
        }
        return x;
    }
}
