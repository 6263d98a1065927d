package io.nereid.engine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.EngineSpec;
import io.nereid.engine.api.Engines;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.LoadedModel;
import io.nereid.engine.api.Pooling;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.ForwardingBackend;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.core.EmbeddingPoolingTest.Vector;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --deterministic} end to end ({@link EngineSpec#batchInvariant()} through
 * {@link Engines#open}: the CPU backend on two kernel threads, a Q8_0 model). A short prompt's
 * final hidden states (last-token embeddings: every bit of the forward pass shows) are the same
 * bits alone, next to three longer prompts in the same step, and again afterwards; without the
 * switch the lone prompt's products run in another order and the bits differ, which is what
 * makes the first check mean something.
 */
@Timeout(120)
class DeterministicEngineTest {

    @TempDir
    static Path dir;
    static Path file;

    @BeforeAll
    static void model() throws Exception {
        file = dir.resolve("q8.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 128, 2, 4, 2, 256, 400, 512,
                GgmlType.Q8_0, false, 5), file);
    }

    /**
     * Our embedding alone, then in one step with three others, then alone again. To be sure the
     * four share a step, the engine is held in the forward pass of a fifth request while they are
     * submitted: the next step then takes them all.
     */
    private static List<float[]> aloneBatchedAgain(boolean batchInvariant) throws Exception {
        Gate gate = new Gate();
        EngineSpec spec = EngineSpec.builder(file).threads(2).maxNumSeqs(8).batchInvariant(batchInvariant)
                .backendDecorator(b -> new GatedBackend(b, gate)).build();
        int[] ours = EngineTestSupport.prompt(1, 3);
        try (LoadedModel model = Engines.open(spec)) {
            float[] alone = embed(model, List.of(ours)).getFirst();
            gate.close();
            List<Vector> holder = submit(model, List.of(EngineTestSupport.prompt(9, 5)));
            assertTrue(gate.entered.await(30, TimeUnit.SECONDS), "the engine reached the held forward pass");
            List<int[]> crowd = new ArrayList<>(List.of(ours));
            for (int s = 2; s <= 4; s++) {
                crowd.add(EngineTestSupport.prompt(s, 9 + 13 * s));
            }
            List<Vector> sinks = submit(model, crowd);
            gate.open();
            await(holder);
            float[] batched = await(sinks).getFirst();
            float[] again = embed(model, List.of(ours)).getFirst();
            return List.of(alone, batched, again);
        }
    }

    /** Holds forward passes while closed; {@link #entered} counts down when one is held. */
    static final class Gate {
        volatile CountDownLatch release = new CountDownLatch(0);
        volatile CountDownLatch entered = new CountDownLatch(1);

        void close() {
            entered = new CountDownLatch(1);
            release = new CountDownLatch(1);
        }

        void open() {
            release.countDown();
        }

        void pass() {
            CountDownLatch r = release;
            if (r.getCount() > 0) {
                entered.countDown();
                try {
                    r.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** The CPU backend behind a {@link Gate}. */
    static final class GatedBackend extends ForwardingBackend {
        private final Gate gate;

        GatedBackend(Backend backend, Gate gate) {
            super(backend);
            this.gate = gate;
        }

        @Override
        public StepOutput forward(Step step) {
            gate.pass();
            return super.forward(step);
        }
    }

    @Test
    void withTheSwitchAShortPromptsHiddenStatesAreTheSameBitsAloneAndBatched() throws Exception {
        List<float[]> runs = aloneBatchedAgain(true);
        assertEquals(bits(runs.get(0)), bits(runs.get(1)), "alone vs batched with three others");
        assertEquals(bits(runs.get(0)), bits(runs.get(2)), "alone vs alone again");
    }

    @Test
    void withoutItTheLonePromptRunsInAnotherOrderButTheSameOneEveryTime() throws Exception {
        List<float[]> runs = aloneBatchedAgain(false);
        assertNotEquals(bits(runs.get(0)), bits(runs.get(1)), "alone and batched take different orders by default");
        assertEquals(bits(runs.get(0)), bits(runs.get(2)), "alone vs alone again");
        for (int d = 0; d < runs.get(0).length; d++) {
            assertEquals(runs.get(0)[d], runs.get(1)[d], 1e-5f, "alone vs batched, within rounding, element " + d);
        }
    }

    /** Last-token embeddings of {@code prompts}, submitted at once. */
    private static List<float[]> embed(LoadedModel model, List<int[]> prompts) throws Exception {
        return await(submit(model, prompts));
    }

    private static List<Vector> submit(LoadedModel model, List<int[]> prompts) {
        List<Vector> sinks = new ArrayList<>();
        for (int[] prompt : prompts) {
            Vector s = new Vector();
            sinks.add(s);
            model.engine().submit(GenerationRequest.builder("e" + ids.incrementAndGet(), prompt).maxTokens(0)
                    .pooling(Pooling.LAST).build(), s);
        }
        return sinks;
    }

    private static final java.util.concurrent.atomic.AtomicInteger ids = new java.util.concurrent.atomic.AtomicInteger();

    private static List<float[]> await(List<Vector> sinks) throws Exception {
        List<float[]> out = new ArrayList<>();
        for (Vector s : sinks) {
            out.add(s.vector.get(60, TimeUnit.SECONDS));
        }
        return out;
    }

    private static String bits(float[] v) {
        return Arrays.toString(java.util.stream.IntStream.range(0, v.length).map(i -> Float.floatToRawIntBits(v[i]))
                .toArray());
    }
}
