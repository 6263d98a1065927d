package io.nereid.engine.cpu.tensor;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One-thread matmul of a {@code rows x cols} weight matrix (1024 x 4096, a small projection)
 * with {@code tokens} activation vectors, per weight type, through {@link WeightMatrix} with the
 * kernels in use ({@code vector} unless the JVM lacks the Vector API) or the scalar
 * specification. One op is one whole matmul: {@code 2 * rows * cols * tokens / (s/op)} is the
 * FLOP rate, {@code type.byteSize / (s/op)} the weight bandwidth.
 *
 * <p>Baseline in the same run: {@code baselineF32Arrays}, the same product over a plain
 * {@code float[]} matrix with the F32 array dot, the ceiling a decoded format could reach.
 * Weights live off-heap as they do when mapped from a GGUF file. Each op makes a new
 * {@link MatmulInput} over the same {@link MatmulInput.Buffers}, as a forward pass does per layer,
 * so Q8_0's activation quantization is part of the op.
 * Run: {@code bin/nereid jmh engine MatmulBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
public class MatmulBenchmark {

    static final int ROWS = 1024;
    static final int COLS = 4096;

    @Param({"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    GgmlType type;

    @Param({"1", "8"})
    int tokens;

    @Param({"inUse", "scalar"})
    String kernels;

    /** {@code fastest}: the default order ({@link RowKernel#dotFast} for a lone token); {@code invariant}: {@code --deterministic}'s. */
    @Param({"fastest", "invariant"})
    String order;

    Arena arena;
    WeightMatrix matrix;
    float[] dense;
    float[] x;
    float[] out;
    MatmulInput.Buffers buffers;

    @Setup(Level.Trial)
    public void setUp() {
        Random random = new Random(42);
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, random);
        arena = Arena.ofShared();
        MemorySegment data = arena.allocate(bytes.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, data, 0, bytes.length);
        long[] dims = {COLS, ROWS};
        matrix = kernels.equals("scalar")
                ? WeightMatrix.of(type, dims, data, RowKernels.scalar(type))
                : WeightMatrix.of(type, dims, data);
        dense = TestRows.gaussian(random, ROWS * COLS, 1f);
        x = TestRows.gaussian(random, tokens * COLS, 1f);
        out = new float[tokens * ROWS];
        buffers = new MatmulInput.Buffers(tokens * COLS);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public float[] matmul() {
        matrix.matmul(MatmulInput.of(x, tokens, COLS, buffers), out, 0, ROWS, null, order.equals("invariant"));
        return out;
    }

    @Benchmark
    public float[] baselineF32Arrays() {
        FloatDot dot = RowKernels.floatDot();
        for (int r = 0; r < ROWS; r++) {
            for (int t = 0; t < tokens; t++) {
                out[t * ROWS + r] = dot.dot(dense, r * COLS, x, t * COLS, COLS);
            }
        }
        return out;
    }
}
