package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.ModelSource;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --deterministic} on the CUDA backend: a token's logits are the same bits whether its prompt is
 * prefilled in one step, in chunks, beside other sequences, or its last token decoded alone; and
 * without it they are not (the prefill's cuBLAS sums in another order than the GEMV kernels), so the
 * comparison can fail. Runs where a CUDA driver (or the emulator) is present.
 */
@Tag("gpu")
@ExtendWith(CudaDevice.class)
class CudaBatchInvarianceTest {

    @TempDir
    static Path dir;


    private static int[] table(int first) {
        return IntStream.range(first, first + 4).toArray();
    }

    /** The last prompt token's logits four ways: one step, three chunks, batched with two others, decoded alone. */
    private static float[][] fourWays(boolean invariant, GgmlType type) throws Exception {
        Path model = CudaDevice.llama(dir, type, 64, 3);
        try (ModelSource source = ModelSource.open(model);
                Backend b = BackendProvider.named("cuda").open(new BackendConfig(source, KvPrecision.F16, 1, invariant))) {
            b.allocate(32, 16, 64);
            SplittableRandom random = new SplittableRandom(9);
            int[] prompt = random.ints(40, 3, 512).toArray();
            float[] whole = b.forward(new Step(List.of(new Slice(prompt, 0, table(0), 1)))).row(0, 0);
            b.forward(new Step(List.of(new Slice(Arrays.copyOfRange(prompt, 0, 13), 0, table(4), 0))));
            b.forward(new Step(List.of(new Slice(Arrays.copyOfRange(prompt, 13, 29), 13, table(4), 0))));
            float[] chunked = b.forward(new Step(List.of(new Slice(Arrays.copyOfRange(prompt, 29, 40), 29, table(4), 1))))
                    .row(0, 0);
            b.forward(new Step(List.of(new Slice(random.ints(9, 3, 512).toArray(), 0, table(12), 0))));
            float[] batched = b.forward(new Step(List.of(new Slice(random.ints(37, 3, 512).toArray(), 0, table(8), 1),
                    new Slice(prompt, 0, table(16), 1), new Slice(new int[] {7}, 9, table(12), 1)))).row(1, 0);
            b.forward(new Step(List.of(new Slice(Arrays.copyOfRange(prompt, 0, 39), 0, table(20), 0))));
            float[] decoded = b.forward(new Step(List.of(new Slice(new int[] {prompt[39]}, 39, table(20), 1)))).row(0, 0);
            return new float[][] {whole, chunked, batched, decoded};
        }
    }

    @Test
    void deterministicLogitsDoNotDependOnTheStepsShape() throws Exception {
        for (GgmlType type : List.of(GgmlType.F16, GgmlType.Q4_K)) {
            float[][] ways = fourWays(true, type);
            for (int i = 1; i < ways.length; i++) {
                assertArrayEquals(bits(ways[0]), bits(ways[i]), type + ": way " + i + " against one step");
            }
        }
    }

    @Test
    void withoutItPrefillAndDecodeSumInOtherOrders() throws Exception {
        float[][] ways = fourWays(false, GgmlType.F16);
        assertFalse(Arrays.equals(bits(ways[0]), bits(ways[3])), "cuBLAS prefill and GEMV decode gave the same bits");
    }

    private static int[] bits(float[] row) {
        int[] b = new int[row.length];
        for (int i = 0; i < row.length; i++) {
            b[i] = Float.floatToRawIntBits(row[i]);
        }
        return b;
    }
}
