package io.nereid.engine.core;

import static io.nereid.engine.core.EngineTestSupport.backend;
import static io.nereid.engine.core.EngineTestSupport.config;
import static io.nereid.engine.core.EngineTestSupport.model;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.ForwardingBackend;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.core.EngineTestSupport.Recorder;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.backend.ChosenLogprobs;
import io.nereid.engine.sampling.Distribution;
import io.nereid.engine.sampling.RawLogprobs;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.SamplingChain;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Slice#choice()}: the engine lets the backend choose a slice's tokens exactly where it would choose
 * them from the raw logits alone (greedy: the argmax; sampling from the whole softmax, or from a top-k of at
 * most {@link TokenChoice#MAX_TOP_K} or the vocabulary cut by top-p and min-p: a draw whose number the engine takes from the
 * sequence's generator), with no active logits processor and no prompt scoring (logprobs come with the tokens:
 * {@link StepOutput#logprobs()}); and a backend that answers those slices with the tokens ({@link StepOutput#chosen()}, as a
 * device backend does to spare the copy) gives the same output as one that returns the rows: alone,
 * batched, with n &gt; 1 forks and with speculative drafts, greedy or seeded sampling.
 */
@Timeout(300)
class TokenChoiceTest {

    private static final int REQUESTS = 6;
    private static final int MAX_TOKENS = 12;

    /**
     * Answers the slices with a choice with the tokens chosen on the host as {@link Distribution#choose} defines
     * (unless {@code choose} is off); counts the slices that sampled either way.
     */
    static final class ChoosingBackend extends ForwardingBackend {
        final boolean choose;
        final boolean lie;   // answers every logit slice with tokens, choice or not
        int drop;            // reports this many alternatives fewer than asked (a backend bug)
        int scoreShort;      // scores this many prompt tokens fewer than asked (a backend bug)
        int withLogprobs;    // slices answered with tokens and their logprobs
        int scoredSlices;    // slices whose prompt tokens it scored (their rows left out)
        int argmaxSlices;
        int drawSlices;
        int logitSlices;

        ChoosingBackend(Backend backend, boolean choose, boolean lie) {
            super(backend);
            this.choose = choose;
            this.lie = lie;
        }

        @Override
        public StepOutput forward(Step step) {
            StepOutput out = super.forward(step);
            float[][] logits = out.logits().clone();
            int[][] ids = new int[logits.length][];
            ChosenLogprobs[][] logprobs = new ChosenLogprobs[logits.length][];
            ChosenLogprobs[][] scored = new ChosenLogprobs[logits.length][];
            for (int i = 0; i < logits.length; i++) {
                Slice s = step.slices().get(i);
                if (s.scoring() != null && choose) {   // the scored rows' records; the rows after them come back
                    int k = s.scoring().ids().length;
                    scored[i] = new ChosenLogprobs[k - scoreShort];
                    for (int r = 0; r < scored[i].length; r++) {
                        SampledToken t = RawLogprobs.score(out.row(i, r), s.scoring().ids()[r], s.scoring().topLogprobs());
                        scored[i][r] = new ChosenLogprobs(t.logprob(), t.rank(), t.topIds(), t.topLogprobs());
                    }
                    int rest = out.rows(i) - k;
                    logits[i] = rest == 0 ? null
                            : Arrays.copyOfRange(out.logits()[i], k * out.vocabSize(), (k + rest) * out.vocabSize());
                    scoredSlices++;
                    continue;
                }
                TokenChoice c = s.choice();
                if (c != null && c.argmax()) {
                    argmaxSlices++;
                } else if (c != null) {
                    drawSlices++;
                } else if (s.logitRows() > 0) {
                    logitSlices++;
                }
                if ((c != null && choose) || (lie && s.logitRows() > 0)) {
                    ids[i] = new int[out.rows(i)];
                    logprobs[i] = c != null && c.logprobs() ? new ChosenLogprobs[ids[i].length] : null;
                    for (int r = 0; r < ids[i].length; r++) {
                        ids[i][r] = Distribution.choose(c != null ? c : TokenChoice.ARGMAX, out.row(i, r));
                        if (logprobs[i] != null) {
                            SampledToken t = RawLogprobs.score(out.row(i, r), ids[i][r], c.topLogprobs() - drop);
                            logprobs[i][r] = new ChosenLogprobs(t.logprob(), t.rank(), t.topIds(), t.topLogprobs());
                        }
                    }
                    logits[i] = null;
                    withLogprobs += logprobs[i] != null ? 1 : 0;
                }
            }
            return new StepOutput(logits, out.vocabSize(), out.hidden(), out.hiddenSize(), ids, logprobs, scored);
        }
    }

    private record Run(List<Recorder> recorders, ChoosingBackend backend) {
    }

    private static Run run(boolean choose, boolean lie, DraftProposer proposer, IntFunction<GenerationRequest> request) {
        EngineConfig c = config(256, 16, true, 64);
        ChoosingBackend backend = new ChoosingBackend(backend(c), choose, lie);
        List<Recorder> recorders = new ArrayList<>();
        try (InflightEngine e = new InflightEngine(c, backend, model().tokenizer(), proposer)) {
            for (int i = 0; i < REQUESTS; i++) {
                GenerationRequest q = request.apply(i);
                Recorder r = new Recorder(q.n());
                e.submit(q, r);
                recorders.add(r);
            }
            for (Recorder r : recorders) {
                r.await();
            }
        }
        return new Run(recorders, backend);
    }

    private static GenerationRequest.Builder request(int i) {
        return GenerationRequest.builder("r" + i, EngineTestSupport.prompt(40 + i, 5 + 9 * i)).maxTokens(MAX_TOKENS)
                .ignoreEos(true);
    }

    private static void assertSameOutput(Run expected, Run actual, String what) {
        for (int i = 0; i < REQUESTS; i++) {
            Recorder e = expected.recorders.get(i);
            Recorder a = actual.recorders.get(i);
            for (int c = 0; c < e.n; c++) {
                assertNotNull(e.reasons[c], what + ": request " + i + " failed in the reference");
                assertEquals(e.tokens(c), a.tokens(c), what + ": tokens of request " + i + " choice " + c);
                assertEquals(e.text[c].toString(), a.text[c].toString(), what + ": text of request " + i);
                assertEquals(e.reasons[c], a.reasons[c], what + ": finish of request " + i);
            }
        }
    }

    @Test
    void greedyRequestsAskForTheArgmaxOnlyAndGetTheSameOutputFromIds() {
        Run rows = run(false, false, DraftProposer.NONE, i -> request(i).build());
        Run ids = run(true, false, DraftProposer.NONE, i -> request(i).build());
        assertSameOutput(rows, ids, "greedy");
        assertEquals(REQUESTS * MAX_TOKENS, ids.backend.argmaxSlices, "every token was chosen from an argmax-only slice");
        assertEquals(0, ids.backend.logitSlices);
        assertTrue(rows.recorders.stream().anyMatch(r -> r.tokens(0).stream().distinct().count() > 3),
                "the random model's greedy output varies, so equal output means something");
    }

    @Test
    void forksAndSpeculativeDraftsTakeIdsToo() {
        IntFunction<GenerationRequest> forks = i -> request(i).n(1 + i % 3).build();
        assertSameOutput(run(false, false, DraftProposer.NONE, forks), run(true, false, DraftProposer.NONE, forks), "n > 1");
        NgramProposer ngram = new NgramProposer(2, 1, 3, Integer.MAX_VALUE);
        IntFunction<GenerationRequest> looping = i -> GenerationRequest.builder("s" + i, loop(i)).maxTokens(24)
                .ignoreEos(true).build();
        Run rows = run(false, false, DraftProposer.NONE, looping);
        Run ids = run(true, false, ngram, looping);
        assertSameOutput(rows, ids, "speculative");
        assertTrue(ids.backend.argmaxSlices > 0 && ids.backend.logitSlices == 0);
    }

    /** A prompt that repeats a phrase, where prompt lookup finds drafts. */
    private static int[] loop(int i) {
        int[] phrase = EngineTestSupport.prompt(70 + i, 3 + i % 3);
        int[] p = new int[8 * phrase.length];
        for (int t = 0; t < p.length; t++) {
            p[t] = phrase[t % phrase.length];
        }
        return p;
    }

    /** A top-k above what a backend may keep needs the rows (a vocabulary larger than this class's test model's). */
    @Test
    void aTopKAboveTheMostABackendKeepsNeedsTheRows() {
        int vocab = 5000;
        SamplingParams over = new SamplingParams(0.8f, TokenChoice.MAX_TOP_K + 1, 0.9f, 0f, 1f, 0f, 0f, Map.of(), 5L, 0);
        SamplingParams most = new SamplingParams(0.8f, TokenChoice.MAX_TOP_K, 0.9f, 0f, 1f, 0f, 0f, Map.of(), 5L, 0);
        assertNull(new SamplingChain(over, vocab, new int[] {1}, 5L).choice());
        TokenChoice c = new SamplingChain(most, vocab, new int[] {1}, 5L).choice();
        assertEquals(TokenChoice.MAX_TOP_K, c.topK());
        assertEquals(0.9f, c.topP());
    }

    @Test
    void penaltiesAndBiasGetRows() {
        SamplingParams penalty = new SamplingParams(0f, -1, 1f, 0f, 1.3f, 0f, 0f, Map.of(), null, 0);
        SamplingParams bias = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(7, 5f), null, 0);
        SamplingParams sampledPenalty = new SamplingParams(0.8f, -1, 1f, 0f, 1f, 0.5f, 0f, Map.of(), 5L, 0);
        List<IntFunction<GenerationRequest>> kinds = List.of(
                i -> request(i).sampling(penalty).build(), i -> request(i).sampling(bias).build(),
                i -> request(i).sampling(sampledPenalty).build());
        for (IntFunction<GenerationRequest> kind : kinds) {
            Run rows = run(false, false, DraftProposer.NONE, kind);
            Run ids = run(true, false, DraftProposer.NONE, kind);
            assertSameOutput(rows, ids, "rows only");
            assertEquals(0, ids.backend.argmaxSlices + ids.backend.drawSlices, kind.apply(0).toString());
            assertEquals(REQUESTS * MAX_TOKENS, ids.backend.logitSlices);
        }
    }

    /**
     * Prompt logprobs (0, 5 and 20 alternatives; scoring only, max_tokens 0, or then generating): the prompt's
     * chunks ask the backend to score their next tokens, and its records give the prompt logprobs the rows give (the
     * last chunk's last row still comes back to sample from); a backend that scores too few fails those requests
     * alone.
     */
    @Test
    void promptTokensScoredByTheBackendGiveTheRowsRecords() {
        for (int top : new int[] {0, 5, 20}) {
            for (int maxTokens : new int[] {0, MAX_TOKENS}) {
                IntFunction<GenerationRequest> scored = i -> request(i).maxTokens(maxTokens).promptLogprobs(top).build();
                Run rows = run(false, false, DraftProposer.NONE, scored);
                Run ids = run(true, false, DraftProposer.NONE, scored);
                assertSameOutput(rows, ids, "prompt logprobs " + top + ", max_tokens " + maxTokens);
                for (int i = 0; i < REQUESTS; i++) {
                    assertEquals(describe(rows.recorders.get(i).promptLogprobs), describe(ids.recorders.get(i).promptLogprobs));
                    assertEquals(1, ids.recorders.get(i).promptLogprobs.size());
                }
                assertEquals(0, rows.backend.scoredSlices);
                assertTrue(ids.backend.scoredSlices >= REQUESTS, "each prompt's chunks scored on the backend");
                assertEquals(maxTokens == 0 ? 0 : REQUESTS * (MAX_TOKENS - 1), ids.backend.argmaxSlices);
            }
        }
        assertEvenRequestsFail(b -> b.scoreShort = 1, (i, q) -> i % 2 == 0 ? q.promptLogprobs(2) : q,
                "a prompt token went unscored");
    }

    /**
     * Logprobs come with the tokens the backend chose (greedy and drawn, with 0 to 20 alternatives): the
     * same tokens and the same logprob records as from the rows; a backend that leaves alternatives out
     * fails those requests alone.
     */
    @Test
    void logprobsComeWithTheChosenTokens() {
        SamplingParams drawn = new SamplingParams(0.9f, -1, 0.95f, 0f, 1f, 0f, 0f, Map.of(), 3L, 5);
        SamplingParams greedyTop = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 20);
        SamplingParams greedyNone = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), null, 0);
        SamplingParams[] all = {drawn, greedyTop, greedyNone};
        IntFunction<GenerationRequest> kinds = i -> request(i).sampling(all[i % 3]).logprobs(true).build();
        Run rows = run(false, false, DraftProposer.NONE, kinds);
        Run ids = run(true, false, DraftProposer.NONE, kinds);
        assertSameOutput(rows, ids, "logprobs");
        for (int i = 0; i < REQUESTS; i++) {
            assertEquals(describe(List.of(rows.recorders.get(i).logprobs.get(0))),
                    describe(List.of(ids.recorders.get(i).logprobs.get(0))), "request " + i + "'s logprobs");
            assertEquals(MAX_TOKENS, ids.recorders.get(i).logprobs.get(0).size());
        }
        assertEquals(REQUESTS * MAX_TOKENS, ids.backend.withLogprobs, "every token came with its logprobs");
        assertEquals(0, ids.backend.logitSlices);
        // a backend that reports fewer alternatives than asked fails the requests that asked for some
        assertEvenRequestsFail(b -> b.drop = 1,
                (i, q) -> q.sampling(i % 2 == 0 ? greedyTop : SamplingParams.GREEDY).logprobs(i % 2 == 0),
                "its logprobs came short");
    }

    /**
     * Requests ({@code request(i)} as {@code shape} makes it) on a backend with {@code bug}: the even ones, which the
     * bug touches, fail alone ({@code why}); the odd ones finish.
     */
    private static void assertEvenRequestsFail(Consumer<ChoosingBackend> bug,
            BiFunction<Integer, GenerationRequest.Builder, GenerationRequest.Builder> shape, String why) {
        EngineConfig c = config(256, 16, true, 64);
        ChoosingBackend buggy = new ChoosingBackend(backend(c), true, false);
        bug.accept(buggy);
        List<Recorder> recorders = new ArrayList<>();
        try (InflightEngine e = new InflightEngine(c, buggy, model().tokenizer(), DraftProposer.NONE)) {
            for (int i = 0; i < REQUESTS; i++) {
                Recorder r = new Recorder(1);
                e.submit(shape.apply(i, request(i)).build(), r);
                recorders.add(r);
            }
            for (Recorder r : recorders) {
                r.await();
            }
        }
        for (int i = 0; i < REQUESTS; i++) {
            Recorder r = recorders.get(i);
            if (i % 2 == 0) {
                assertNull(r.reasons[0], "request " + i + " fails: " + why);
            } else {
                assertEquals(FinishReason.LENGTH, r.reasons[0], "request " + i + " finishes");
                assertEquals(MAX_TOKENS, r.tokens(0).size());
            }
        }
    }

    private static List<String> describe(List<List<io.nereid.engine.api.TokenLogprob>> lists) {
        List<String> out = new ArrayList<>();
        for (var list : lists) {
            for (var t : list) {
                out.add(t.tokenId() + " " + t.logprob() + " " + t.rank() + " " + Arrays.toString(t.topIds()) + " "
                        + Arrays.toString(t.topLogprobs()));
            }
        }
        return out;
    }

    /**
     * Seeded sampling from the whole softmax, a top-k (with top-p and min-p), top-p or min-p alone: the
     * backend draws with the engine's number; n &gt; 1 forks draw their own.
     */
    @Test
    void samplingLetsTheBackendDrawWithTheSequencesNumbers() {
        SamplingParams sampled = new SamplingParams(0.8f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(), 5L, 0);
        SamplingParams hot = new SamplingParams(1.7f, 0, 1f, 0f, 1f, 0f, 0f, Map.of(), 77L, 0);
        SamplingParams llamaCpp = new SamplingParams(0.8f, 40, 0.95f, 0.05f, 1f, 0f, 0f, Map.of(), 9L, 0);   // its defaults
        SamplingParams topFive = new SamplingParams(1.2f, 5, 1f, 0f, 1f, 0f, 0f, Map.of(), 11L, 0);
        SamplingParams topP = new SamplingParams(0.8f, -1, 0.9f, 0f, 1f, 0f, 0f, Map.of(), 5L, 0);   // no top-k
        SamplingParams minP = new SamplingParams(1.1f, -1, 1f, 0.05f, 1f, 0f, 0f, Map.of(), 13L, 0);
        SamplingParams[] all = {sampled, hot, llamaCpp, topFive, topP, minP};
        IntFunction<GenerationRequest> kinds = i -> request(i).sampling(all[i % all.length]).n(1 + i % 3).build();
        Run rows = run(false, false, DraftProposer.NONE, kinds);
        Run ids = run(true, false, DraftProposer.NONE, kinds);
        assertSameOutput(rows, ids, "sampled");
        // every token is drawn by the backend but each n > 1 request's first (its choices share the prompt's row)
        int tokens = 0;
        int forked = 0;
        int firstTokens = 0;
        for (int i = 0; i < REQUESTS; i++) {
            Recorder r = ids.recorders.get(i);
            for (int c = 0; c < r.n; c++) {
                tokens += r.tokens(c).size();
            }
            forked += r.n > 1 ? 1 : 0;
            firstTokens += r.n > 1 ? r.n : 0;
        }
        assertEquals(tokens - firstTokens, ids.backend.drawSlices, "draws");
        assertEquals(forked, ids.backend.logitSlices, "the first tokens of n > 1 come from one slice's rows");
        assertEquals(0, ids.backend.argmaxSlices);
        assertTrue(rows.recorders.get(0).tokens(0).stream().distinct().count() > 3, "the draws vary");
        // the same seeds draw the same tokens again
        assertSameOutput(ids, run(true, false, DraftProposer.NONE, kinds), "seeded again");
    }

    @Test
    void minTokensTakesRowsUntilItIsReachedThenIds() {
        // EOS not ignored: min_tokens holds it back for the first 5 tokens, then the chain is the argmax again
        IntFunction<GenerationRequest> min = i -> GenerationRequest.builder("m" + i, EngineTestSupport.prompt(40 + i, 9))
                .maxTokens(MAX_TOKENS).minTokens(5).build();
        Run rows = run(false, false, DraftProposer.NONE, min);
        Run ids = run(true, false, DraftProposer.NONE, min);
        assertSameOutput(rows, ids, "min_tokens");
        assertEquals(REQUESTS * 5, ids.backend.logitSlices, "rows while min_tokens holds EOS back");
        int tokens = 0;
        for (Recorder r : ids.recorders) {
            tokens += r.tokens(0).size();
        }
        assertEquals(tokens - REQUESTS * 5, ids.backend.argmaxSlices, "ids for every token after min_tokens");
    }

    @Test
    void idsForASliceThatAskedForRowsFailThatRequestOnly() {
        // a backend bug: ids where rows were asked (a logit bias) fail those requests; greedy ones finish
        SamplingParams bias = new SamplingParams(0f, -1, 1f, 0f, 1f, 0f, 0f, Map.of(7, 5f), null, 0);
        IntFunction<GenerationRequest> mixed = i -> i % 2 == 0 ? request(i).sampling(bias).build() : request(i).build();
        Run reference = run(false, false, DraftProposer.NONE, mixed);
        Run lying = run(true, true, DraftProposer.NONE, mixed);
        for (int i = 0; i < REQUESTS; i++) {
            Recorder r = lying.recorders.get(i);
            if (i % 2 == 0) {
                assertNull(r.reasons[0], "request " + i + " asked for rows and got ids: it fails");
            } else {
                assertEquals(FinishReason.LENGTH, r.reasons[0]);
                assertEquals(reference.recorders.get(i).tokens(0), r.tokens(0));
            }
        }
    }
}
