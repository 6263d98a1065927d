package io.nereid.engine.core;

import static io.nereid.engine.core.EngineTestSupport.config;
import static io.nereid.engine.core.EngineTestSupport.engine;
import static io.nereid.engine.core.EngineTestSupport.prompt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.core.EngineTestSupport.Recorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(300)
class InflightEngineTest {

    private static final int REQUESTS = 16;
    private static int[][] prompts;
    private static List<List<Integer>> alone;

    @BeforeAll
    static void referenceRunsAlone() {
        prompts = new int[REQUESTS][];
        for (int i = 0; i < REQUESTS; i++) {
            prompts[i] = prompt(1000 + i, 3 + (i * 37) % 150 + (i == 5 ? 200 : 0)); // one prompt longer than the budget
        }
        alone = new ArrayList<>();
        try (InflightEngine e = engine(config(256, 16, false, 64))) {
            for (int i = 0; i < REQUESTS; i++) {
                Recorder r = new Recorder(1);
                e.submit(greedy("alone-" + i, prompts[i], 12), r);
                alone.add(r.await().tokens(0));
                assertEquals(FinishReason.LENGTH, r.reasons[0]);
            }
        }
    }

    private static List<List<Integer>> together(EngineConfig c, long[] preemptions) {
        try (InflightEngine e = engine(c)) {
            List<Recorder> recs = new ArrayList<>();
            for (int i = 0; i < REQUESTS; i++) {
                Recorder r = new Recorder(1);
                e.submit(greedy("together-" + i, prompts[i], 12), r);
                recs.add(r);
            }
            List<List<Integer>> out = new ArrayList<>();
            for (Recorder r : recs) {
                out.add(r.await().tokens(0));
                assertEquals(0, r.deltasAfterTerminal);
                assertEquals(1, r.terminalEvents[0]);
            }
            preemptions[0] = e.stats().preemptions();
            return out;
        }
    }

    @Test
    void greedyOutputIsTheSameAloneOrBatchedWithAndWithoutPrefixCachingAndAcrossBlockSizes() {
        long[] p = new long[1];
        for (boolean prefix : new boolean[] {true, false}) {
            for (int bs : new int[] {16, 32}) {
                assertEquals(alone, together(config(512, bs, prefix, 64), p), "prefix " + prefix + ", block size " + bs);
            }
        }
    }

    @Test
    void preemptionUnderMemoryPressureDoesNotChangeTheOutput() {
        long[] p = new long[1];
        // 40 blocks of 16 = 640 slots for 16 sequences of up to 365 tokens: running ones must be preempted.
        assertEquals(alone, together(config(41, 16, true, 64), p));
        assertTrue(p[0] > 0, "the pool was small enough to force preemption");
    }

    @Test
    void unchunkedPrefillGivesTheSameOutput() {
        long[] p = new long[1];
        EngineConfig c = config(512, 16, true, 64);
        EngineConfig whole = new EngineConfig(c.maxNumSeqs(), c.maxNumBatchedTokens(), c.maxWaiting(), c.maxModelLen(),
                c.numBlocks(), c.blockSize(), c.watermark(), c.prefixCaching(), false);
        assertEquals(alone, together(whole, p));
    }

    @Test
    void aPassedDeadlineFinishesTheRequestAndFreesItsBlocks() {
        try (InflightEngine e = engine(config(256, 16, true, 64))) {
            Recorder r = new Recorder(2);
            // Already past when the engine first sees it: checked before any scheduling, so deterministic.
            e.submit(GenerationRequest.builder("late", prompts[1]).maxTokens(1000).ignoreEos(true).n(2)
                    .deadline(java.time.Instant.now().minusMillis(1)).build(), r);
            r.await();
            assertEquals(FinishReason.DEADLINE, r.reasons[0]);
            assertEquals(FinishReason.DEADLINE, r.reasons[1]);
            assertEquals(0, r.tokens(0).size());
            awaitIdle(e);
            assertEquals(0, e.kvStats().usedBlocks());
        }
    }

    @Test
    void eachStepsEventsEndWithOneStepEndAndTheLastTokenSharesItsStepWithTheFinish() {
        try (InflightEngine e = engine(config(256, 16, true, 64))) {
            Recorder r = new Recorder(1);
            e.submit(greedy("steps", prompts[0], 4), r);
            assertEquals(List.of("delta 0", "step end", "delta 0", "step end", "delta 0", "step end",
                    "delta 0", "finish 0", "step end"), r.await().log());
        }
    }

    @Test
    void aShutdownsCancellationIsFollowedByAStepEnd() {
        Recorder r = new Recorder(1);
        try (InflightEngine e = engine(config(256, 16, true, 64))) {
            e.submit(greedy("cut", prompts[0], EngineTestSupport.CONTEXT - prompts[0].length), r);
        }
        r.await();
        assertEquals(FinishReason.CANCELLED, r.reasons[0]);
        assertEquals(List.of("finish 0", "step end"), r.log().subList(r.log().size() - 2, r.log().size()));
    }

    /**
     * Submits racing close(): every submit either is refused (SHUTTING_DOWN) or gets exactly one
     * terminal event — none is left unanswered by an engine thread that already stopped. 20 rounds.
     */
    @Test
    void everySubmitRacingCloseIsRefusedOrAnswered() throws Exception {
        for (int round = 0; round < 20; round++) {
            List<Recorder> admitted = java.util.Collections.synchronizedList(new ArrayList<>());
            InflightEngine e = engine(config(256, 16, true, 64));
            List<Thread> submitters = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                int id = t;
                submitters.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; ; i++) {
                        Recorder r = new Recorder(1);
                        try {
                            e.submit(greedy("race-" + id + "-" + i, prompts[i % prompts.length], 2), r);
                        } catch (AdmissionException refused) {
                            if (refused.reason() == AdmissionException.Reason.SHUTTING_DOWN) {
                                return;
                            }
                            Thread.onSpinWait();   // the waiting queue is full: try again
                            continue;
                        }
                        admitted.add(r);
                    }
                }));
            }
            Thread.sleep(round % 5);
            e.close();
            for (Thread t : submitters) {
                t.join(30_000);
            }
            for (Recorder r : admitted) {
                r.await();
                assertEquals(1, r.terminalEvents[0]);
            }
        }
    }

    @Test
    void seededSamplingGivesTheSameTokensAloneOrBatched() {
        SamplingParams sp = new SamplingParams(1f, -1, 0.95f, 0f, 1f, 0f, 0f, Map.of(), 1234L, 0);
        GenerationRequest q = GenerationRequest.builder("seeded", prompts[3]).sampling(sp).maxTokens(16)
                .ignoreEos(true).build();
        List<Integer> a;
        try (InflightEngine e = engine(config(256, 16, true, 64))) {
            Recorder r = new Recorder(1);
            e.submit(q, r);
            a = r.await().tokens(0);
        }
        try (InflightEngine e = engine(config(256, 16, true, 64))) {
            List<Recorder> others = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Recorder o = new Recorder(1);
                e.submit(greedy("noise-" + i, prompts[i], 16), o);
                others.add(o);
            }
            Recorder r = new Recorder(1);
            e.submit(q, r);
            assertEquals(a, r.await().tokens(0));
            others.forEach(Recorder::await);
        }
    }

    @Test
    void aSharedThousandTokenPrefixIsReusedAndOnlyTheRestIsComputed() {
        int[] prefix = prompt(77, 1000);
        int[] first = concat(prefix, prompt(78, 10));
        int[] second = concat(prefix, prompt(79, 20));
        try (InflightEngine e = engine(config(256, 16, true, 512))) {
            Recorder one = new Recorder(1);
            e.submit(greedy("first", first, 4), one);
            Recorder warm = new Recorder(1);
            e.submit(greedy("first-again", first, 1), warm);
            one.await();
            warm.await();
            long before = awaitIdle(e).promptTokens();
            Recorder r = new Recorder(1);
            e.submit(greedy("second", second, 4), r);
            r.await();
            awaitIdle(e);
            assertTrue(r.usages[0].cachedTokens() >= 992, "cached " + r.usages[0].cachedTokens());
            assertEquals(second.length - r.usages[0].cachedTokens(), e.stats().promptTokens() - before,
                    "only the uncached part of the prompt was computed");
        }
    }

    @Test
    void aThousandRequestsCancelledAtRandomPointsLeaveNoBlocksBehind() {
        try (InflightEngine e = engine(config(256, 16, true, 128))) {
            SplittableRandom random = new SplittableRandom(5);
            List<Recorder> recs = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                int cancelAfter = random.nextInt(6); // 0: at once; k: after k tokens
                Recorder r = new Recorder(1);
                r.cancelAfterTokens = cancelAfter;
                RequestHandle h = e.submit(greedy("c-" + i, prompt(i, 1 + random.nextInt(40)), 8), r);
                r.handle = h;
                if (cancelAfter == 0) {
                    h.cancel();
                    h.cancel(); // idempotent
                }
                recs.add(r);
            }
            for (Recorder r : recs) {
                r.await();
                assertEquals(1, r.terminalEvents[0]);
                assertEquals(0, r.deltasAfterTerminal);
            }
            assertEquals(0, e.kvStats().usedBlocks(), "every block is free again");
            Recorder again = new Recorder(1);
            e.submit(greedy("after", prompts[2], 12), again);
            assertEquals(alone.get(2), again.await().tokens(0));
        }
    }

    @Test
    void stopStringsStopTokenIdsAndMinTokens() {
        List<Integer> ref = alone.get(4);
        String refText = EngineTestSupport.model().tokenizer().decode(ref.stream().mapToInt(Integer::intValue).toArray(), true);
        try (InflightEngine e = engine(config(256, 16, true, 64))) {
            // A stop string taken from the middle of the greedy text, spanning token boundaries.
            String stop = refText.substring(refText.length() / 3, refText.length() / 3 + 5);
            Recorder r = new Recorder(1);
            e.submit(GenerationRequest.builder("stop", prompts[4]).stop(List.of(stop)).maxTokens(12).build(), r);
            r.await();
            assertEquals(FinishReason.STOP, r.reasons[0]);
            assertEquals(stop, r.stopReasons[0]);
            assertEquals(refText.substring(0, refText.indexOf(stop)), r.text[0].toString());

            // The first greedy token as a stop token id: it ends at once, unless min_tokens holds it back.
            int first = ref.get(0);
            Recorder s = new Recorder(1);
            e.submit(GenerationRequest.builder("stop-id", prompts[4]).stopTokenIds(new int[] {first}).maxTokens(12)
                    .build(), s);
            s.await();
            assertEquals(List.of(first), s.tokens(0));
            assertEquals(first, s.stopReasons[0]);
            Recorder m = new Recorder(1);
            e.submit(GenerationRequest.builder("min", prompts[4]).stopTokenIds(new int[] {first}).maxTokens(12)
                    .minTokens(3).build(), m);
            m.await();
            assertTrue(m.tokens(0).size() >= 3, "min_tokens 3: " + m.tokens(0));
            assertTrue(m.tokens(0).get(0) != first, "the stop id is suppressed before min_tokens");
        }
    }

    @Test
    void nChoicesShareOnePrefillAndSampleSeparately() {
        try (InflightEngine e = engine(config(256, 16, false, 512))) {
            SamplingParams sp = new SamplingParams(1.5f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), 99L, 0);
            Recorder r = new Recorder(3);
            e.submit(GenerationRequest.builder("n3", prompts[7]).sampling(sp).maxTokens(6).ignoreEos(true).n(3)
                    .build(), r);
            r.await();
            for (int c = 0; c < 3; c++) {
                assertEquals(FinishReason.LENGTH, r.reasons[c]);
                assertEquals(6, r.tokens(c).size());
            }
            assertTrue(!r.tokens(0).equals(r.tokens(1)) || !r.tokens(1).equals(r.tokens(2)), "choices differ");
            assertEquals(prompts[7].length, e.stats().promptTokens(), "the prompt was computed once");
        }
    }

    @Test
    void requestsThatCanNeverFitAndAFullQueueAreTypedErrorsAndDisturbNothing() throws Exception {
        EngineConfig small = new EngineConfig(1, 64, 2, EngineTestSupport.CONTEXT, 9, 16, 0.01, true, true);
        java.util.concurrent.CountDownLatch inForward = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        var m = EngineTestSupport.model();
        Backend gated = new io.nereid.engine.backend.ForwardingBackend(EngineTestSupport.backend(small)) {
            @Override
            public io.nereid.engine.backend.StepOutput forward(io.nereid.engine.backend.Step step) {
                inForward.countDown();
                try {
                    release.await();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                return super.forward(step);
            }
        };
        try (InflightEngine e = new InflightEngine(small, gated, m.tokenizer())) {
            var never = assertThrows(RequestValidationException.class,
                    () -> e.submit(greedy("huge", prompt(1, 100), 100), new Recorder(1)));
            assertTrue(never.getMessage().contains("KV blocks"), never.getMessage());
            var context = assertThrows(RequestValidationException.class,
                    () -> e.submit(greedy("ctx", prompt(1, 10), EngineTestSupport.CONTEXT), new Recorder(1)));
            assertEquals("max_tokens", context.param());

            Recorder a = new Recorder(1);
            e.submit(greedy("a", prompts[0], 3), a);
            inForward.await();                 // "a" is running; the engine thread is inside forward
            Recorder b = new Recorder(1);
            Recorder c = new Recorder(1);
            e.submit(greedy("b", prompts[1], 3), b);
            e.submit(greedy("c", prompts[2], 3), c);
            var full = assertThrows(AdmissionException.class,
                    () -> e.submit(greedy("d", prompts[3], 3), new Recorder(1)));
            assertEquals(AdmissionException.Reason.QUEUE_FULL, full.reason());
            assertNotNull(full.retryAfter());
            release.countDown();
            assertEquals(alone.get(0).subList(0, 3), a.await().tokens(0));
            assertEquals(alone.get(1).subList(0, 3), b.await().tokens(0));
            assertEquals(alone.get(2).subList(0, 3), c.await().tokens(0));
        }
    }

    /** Stats are published after each step; wait for the one after the last event. */
    private static io.nereid.engine.api.EngineStats awaitIdle(InflightEngine e) {
        long until = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < until) {
            var s = e.stats();
            if (s.running() == 0 && s.waiting() == 0) {
                return s;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("engine not idle after 30 s: " + e.stats());
    }

    /** Greedy with ignore_eos, so the random model's output length is always max_tokens. */
    private static GenerationRequest greedy(String id, int[] prompt, int maxTokens) {
        return GenerationRequest.builder(id, prompt).maxTokens(maxTokens).ignoreEos(true).build();
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
