package io.nereid.engine.core;

import static io.nereid.engine.core.EngineTestSupport.backend;
import static io.nereid.engine.core.EngineTestSupport.config;
import static io.nereid.engine.core.EngineTestSupport.model;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.core.EngineTestSupport.Recorder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Speculative decoding with n-gram drafts: output equal to decoding without drafts (greedy: token
 * for token, with the same logprobs, stops, lengths and usage; sampling: the same distribution),
 * drafts verified in the same step as everything else, no KV left behind.
 */
@Timeout(300)
class SpeculativeDecodingTest {

    private static final int REQUESTS = 12;
    private static int[][] prompts;

    @BeforeAll
    static void prompts() {
        prompts = new int[REQUESTS][];
        for (int i = 0; i < REQUESTS; i++) {
            // a random start, then a phrase repeated: prompt lookup finds matches there and in the
            // loops greedy decoding of a random model falls into
            SplittableRandom r = new SplittableRandom(500 + i);
            int[] phrase = r.ints(3 + i % 5, 3, 320).toArray();
            int[] p = new int[10 + i * 7 + 3 * phrase.length];
            for (int t = 0; t < p.length; t++) {
                p[t] = t < 10 + i * 7 ? 3 + r.nextInt(317) : phrase[(t - 10 - i * 7) % phrase.length];
            }
            prompts[i] = p;
        }
    }

    private static final class Run {
        final List<Recorder> recorders = new ArrayList<>();
        EngineStats stats;
        int blocksInUse;
    }

    /** All requests submitted together (or one after another with {@code alone}), to one engine. */
    private static Run run(DraftProposer proposer, boolean alone, IntFunction<GenerationRequest> request) {
        return run(config(512, 16, true, 64), proposer, alone, request);
    }

    private static Run run(EngineConfig c, DraftProposer proposer, boolean alone, IntFunction<GenerationRequest> request) {
        Run run = new Run();
        try (InflightEngine e = new InflightEngine(c, backend(c), model().tokenizer(), proposer)) {
            for (int i = 0; i < REQUESTS; i++) {
                GenerationRequest q = request.apply(i);
                Recorder r = new Recorder(q.n());
                e.submit(q, r);
                if (alone) {
                    r.await();
                }
                run.recorders.add(r);
            }
            for (Recorder r : run.recorders) {
                r.await();
            }
            run.stats = e.stats();
            run.blocksInUse = e.kvStats().usedBlocks();
        }
        return run;
    }

    private static GenerationRequest greedy(int i, int maxTokens) {
        return GenerationRequest.builder("g" + i, prompts[i]).maxTokens(maxTokens).ignoreEos(true).logprobs(true).build();
    }

    private static void assertSameOutput(Run expected, Run actual, String what) {
        for (int i = 0; i < REQUESTS; i++) {
            Recorder e = expected.recorders.get(i), a = actual.recorders.get(i);
            for (int c = 0; c < e.n; c++) {
                assertEquals(e.tokens.get(c), a.tokens.get(c), what + ": tokens of request " + i);
                assertEquals(e.text[c].toString(), a.text[c].toString(), what + ": text of request " + i);
                assertEquals(e.reasons[c], a.reasons[c], what + ": finish of request " + i);
                assertEquals(e.stopReasons[c], a.stopReasons[c], what + ": stop reason of request " + i);
                assertEquals(e.usages[c].promptTokens(), a.usages[c].promptTokens(), what + ": usage of request " + i);
                assertEquals(e.usages[c].completionTokens(), a.usages[c].completionTokens(), what + ": usage of request " + i);
                assertEquals(e.usages[c].cachedTokens(), a.usages[c].cachedTokens(), what + ": usage of request " + i);
                assertEquals(describe(e.logprobs.get(c)), describe(a.logprobs.get(c)), what + ": logprobs of request " + i);
            }
        }
        assertEquals(0, actual.blocksInUse, what + ": KV blocks left in use");
    }

    /** Every field, the float values by their bits. */
    private static List<String> describe(List<io.nereid.engine.api.TokenLogprob> lps) {
        List<String> out = new ArrayList<>();
        for (var t : lps) {
            int[] top = new int[t.topLogprobs().length];
            for (int k = 0; k < top.length; k++) {
                top[k] = Float.floatToRawIntBits(t.topLogprobs()[k]);
            }
            out.add(t.tokenId() + " " + Float.floatToRawIntBits(t.logprob()) + " " + t.rank() + " "
                    + Arrays.toString(t.topIds()) + " " + Arrays.toString(top));
        }
        return out;
    }

    @Test
    void greedyOutputWithDraftsEqualsOutputWithoutAloneAndBatched() {
        Run reference = run(DraftProposer.NONE, true, i -> greedy(i, 40));
        for (boolean alone : new boolean[] {true, false}) {
            for (NgramProposer p : List.of(new NgramProposer(4, 1, 3, Integer.MAX_VALUE), new NgramProposer(2, 2, 2,
                    Integer.MAX_VALUE), new NgramProposer(8, 1, 5, Integer.MAX_VALUE))) {
                Run r = run(p, alone, i -> greedy(i, 40));
                assertSameOutput(reference, r, p + (alone ? " alone" : " batched"));
                EngineStats.Speculation s = r.stats.speculation();
                assertTrue(s.enabled());
                assertTrue(s.drafts() > 0 && s.acceptedTokens() > 0, p + ": no draft accepted (" + s + "), so nothing was tested");
                assertTrue(s.acceptedTokens() < s.draftTokens(), p + ": every draft accepted, so rejection was not tested");
                assertTrue(r.recorders.stream().anyMatch(x -> x.mostIdsInADelta > 1),
                        p + ": an accepted run streams as one delta of several tokens");
                assertTrue(reference.recorders.stream().allMatch(x -> x.mostIdsInADelta == 1));
            }
        }
        assertFalse(reference.stats.speculation().enabled(), "no proposer, no speculation counters");
    }

    @Test
    void stopsAndLengthsInsideAnAcceptedRunEndTheOutputWhereTheyWouldWithoutDrafts() {
        Run free = run(DraftProposer.NONE, false, i -> greedy(i, 30));
        // per request: a max_tokens that ends mid-run, a stop token id and a stop string taken from its own output
        IntFunction<GenerationRequest> bounded = i -> {
            List<Integer> out = free.recorders.get(i).tokens.get(0);
            String text = free.recorders.get(i).text[0].toString();
            GenerationRequest.Builder b = GenerationRequest.builder("b" + i, prompts[i]).ignoreEos(true).logprobs(true);
            return switch (i % 3) {
                case 0 -> b.maxTokens(3 + i % 7).build();
                case 1 -> b.maxTokens(30).stopTokenIds(new int[] {out.get(5 + i % 9)}).build();
                default -> b.maxTokens(30).stop(List.of(text.substring(text.length() / 3, text.length() / 3 + 3))).build();
            };
        };
        Run reference = run(DraftProposer.NONE, false, bounded);
        Run speculative = run(new NgramProposer(6, 1, 4, Integer.MAX_VALUE), false, bounded);
        assertSameOutput(reference, speculative, "bounded");
        for (Recorder r : speculative.recorders) {
            assertTrue(r.reasons[0] == FinishReason.LENGTH || r.reasons[0] == FinishReason.STOP);
        }
        assertTrue(speculative.stats.speculation().acceptedTokens() > 0);
    }

    @Test
    void preemptionAndForksMidSpeculationChangeNothing() {
        Run reference = run(DraftProposer.NONE, false, i -> greedy(i, 40));
        // 30 blocks of 16 for 12 sequences of up to ~100 tokens: running ones are preempted and recomputed
        NgramProposer p = new NgramProposer(4, 1, 3, Integer.MAX_VALUE);
        Run r = run(config(30, 16, true, 64), p, false, i -> greedy(i, 40));
        assertTrue(r.stats.preemptions() > 0, "the pool was small enough to force preemption");
        assertTrue(r.stats.speculation().acceptedTokens() > 0);
        assertSameOutput(reference, r, "preempted");
        // n = 3 greedy choices: every choice speculates on its own fork and equals the reference
        Run forks = run(p, false, i -> GenerationRequest.builder("n" + i, prompts[i]).maxTokens(24).ignoreEos(true).n(3)
                .build());
        for (int i = 0; i < REQUESTS; i++) {
            List<Integer> expected = reference.recorders.get(i).tokens.get(0).subList(0, 24);
            for (int c = 0; c < 3; c++) {
                assertEquals(expected, forks.recorders.get(i).tokens.get(c), "request " + i + " choice " + c);
            }
        }
        assertEquals(0, forks.blocksInUse);
    }

    @Test
    void requestsCancelledMidSpeculationLeaveNoBlocksBehind() {
        EngineConfig c = config(256, 16, true, 128);
        try (InflightEngine e = new InflightEngine(c, backend(c), model().tokenizer(), new NgramProposer(4, 1, 3,
                Integer.MAX_VALUE))) {
            SplittableRandom random = new SplittableRandom(9);
            List<Recorder> recs = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                Recorder r = new Recorder(1);
                r.cancelAfterTokens = 1 + random.nextInt(12);
                r.handle = e.submit(greedy(i % REQUESTS, 30), r);
                recs.add(r);
            }
            for (Recorder r : recs) {
                r.await();
                assertEquals(1, r.terminalEvents[0]);
                assertEquals(0, r.deltasAfterTerminal);
            }
            assertTrue(e.stats().speculation().acceptedTokens() > 0);
            assertEquals(0, e.kvStats().usedBlocks(), "every block is free again");
        }
    }

    /** The test model again, quantized to Q8_0: a draft close to the target but not equal to it. */
    private static synchronized io.nereid.engine.cpu.CpuModel quantizedCopy() throws java.io.IOException {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("nereid-draft");
        java.nio.file.Path file = dir.resolve("draft.gguf");
        io.nereid.engine.model.RandomModelWriter.write(new io.nereid.engine.model.RandomModelWriter.Spec(
                io.nereid.engine.model.Architecture.LLAMA, 64, 2, 4, 2, 96, 320, EngineTestSupport.CONTEXT,
                io.nereid.engine.gguf.GgmlType.Q8_0, false, 11), file);
        file.toFile().deleteOnExit();
        dir.toFile().deleteOnExit();
        return io.nereid.engine.cpu.CpuModel.open(file);
    }

    @Test
    void aDraftModelGivesTheTargetsOutputAndTheTargetAsItsOwnDraftIsAlwaysAccepted() throws Exception {
        Run reference = run(DraftProposer.NONE, false, i -> greedy(i, 40));
        EngineConfig c = config(512, 16, true, 64);
        // the target itself as the draft: batch invariance makes its drafts the target's choices, all kept
        var self = backend(c);
        try {
            DraftModelProposer p = new DraftModelProposer(self, c.numBlocks(), c.blockSize(), c.maxModelLen(), 4, 64,
                    Integer.MAX_VALUE);
            for (boolean alone : new boolean[] {true, false}) {
                Run r = run(p, alone, i -> greedy(i, 40));
                assertSameOutput(reference, r, "self-draft" + (alone ? " alone" : " batched"));
                EngineStats.Speculation s = r.stats.speculation();
                assertTrue(s.draftTokens() > 100, s.toString());
                assertEquals(s.draftTokens(), s.acceptedTokens(), "every draft of the target itself is kept");
                assertEquals(c.numBlocks(), p.freeBlocks(), "the draft's blocks are all free again");
            }
        } finally {
            self.close();
        }
        // a quantized copy: most drafts kept, some replaced, the output still the target's
        try (var q = quantizedCopy()) {
            var draft = q.backend(io.nereid.engine.cpu.kernel.Kernels.provider(), io.nereid.engine.cpu.RangeRunner.SERIAL,
                    io.nereid.engine.backend.KvPrecision.F32, c.numBlocks(), c.blockSize(), c.maxModelLen());
            try {
                DraftModelProposer p = new DraftModelProposer(draft, c.numBlocks(), c.blockSize(), c.maxModelLen(), 3, 16,
                        Integer.MAX_VALUE);
                Run r = run(p, false, i -> greedy(i, 40));
                assertSameOutput(reference, r, "Q8_0 draft");
                EngineStats.Speculation s = r.stats.speculation();
                assertTrue(s.acceptedTokens() > s.draftTokens() / 2 && s.acceptedTokens() < s.draftTokens(), s.toString());
                assertEquals(c.numBlocks(), p.freeBlocks());
            } finally {
                draft.close();
            }
        }
    }

    @Test
    void noDraftsAboveTheBatchSizeLimit() {
        Run r = run(new NgramProposer(4, 1, 3, 2), false, i -> greedy(i, 20));
        Run reference = run(DraftProposer.NONE, false, i -> greedy(i, 20));
        assertSameOutput(reference, r, "limited");
        // 12 requests at once: drafts only once at most 2 are still running
        assertTrue(r.stats.speculation().drafts() < run(new NgramProposer(4, 1, 3, Integer.MAX_VALUE), false,
                i -> greedy(i, 20)).stats.speculation().drafts());
    }

    /** Passes everything to an n-gram proposer and counts the verifications and timed decode steps it hears of. */
    private static final class Hearing implements DraftProposer {
        final NgramProposer inner = new NgramProposer(4, 1, 3, Integer.MAX_VALUE);
        long drafted;
        long accepted;
        int steps;
        final List<String> badSteps = new ArrayList<>();

        @Override
        public int[] propose(Object sequence, int[] tokens, int length, int max) {
            return inner.propose(sequence, tokens, length, max);
        }

        @Override
        public void verified(Object sequence, int drafted, int accepted) {
            this.drafted += drafted;
            this.accepted += accepted;
        }

        @Override
        public void stepTimed(int sequences, int tokens, long nanos) {
            steps++;
            if (sequences < 1 || tokens < sequences || tokens > sequences * 5 || nanos <= 0) {
                badSteps.add(sequences + " sequences, " + tokens + " tokens, " + nanos + " ns");
            }
        }
    }

    @Test
    void anAdaptiveDraftLengthChangesNothingButTheSpeedAndHearsEveryVerification() {
        Run reference = run(DraftProposer.NONE, true, i -> greedy(i, 40));
        for (boolean alone : new boolean[] {true, false}) {
            Hearing hearing = new Hearing();
            Run r = run(new AdaptiveDraftLength(hearing, 4, 512), alone, i -> greedy(i, 40));
            assertSameOutput(reference, r, "adaptive" + (alone ? " alone" : " batched"));
            EngineStats.Speculation s = r.stats.speculation();
            // every verification but those of a slice its sequence finished in (a stop may cut the accepted run)
            assertTrue(hearing.drafted > 0 && hearing.drafted <= s.draftTokens(), hearing.drafted + " of " + s);
            assertTrue(hearing.accepted <= s.acceptedTokens() && hearing.accepted <= hearing.drafted,
                    hearing.accepted + " of " + s);
            assertTrue(s.draftTokens() - hearing.drafted <= 4L * REQUESTS, "only finishing slices' drafts unheard: "
                    + hearing.drafted + " of " + s);
            // decode-only steps, each 1 + k tokens a sequence; at least one a request
            assertTrue(hearing.steps >= REQUESTS && hearing.badSteps.isEmpty(), hearing.steps + " " + hearing.badSteps);
        }
    }

    /**
     * Lossless sampling end to end: the distribution of the second token (the first a draft can be
     * verified for) is the same with and without drafts. The drafts are good ones, so that both
     * acceptance and rejection happen often: for each first token the no-draft run produced, the
     * greedy choice after it. Chi-square homogeneity over 3,000 seeded requests per arm at the
     * 0.1 % point: a verifier that kept drafts too often or too rarely fails it.
     */
    @Test
    void sampledTokensHaveTheSameDistributionWithAndWithoutDrafts() {
        int[] prompt = prompts[3];
        int samples = 3000;
        long[][] counts = new long[2][320];
        // arm 0: no drafts
        List<Recorder> first = sample(DraftProposer.NONE, prompt, samples, 0, new long[2]);
        int[] best = new int[320];
        Arrays.fill(best, -1);
        EngineConfig c = config(1024, 16, true, 256);
        try (InflightEngine e = new InflightEngine(c, backend(c), model().tokenizer(), DraftProposer.NONE)) {
            for (Recorder r : first) {
                int t1 = r.tokens.get(0).get(0);
                counts[0][r.tokens.get(0).get(1)]++;
                if (best[t1] < 0) {
                    int[] extended = Arrays.copyOf(prompt, prompt.length + 1);
                    extended[prompt.length] = t1;
                    Recorder g = new Recorder(1);
                    e.submit(GenerationRequest.builder("best" + t1, extended).maxTokens(1).ignoreEos(true).build(), g);
                    best[t1] = g.await().tokens.get(0).get(0);
                }
            }
        }
        // arm 1: after the first token, its greedy successor as the one draft
        DraftProposer good = (sequence, tokens, length, max) -> length == prompt.length + 1 ? new int[] {best[tokens[length - 1]]}
                : new int[0];
        long[] speculation = new long[2];
        List<Recorder> second = sample(good, prompt, samples, 1_000_003L, speculation);
        for (Recorder r : second) {
            counts[1][r.tokens.get(0).get(1)]++;
        }
        assertEquals(samples, speculation[0], "every second token is a verified draft");
        assertTrue(speculation[1] > samples / 10 && speculation[1] < samples * 9 / 10,
                "drafts accepted " + speculation[1] + " of " + samples + ": acceptance and rejection both need testing");
        double[] h = homogeneity(counts);
        double chi2 = h[0];
        int df = (int) h[1];
        assertTrue(df >= 3, "too few distinct second tokens to test: " + df);
        assertTrue(chi2 < critical001(df), "chi-square " + chi2 + " with " + df + " degrees of freedom: "
                + Arrays.toString(counts[0]) + " vs " + Arrays.toString(counts[1]));
    }

    /**
     * A draft model samples its drafts from its own distribution q under the request's parameters, and the
     * verifier keeps each with probability min(1, p/q): with the target as its own draft (q = p, the
     * same bits by batch invariance) every sampled draft is kept, and the second token's distribution is
     * the no-draft one (chi-square homogeneity over 3,000 seeded requests per arm, 0.1 % point).
     */
    @Test
    void aDraftModelSamplesItsDraftsFromQAndStaysLossless() throws Exception {
        int[] prompt = prompts[3];
        int samples = 3000;
        List<Recorder> plain = sample(DraftProposer.NONE, prompt, samples, 0, new long[2]);
        EngineConfig c = config(1024, 16, true, 256);
        var self = backend(c);
        long[] speculation = new long[2];
        List<Recorder> drafted;
        try {
            DraftModelProposer p = new DraftModelProposer(self, c.numBlocks(), c.blockSize(), c.maxModelLen(), 1, 64,
                    Integer.MAX_VALUE);
            drafted = sample(p, prompt, samples, 1_000_003L, speculation);
        } finally {
            self.close();
        }
        assertTrue(speculation[0] >= samples, "drafts " + speculation[0]);
        assertEquals(speculation[0], speculation[1], "q = p: every sampled draft is kept");
        long[][] counts = new long[2][320];
        for (Recorder r : plain) {
            counts[0][r.tokens.get(0).get(1)]++;
        }
        for (Recorder r : drafted) {
            counts[1][r.tokens.get(0).get(1)]++;
        }
        double[] h = homogeneity(counts);
        double chi2 = h[0];
        int df = (int) h[1];
        assertTrue(df >= 3, "too few distinct second tokens to test: " + df);
        assertTrue(chi2 < critical001(df), "chi-square " + chi2 + " with " + df + " degrees of freedom");
    }

    /** {@code samples} two-token requests at temperature 0.8, top-k 4, seeds from {@code seedBase}; drafts and accepted tokens into {@code speculation}. */
    private static List<Recorder> sample(DraftProposer proposer, int[] prompt, int samples, long seedBase, long[] speculation) {
        EngineConfig c = config(1024, 16, true, 256);
        List<Recorder> all = new ArrayList<>();
        try (InflightEngine e = new InflightEngine(c, backend(c), model().tokenizer(), proposer)) {
            for (int i = 0; i < samples; i++) {
                SamplingParams seeded = new SamplingParams(0.8f, 4, 1f, 0f, 1f, 0f, 0f, Map.of(), seedBase + i * 7919L, 0);
                Recorder r = new Recorder(1);
                e.submit(GenerationRequest.builder("s" + i, prompt).maxTokens(2).ignoreEos(true).sampling(seeded).build(), r);
                all.add(r);
                if (i % 64 == 63) {
                    all.get(i).await();
                }
            }
            for (Recorder r : all) {
                r.await();
            }
            speculation[0] = e.stats().speculation().drafts();
            speculation[1] = e.stats().speculation().acceptedTokens();
        }
        return all;
    }

    /** Chi-square homogeneity of two arms of equal size over the tokens either saw: {statistic, degrees of freedom}. */
    static double[] homogeneity(long[][] counts) {
        double chi2 = 0;
        int df = -1;
        for (int t = 0; t < counts[0].length; t++) {
            long total = counts[0][t] + counts[1][t];
            if (total == 0) {
                continue;
            }
            df++;
            for (int arm = 0; arm < 2; arm++) {
                double expected = total / 2.0;
                chi2 += (counts[arm][t] - expected) * (counts[arm][t] - expected) / expected;
            }
        }
        return new double[] {chi2, df};
    }

    /** The chi-square distribution's 0.1 % upper point (Wilson-Hilferty). */
    static double critical001(int df) {
        double z = 3.090;
        double a = 2.0 / (9 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }

    @Test
    void ngramProposerTakesTheLongestSuffixMatchAndItsEarliestOccurrence() {
        NgramProposer p = new NgramProposer(3, 1, 3, Integer.MAX_VALUE);
        //           0  1  2  3  4  5  6  7  8  9
        int[] t = {5, 6, 7, 8, 5, 6, 9, 1, 5, 6};
        // suffix "5 6": occurrences at 0 (-> 7 8 5) and 4 (-> 9 1 5); the earliest, as vLLM
        assertArrayEquals(new int[] {7, 8, 5}, p.propose(null, t, t.length, 8));
        assertArrayEquals(new int[] {7}, p.propose(null, t, t.length, 1));
        // in a run of repeats the earliest occurrence leaves the most to propose ("4 4 4" at 1, not 2)
        int[] run = {3, 4, 4, 4, 4, 4};
        assertArrayEquals(new int[] {4, 4}, p.propose(null, run, run.length, 8));
        // "1 5 6" does not recur; "8 5 6"? no: longest recurring suffix is 2 long
        int[] u = {1, 2, 3, 4, 2, 3, 4};
        assertArrayEquals(new int[] {2, 3, 4}, p.propose(null, u, u.length, 8));   // "2 3 4" at 1 -> "2 3 4"
        assertArrayEquals(new int[0], p.propose(null, new int[] {1, 2, 3}, 3, 8));
        assertArrayEquals(new int[0], new NgramProposer(3, 2, 3, Integer.MAX_VALUE).propose(null, new int[] {1, 2, 1}, 3, 8));
        // the drafts run on to the end of the sequence at most
        assertArrayEquals(new int[] {2, 1}, new NgramProposer(3, 1, 3, Integer.MAX_VALUE).propose(null, new int[] {1, 2, 1}, 3, 8));
        // only [0, length) is read
        assertArrayEquals(new int[] {9, 4}, p.propose(null, new int[] {4, 9, 4, 4, 9}, 3, 8));
    }
}
