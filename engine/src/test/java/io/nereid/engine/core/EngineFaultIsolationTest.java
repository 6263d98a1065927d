package io.nereid.engine.core;

import static io.nereid.engine.core.EngineTestSupport.backend;
import static io.nereid.engine.core.EngineTestSupport.prompt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.backend.ForwardingBackend;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.core.EngineTestSupport.Recorder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One bad request, one broken sink or one failed forward pass never takes the engine down: each
 * failure ends only what it belongs to, later requests give the reference output, and when the
 * backend is broken for good the engine stops, answers everything it held and refuses the rest.
 */
@Timeout(120)
class EngineFaultIsolationTest {

    private static final EngineConfig CONFIG = EngineTestSupport.config(256, 16, true, 64);
    private static final int[] A = prompt(7001, 12);
    private static final int[] B = prompt(7002, 9);
    private static List<Integer> referenceA;
    private static List<Integer> referenceB;

    @BeforeAll
    static void references() {
        try (InflightEngine e = EngineTestSupport.engine(CONFIG)) {
            referenceA = run(e, "ref-a", A, 8);
            referenceB = run(e, "ref-b", B, 8);
        }
    }

    private static List<Integer> run(InflightEngine e, String id, int[] prompt, int maxTokens) {
        Recorder r = new Recorder(1);
        e.submit(greedy(id, prompt, maxTokens), r);
        r.await();
        assertEquals(FinishReason.LENGTH, r.reasons[0], id);
        return r.tokens(0);
    }

    /** A backend that asks {@code fault} before every forward pass (by its index) whether to fail it. */
    private static final class FaultyBackend extends ForwardingBackend {
        final AtomicInteger forwards = new AtomicInteger();
        final Function<Integer, RuntimeException> fault;
        final Function<Step, StepOutput> rows;

        FaultyBackend(Function<Integer, RuntimeException> fault) {
            this(fault, null);
        }

        FaultyBackend(Function<Integer, RuntimeException> fault, Function<Step, StepOutput> rows) {
            super(backend(CONFIG));
            this.fault = fault;
            this.rows = rows;
        }

        StepOutput real(Step step) {
            return super.forward(step);
        }

        @Override
        public StepOutput forward(Step step) {
            RuntimeException e = fault.apply(forwards.getAndIncrement());
            if (e != null) {
                throw e;
            }
            return rows != null ? rows.apply(step) : super.forward(step);
        }
    }

    @Test
    void everyFieldOutOfBoundsIsRefusedBeforeAnythingIsQueuedNamingTheField() {
        int vocab = EngineTestSupport.model().config().vocabSize();
        // Each case fails either when the request is built (a field on its own) or when the engine
        // checks it against the model (vocabulary, context, max_num_seqs): never later.
        record Case(String field, Supplier<GenerationRequest> request) {
        }
        List<String> tooManyStops = Collections.nCopies(GenerationRequest.MAX_STOPS + 1, "x");
        List<Case> cases = List.of(
                new Case("logit_bias", () -> sampled(Map.of(-1, 1f))),
                new Case("logit_bias", () -> sampled(Map.of(vocab, 1f))),
                new Case("logit_bias", () -> sampled(Map.of(99_999_999, -100f))),
                new Case("n", () -> request(A, 4, List.of(), new int[0], 0, -1)),
                new Case("n", () -> request(A, 4, List.of(), new int[0], 65, -1)),
                new Case("n", () -> request(A, 4, List.of(), new int[0], Integer.MAX_VALUE, -1)),
                new Case("stop", () -> request(A, 4, tooManyStops, new int[0], 1, -1)),
                new Case("stop", () -> request(A, 4, List.of("y".repeat(GenerationRequest.MAX_STOP_CHARS + 1)), new int[0],
                        1, -1)),
                new Case("stop", () -> request(A, 4, List.of("ok", "\ud800"), new int[0], 1, -1)),
                new Case("stop_token_ids", () -> request(A, 4, List.of(), new int[] {vocab}, 1, -1)),
                new Case("stop_token_ids", () -> request(A, 4, List.of(), new int[] {-5}, 1, -1)),
                new Case("stop_token_ids", () -> request(A, 4, List.of(), new int[GenerationRequest.MAX_STOP_TOKEN_IDS + 1],
                        1, -1)),
                new Case("prompt_logprobs", () -> request(A, 4, List.of(), new int[0], 1, SamplingParams.MAX_LOGPROBS + 1)),
                new Case("prompt", () -> request(new int[] {3, vocab + 2}, 4, List.of(), new int[0], 1, -1)),
                new Case("prompt", () -> request(new int[] {3, -2}, 4, List.of(), new int[0], 1, -1)),
                new Case("prompt", () -> request(new int[0], 4, List.of(), new int[0], 1, -1)),
                new Case("max_tokens", () -> request(A, Integer.MAX_VALUE, List.of(), new int[0], 1, -1)),
                new Case("max_tokens", () -> request(A, -1, List.of(), new int[0], 1, -1)));
        try (InflightEngine e = EngineTestSupport.engine(CONFIG)) {
            for (Case c : cases) {
                var v = assertThrows(RequestValidationException.class, () -> e.validate(c.request().get()), c.toString());
                assertEquals(c.field(), v.param(), v.getMessage());
                var s = assertThrows(RequestValidationException.class, () -> e.submit(c.request().get(), new Recorder(1)));
                assertEquals(c.field(), s.param(), s.getMessage());
            }
            assertEquals(0, e.stats().waiting());
            assertEquals(referenceA, run(e, "after", A, 8));
            assertTrue(e.health().alive());
        }
    }

    @Test
    void aSinkThatThrowsAnErrorCancelsOnlyItsOwnRequest() {
        try (InflightEngine e = EngineTestSupport.engine(CONFIG)) {
            AtomicInteger deltas = new AtomicInteger();
            Recorder broken = new Recorder(1) {
                @Override
                public synchronized void onDelta(int choice, String t, int[] ids, List<TokenLogprob> lp) {
                    super.onDelta(choice, t, ids, lp);
                    if (deltas.incrementAndGet() == 2) {
                        throw new StackOverflowError("a sink bug");
                    }
                }
            };
            Recorder other = new Recorder(1);
            e.submit(greedy("broken", A, 50), broken);
            e.submit(greedy("other", B, 8), other);
            broken.await();
            assertEquals(FinishReason.CANCELLED, broken.reasons[0]);
            assertEquals(2, broken.tokens(0).size());
            assertEquals(referenceB, other.await().tokens(0));
            assertTrue(e.health().alive());
            assertEquals(referenceA, run(e, "after", A, 8));
        }
    }

    @Test
    void aLogitsRowThatBreaksOneSequencesSamplingFailsOnlyThatRequest() throws Exception {
        CountDownLatch firstForward = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> batchSizes = Collections.synchronizedList(new ArrayList<>());
        int poison = A[0];   // A's prefill starts with this token; its row comes back one entry short
        FaultyBackend[] holder = new FaultyBackend[1];
        holder[0] = new FaultyBackend(i -> null, step -> {
            if (firstForward.getCount() > 0) {
                firstForward.countDown();
                await(release);
            }
            List<Slice> slices = step.slices();
            float[][] out = holder[0].real(step).logits();
            for (int i = 0; i < slices.size(); i++) {
                if (slices.get(i).startPos() == 0 && slices.get(i).tokens()[0] == poison && out[i] != null) {
                    batchSizes.add(slices.size());
                    out[i] = java.util.Arrays.copyOf(out[i], out[i].length - 1);
                }
            }
            return new StepOutput(out, holder[0].vocabSize());
        });
        try (InflightEngine e = new InflightEngine(CONFIG, holder[0], EngineTestSupport.model().tokenizer())) {
            Recorder first = new Recorder(1);
            e.submit(greedy("first", B, 8), first);
            firstForward.await(30, TimeUnit.SECONDS);   // the engine thread is inside the first forward
            Recorder victim = new Recorder(1);
            Recorder neighbour = new Recorder(1);
            e.submit(greedy("victim", A, 8), victim);
            e.submit(greedy("neighbour", B, 8), neighbour);
            release.countDown();
            victim.await();
            assertNull(victim.reasons[0], "the victim must end with onError");
            assertEquals(List.of("error 0", "step end"), victim.log().subList(victim.log().size() - 2, victim.log().size()));
            assertTrue(batchSizes.getFirst() > 1, "the poisoned row shared its step with others: " + batchSizes);
            assertEquals(referenceB, first.await().tokens(0));
            assertEquals(referenceB, neighbour.await().tokens(0));
            assertTrue(e.health().alive());
            awaitIdle(e);
            assertEquals(0.0, e.kvStats().usage(), "no blocks left behind");
        }
    }

    @Test
    void aFailedForwardPassFailsItsStepAndTheEngineGoesOn() {
        FaultyBackend faulty = new FaultyBackend(i -> i == 3 ? new IllegalStateException("device hiccup") : null);
        try (InflightEngine e = new InflightEngine(CONFIG, faulty, EngineTestSupport.model().tokenizer())) {
            Recorder a = new Recorder(1);
            e.submit(greedy("a", A, 8), a);
            a.await();
            assertNull(a.reasons[0]);
            assertEquals(3, a.tokens(0).size(), "three steps ran before the fourth failed");
            assertTrue(e.health().alive());
            assertEquals(referenceA, run(e, "again", A, 8));
            assertEquals(referenceB, run(e, "other", B, 8));
            awaitIdle(e);
            assertEquals(0.0, e.kvStats().usage());
        }
    }

    @Test
    void aBackendThatFailsEveryStepStopsTheEngineWhichAnswersEveryRequestAndRefusesNewOnes() {
        EngineConfig one = new EngineConfig(2, 64, 64, EngineTestSupport.CONTEXT, 256, 16, 0.01, true, true);
        AtomicInteger armed = new AtomicInteger();
        FaultyBackend faulty = new FaultyBackend(i -> armed.get() > 0 ? new IllegalStateException("device lost") : null);
        try (InflightEngine e = new InflightEngine(one, faulty, EngineTestSupport.model().tokenizer())) {
            assertEquals(referenceA, run(e, "before", A, 8));
            armed.set(1);
            List<Recorder> recs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {   // max_num_seqs 2, n 2: most of them wait while the first fails
                Recorder r = new Recorder(2);
                e.submit(request(i % 2 == 0 ? A : B, 8, List.of(), new int[0], 2, -1), r);
                recs.add(r);
            }
            for (Recorder r : recs) {
                r.await();
                assertEquals(2, r.terminalEvents[0] + r.terminalEvents[1], "one terminal event per choice");
                assertNull(r.reasons[0]);
                assertNull(r.reasons[1]);
            }
            awaitStopped(e);
            assertFalse(e.health().alive());
            assertTrue(e.health().failure().contains("3 steps in a row"), e.health().failure());
            var refused = assertThrows(AdmissionException.class, () -> e.submit(greedy("late", A, 4), new Recorder(1)));
            assertEquals(AdmissionException.Reason.ENGINE_FAILED, refused.reason());
            assertTrue(refused.getMessage().contains("device lost"), refused.getMessage());
            awaitIdle(e);   // the stopped engine publishes its last, empty, state after answering everything
        }
    }

    @Test
    void requestsTheEngineThreadHasNotTakenYetCountAsWaiting() throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (InflightEngine e = EngineTestSupport.engine(CONFIG)) {
            Recorder blocking = new Recorder(1) {
                @Override
                public void onStepEnd() {
                    super.onStepEnd();
                    stuck.countDown();
                    EngineFaultIsolationTest.await(release);   // a sink that blocks the engine thread (it must not)
                }
            };
            e.submit(greedy("blocking", A, 2), blocking);
            assertTrue(stuck.await(30, TimeUnit.SECONDS));
            List<Recorder> queued = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Recorder r = new Recorder(1);
                e.submit(greedy("queued-" + i, B, 2), r);
                queued.add(r);
            }
            assertEquals(3, e.stats().waiting(), "taken or not, submitted work is pending");
            release.countDown();
            for (Recorder r : queued) {
                assertEquals(referenceB.subList(0, 2), r.await().tokens(0));
            }
        }
    }

    private static void awaitIdle(InflightEngine e) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (e.stats().running() + e.stats().waiting() > 0) {
            assertTrue(System.nanoTime() < until, "engine not idle: " + e.stats());
            Thread.onSpinWait();
        }
    }

    private static void awaitStopped(InflightEngine e) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (e.health().alive()) {
            assertTrue(System.nanoTime() < until, "engine still alive");
            Thread.onSpinWait();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static GenerationRequest greedy(String id, int[] prompt, int maxTokens) {
        return GenerationRequest.builder(id, prompt).maxTokens(maxTokens).ignoreEos(true).build();
    }

    private static GenerationRequest request(int[] prompt, int maxTokens, List<String> stop, int[] stopIds, int n,
            int promptLogprobs) {
        return GenerationRequest.builder("r", prompt).stop(stop).stopTokenIds(stopIds).maxTokens(maxTokens)
                .ignoreEos(true).n(n).promptLogprobs(promptLogprobs).build();
    }

    private static GenerationRequest sampled(Map<Integer, Float> bias) {
        SamplingParams p = new SamplingParams(0.7f, -1, 1f, 0f, 1f, 0f, 0f, bias, 1L, 0);
        return GenerationRequest.builder("bias", A).sampling(p).maxTokens(4).ignoreEos(true).build();
    }
}
