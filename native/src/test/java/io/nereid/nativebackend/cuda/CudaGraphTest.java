package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.ModelSource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * CUDA graphs: a step recorded once per shape and replayed gives the logits and tokens of the same step
 * launched kernel by kernel in the same shape, bit for bit, across batch sizes, prefill chunks, split attention,
 * sampling on the device, and a buffer that grows under the recorded graphs (they are recorded again). On the
 * emulator also those of {@code --enforce-eager}'s unpadded steps: the padding rows a capture size adds are skipped
 * by the KV writes and attention and touch no other row, and a split attention's extra empty parts add nothing (on a
 * GPU cuBLAS may sum another number of tokens in another order, so only the GEMV steps would be the same bits
 * there). Runs where a CUDA driver (or the emulator) is present.
 */
@Tag("gpu")
@ExtendWith(CudaDevice.class)
class CudaGraphTest {

    @TempDir
    static Path dir;


    private static int[] table(int sequence) {
        return IntStream.range(sequence * 40, sequence * 40 + 40).toArray();
    }

    /** One backend's outputs: every step's logit rows and chosen ids, flattened as raw bits. */
    private record Run(List<int[]> outputs, long[] graphCounts, String graphsOff) {
    }

    private static Run run(Path model, boolean eager, Consumer<CudaBackend> setUp, List<Step> steps) throws Exception {
        try (ModelSource source = ModelSource.open(model);
                CudaBackend b = (CudaBackend) BackendProvider.named("cuda").open(new BackendConfig(source, KvPrecision.F16, 1,
                        false, eager))) {
            setUp.accept(b);
            b.allocate(40 * 8, 16, 640);
            List<int[]> outputs = new ArrayList<>();
            for (Step step : steps) {
                StepOutput out = b.forward(step);
                for (int s = 0; s < step.slices().size(); s++) {
                    if (out.chosen()[s] != null) {
                        outputs.add(out.chosen()[s]);
                    }
                    if (out.logits()[s] != null) {
                        outputs.add(bits(out.logits()[s]));
                    }
                }
            }
            return new Run(outputs, b.graphCounts(), b.graphsOffReason());
        }
    }

    /** The same outputs, bit for bit. */
    private static void assertSameOutputs(Run expected, Run actual, String what) {
        assertEquals(expected.outputs().size(), actual.outputs().size(), what);
        for (int i = 0; i < expected.outputs().size(); i++) {
            assertArrayEquals(expected.outputs().get(i), actual.outputs().get(i), what + ": output " + i);
        }
    }

    /**
     * The graphs' run gives the outputs of the same shapes run eagerly ({@code padded}) and, on the emulator, of
     * {@code --enforce-eager} ({@code eager}); both of those recorded no graph, the graphs' run recorded and replayed.
     */
    private static void assertSame(Run eager, Run padded, Run graphs, String what) {
        assertSameOutputs(padded, graphs, what + " (the same shapes eagerly)");
        if (CudaDriver.load().deviceName(0).contains("emulator")) {
            assertSameOutputs(eager, graphs, what + " (--enforce-eager)");
        }
        assertArrayEquals(new long[] {0, 0}, eager.graphCounts(), what + ": the eager backend recorded a graph");
        assertArrayEquals(new long[] {0, 0}, padded.graphCounts(), what + ": the padded eager run recorded a graph");
        assertNull(graphs.graphsOff(), what + ": graphs went off");
        assertTrue(graphs.graphCounts()[1] > 0 && graphs.graphCounts()[0] > graphs.graphCounts()[1],
                what + ": graphs recorded and replayed " + Arrays.toString(graphs.graphCounts()));
    }

    private static Path model(GgmlType type) throws Exception {
        return CudaDevice.llama(dir, type, 640, 5);
    }

    /**
     * Prefills (one of 33 tokens: cuBLAS, padded to 40), decodes of 2 and 3 sequences (padded to 4), a step mixing a
     * prefill chunk with decodes (11 tokens, padded to 16), greedy rows back, argmaxes and draws on the device.
     */
    private static List<Step> script() {
        SplittableRandom r = new SplittableRandom(3);
        List<Step> steps = new ArrayList<>();
        int[] a = r.ints(20, 3, 512).toArray();
        int[] b = r.ints(13, 3, 512).toArray();
        int[] c = r.ints(9, 3, 512).toArray();
        steps.add(new Step(List.of(new Slice(a, 0, table(0), 1), new Slice(b, 0, table(1), 1))));
        int pa = 20;
        int pb = 13;
        for (int i = 0; i < 5; i++, pa++, pb++) {
            steps.add(new Step(List.of(new Slice(new int[] {r.nextInt(3, 512)}, pa, table(0), 1),
                    new Slice(new int[] {r.nextInt(3, 512)}, pb, table(1), 1, false, TokenChoice.ARGMAX))));
        }
        steps.add(new Step(List.of(new Slice(c, 0, table(2), 1), new Slice(new int[] {7}, pa++, table(0), 1),
                new Slice(new int[] {8}, pb++, table(1), 1))));
        int pc = 9;
        for (int i = 0; i < 5; i++, pa++, pb++, pc++) {
            steps.add(new Step(List.of(new Slice(new int[] {r.nextInt(3, 512)}, pa, table(0), 1),
                    new Slice(new int[] {r.nextInt(3, 512)}, pb, table(1), 1, false, TokenChoice.draw(1f, r.nextDouble())),
                    new Slice(new int[] {r.nextInt(3, 512)}, pc, table(2), 1))));
        }
        return steps;
    }

    @Test
    void aReplayedGraphGivesTheEagerStepsBits() throws Exception {
        for (GgmlType type : List.of(GgmlType.F16, GgmlType.Q4_K)) {
            Path model = model(type);
            List<Step> steps = script();
            assertSame(run(model, true, b -> { }, steps), run(model, false, b -> b.recordGraphs(false), steps),
                    run(model, false, b -> { }, steps), type.toString());
        }
    }

    /**
     * Attention split every 128 positions: 300 positions are 3 parts eagerly and 4 in the graph (its reach rounded
     * to 512); the empty fourth adds nothing. Then a prefill of 240 tokens (more than the activation buffers hold)
     * grows them under the recorded graphs, which are recorded again.
     */
    @Test
    void splitAttentionAndGrownBuffersKeepTheBits() throws Exception {
        Path model = model(GgmlType.F16);
        SplittableRandom r = new SplittableRandom(4);
        int[] prompt = r.ints(300, 3, 512).toArray();
        List<Step> steps = new ArrayList<>();
        for (int from = 0; from < 300; from += 100) {
            steps.add(new Step(List.of(new Slice(Arrays.copyOfRange(prompt, from, from + 100), from, table(0),
                    from == 200 ? 1 : 0))));
        }
        for (int i = 0; i < 4; i++) {
            steps.add(new Step(List.of(new Slice(new int[] {r.nextInt(3, 512)}, 300 + i, table(0), 1))));
        }
        steps.add(new Step(List.of(new Slice(r.ints(240, 3, 512).toArray(), 0, IntStream.range(40, 80).toArray(), 1))));
        for (int i = 4; i < 8; i++) {
            steps.add(new Step(List.of(new Slice(new int[] {r.nextInt(3, 512)}, 300 + i, table(0), 1))));
        }
        Consumer<CudaBackend> split = b -> b.limitAttentionPartition(128);
        Run eager = run(model, true, split, steps);
        Run padded = run(model, false, split.andThen(b -> b.recordGraphs(false)), steps);
        Run graphs = run(model, false, split, steps);
        assertSame(eager, padded, graphs, "split");
        assertTrue(graphs.graphCounts()[1] >= 2, "recorded again after the buffers grew: "
                + Arrays.toString(graphs.graphCounts()));
    }

    /**
     * Captures spoilt (here by an allocation while recording, as a bug would spoil them) run their steps eagerly, and
     * the third turns graphs off; the steps go on with the same bits.
     */
    @Test
    void aFailedCaptureTurnsGraphsOffAndTheStepsRunEagerly() throws Exception {
        Path model = model(GgmlType.F16);
        List<Step> steps = script();
        Run eager = run(model, true, b -> { }, steps);
        Run spoilt = run(model, false, b -> b.whileCapturing(() -> CudaDriver.load().alloc(64)), steps);
        if (CudaDriver.load().deviceName(0).contains("emulator")) {   // the first steps ran padded (see the class)
            assertSameOutputs(eager, spoilt, "graphs off");
        }
        assertTrue(spoilt.graphsOff() != null && spoilt.graphsOff().contains("CUDA_ERROR_STREAM_CAPTURE")
                && spoilt.graphsOff().contains("(3 failures)"), spoilt.graphsOff());
        assertEquals(0, spoilt.graphCounts()[0], "no graph launched");
    }

    @Test
    void captureSizesAreVllmsAndTheReachIsAPowerOfTwo() {
        assertEquals(List.of(1, 2, 4, 4, 8, 8, 16, 512), IntStream.of(1, 2, 3, 4, 5, 8, 9, 512).map(CudaBackend::captureSize)
                .boxed().toList());
    }

    private static int[] bits(float[] row) {
        int[] b = new int[row.length];
        for (int i = 0; i < row.length; i++) {
            b[i] = Float.floatToRawIntBits(row[i]);
        }
        return b;
    }
}
