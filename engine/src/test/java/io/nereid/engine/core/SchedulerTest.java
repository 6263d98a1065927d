package io.nereid.engine.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The scheduler alone, without a model or a backend (as vLLM's {@code tests/v1/core/test_scheduler.py}):
 * exactly which slices each step holds for decodes, chunked prefill, prefix hits, budgets,
 * preemption, priorities and n > 1 forks, and that {@link Scheduler#update} with a multi-token
 * outcome (accepted drafts, a rejected tail) leaves each sequence and its block table consistent.
 * A step's outcome is written by the test: the token each sampling slice "chose".
 */
class SchedulerTest {

    private static final int BS = 16;
    private static final TokenSink NO_SINK = new TokenSink() {
        @Override
        public void onDelta(int choice, String text, int[] tokenIds, List<TokenLogprob> logprobs) {
        }

        @Override
        public void onFinish(int choice, FinishReason reason, Object stopReason, Usage usage) {
        }

        @Override
        public void onError(int choice, EngineException error) {
        }
    };

    private long order;

    /** A scheduler over {@code blocks} blocks of 16 tokens (the null block included). */
    private static Scheduler scheduler(int maxNumSeqs, int budget, int blocks, boolean prefixCaching, boolean chunked,
            DraftProposer proposer) {
        EngineConfig c = new EngineConfig(maxNumSeqs, budget, 1024, 4096, blocks, BS, 0.01, prefixCaching, chunked);
        return new Scheduler(c, new KvCacheManager(new KvCacheConfig(blocks, BS, 0.01, 7)), proposer, 1024, () -> { });
    }

    private static Scheduler scheduler(int maxNumSeqs, int budget, int blocks) {
        return scheduler(maxNumSeqs, budget, blocks, true, true, DraftProposer.NONE);
    }

    /** A request of {@code prompt} tokens added as its first choice. */
    private Sequence add(Scheduler s, String id, int[] prompt, int n, int priority, int promptLogprobs) {
        GenerationRequest g = GenerationRequest.builder(id, prompt).maxTokens(64).ignoreEos(true).n(n)
                .priority(priority).promptLogprobs(promptLogprobs).build();
        RequestState r = new RequestState(g, NO_SINK, ++order, () -> { });
        Sequence seq = new Sequence(r, 0, null);
        r.choices[0] = seq;
        s.add(seq);
        return seq;
    }

    /** A request with a prompt of its own (no prefix shared with any other). */
    private Sequence add(Scheduler s, String id, int promptLength) {
        return add(s, id, prompt((int) (order + 1) * 1000, promptLength), 1, 0, -1);
    }

    private static int[] prompt(int first, int length) {
        return IntStream.range(0, length).map(i -> first + i).toArray();
    }

    /** "id@start+tokens(+drafts)/rows" for each slice, the shape the assertions read. */
    private static List<String> shape(StepPlan plan) {
        List<String> out = new ArrayList<>();
        for (ScheduledSlice s : plan.slices()) {
            out.add(s.sequence().request.id() + (s.sequence().choice == 0 ? "" : "." + s.sequence().choice) + "@" + s.start()
                    + "+" + s.tokens().length + (s.draftTokens().length == 0 ? "" : "(+" + s.draftTokens().length + ")")
                    + "/" + s.logitRows());
        }
        return out;
    }

    /** The outcome of a step in which every sampling slice chose token 7 and nothing finished. */
    private static StepOutcome sevens(StepPlan plan) {
        List<StepOutcome.SliceOutcome> out = new ArrayList<>();
        for (ScheduledSlice s : plan.slices()) {
            out.add(s.samples() ? new StepOutcome.SliceOutcome(0, new int[] {7}, false, List.of())
                    : StepOutcome.SliceOutcome.COMPUTED);
        }
        return new StepOutcome(out);
    }

    private static StepPlan step(Scheduler s) {
        StepPlan plan = s.schedule();
        s.update(plan, sevens(plan));
        return plan;
    }

    @Test
    void aPromptOverTheBudgetIsPrefilledInChunksThenDecodesOneTokenPerStep() {
        Scheduler s = scheduler(8, 64, 64);
        Sequence a = add(s, "a", 150);
        assertEquals(List.of("a@0+64/0"), shape(step(s)));
        assertEquals(List.of("a@64+64/0"), shape(step(s)));
        assertEquals(List.of("a@128+22/1"), shape(step(s)));   // the last chunk samples
        assertEquals(151, a.length());
        assertEquals(150, a.computed());
        assertEquals(List.of("a@150+1/1"), shape(step(s)));
        assertEquals(List.of("a@151+1/1"), shape(step(s)));
        assertEquals(152, a.computed());
        assertEquals(a.computed(), a.table().length(), "the pending token enters the table when it is planned, not before");
    }

    @Test
    void runningDecodesComeFirstThenWaitingPromptsUpToTheTokenBudget() {
        Scheduler s = scheduler(8, 64, 64);
        add(s, "a", 10);
        assertEquals(List.of("a@0+10/1"), shape(step(s)));
        add(s, "b", 40);
        add(s, "c", 40);
        // a decodes (1), b's whole prompt (40), then c gets the 23 tokens left: no skipping ahead.
        assertEquals(List.of("a@10+1/1", "b@0+40/1", "c@0+23/0"), shape(step(s)));
        assertEquals(List.of("a@11+1/1", "b@40+1/1", "c@23+17/1"), shape(step(s)));
        assertEquals(0, s.waiting());
        assertEquals(3, s.running());
    }

    @Test
    void maxNumSeqsCapsHowManySequencesRun() {
        Scheduler s = scheduler(2, 512, 64);
        add(s, "a", 5);
        add(s, "b", 5);
        add(s, "c", 5);
        assertEquals(List.of("a@0+5/1", "b@0+5/1"), shape(step(s)));
        assertEquals(1, s.waiting());
        assertEquals(List.of("a@5+1/1", "b@5+1/1"), shape(step(s)));
    }

    @Test
    void aCachedBlockAlignedPrefixIsNotComputedAgain() {
        Scheduler s = scheduler(8, 512, 64);
        Sequence a = add(s, "a", prompt(100, 40), 1, 0, -1);
        step(s);
        s.release(a);   // its two full blocks stay cached
        int[] shared = prompt(100, 40);
        shared[39] = 9;   // the third, partial block differs anyway
        add(s, "b", shared, 1, 0, -1);
        assertEquals(List.of("b@32+8/1"), shape(step(s)));
        int[] all = prompt(100, 32);
        add(s, "c", all, 1, 0, -1);
        // A whole prompt in the cache still computes its last token: its logits are needed.
        assertEquals(List.of("b@40+1/1", "c@16+16/1"), shape(step(s)));
    }

    @Test
    void aPromptWhoseLogprobsAreWantedKeepsEveryRowAndTakesNothingFromTheCache() {
        Scheduler s = scheduler(8, 512, 64);
        Sequence a = add(s, "a", prompt(100, 40), 1, 0, -1);
        step(s);
        s.release(a);
        add(s, "b", prompt(100, 40), 1, 0, 0);
        assertEquals(List.of("b@0+40/40"), shape(s.schedule()));
    }

    @Test
    void whenBlocksRunOutTheLatestArrivalIsPreemptedAndLaterRecomputedWithItsOutput() {
        // 6 usable blocks: a and b take 2 each for 31-token prompts, then each needs a third.
        Scheduler s = scheduler(8, 512, 7);
        Sequence a = add(s, "a", 31);
        Sequence b = add(s, "b", 31);
        assertEquals(List.of("a@0+31/1", "b@0+31/1"), shape(step(s)));
        assertEquals(List.of("a@31+1/1", "b@31+1/1"), shape(step(s)));   // position 31 fits the second block
        // Position 32 needs a third block each; 2 are free, minus the watermark for neither (running).
        assertEquals(List.of("a@32+1/1", "b@32+1/1"), shape(step(s)));
        assertEquals(0, s.preemptions());
        // Now a and b each need a fourth block at position 48: only a gets one; b (later) is preempted.
        for (int i = 0; i < 15; i++) {
            step(s);
        }
        assertEquals(48, a.computed());
        StepPlan plan = s.schedule();
        assertEquals(List.of("a@48+1/1"), shape(plan));
        assertEquals(1, s.preemptions());
        assertEquals(Sequence.Status.WAITING, b.status());
        assertEquals(0, b.computed());
        assertEquals(49, b.length(), "b keeps its prompt and output to be recomputed");
        s.update(plan, sevens(plan));
        s.release(a);
        // b comes back as one prefill of everything it had (its first blocks usually cached).
        StepPlan again = s.schedule();
        assertEquals(1, again.slices().size());
        ScheduledSlice slice = again.slices().getFirst();
        assertSame(b, slice.sequence());
        assertEquals(49, slice.start() + slice.tokens().length);
        assertEquals(1, slice.logitRows());
    }

    @Test
    void lowerPriorityValuesAreAdmittedFirstAndPreemptedLast() {
        Scheduler s = scheduler(1, 512, 64);
        add(s, "late-low", prompt(100, 5), 1, 5, -1);
        add(s, "early-high", prompt(200, 5), 1, -1, -1);
        assertEquals(List.of("early-high@0+5/1"), shape(step(s)));
    }

    @Test
    void withoutChunkedPrefillAWaitingPromptTakesAStepOfItsOwn() {
        Scheduler s = scheduler(8, 64, 64, true, false, DraftProposer.NONE);
        add(s, "a", 10);
        step(s);
        add(s, "b", 100);   // over the budget: whole, alone
        assertEquals(List.of("b@0+100/1"), shape(step(s)));
        assertEquals(List.of("a@10+1/1", "b@100+1/1"), shape(step(s)));
    }

    @Test
    void nChoicesForkFromTheComputedPromptSharingItsBlocksCopyOnWrite() {
        Scheduler s = scheduler(8, 512, 64);
        Sequence a = add(s, "a", prompt(100, 20), 3, 0, -1);
        StepPlan plan = s.schedule();
        assertEquals(List.of("a@0+20/1"), shape(plan));
        StepOutcome forked = new StepOutcome(List.of(new StepOutcome.SliceOutcome(0, new int[] {7}, false, List.of(
                new StepOutcome.Fork(1, null, new int[] {8}, false), new StepOutcome.Fork(2, null, new int[] {9}, true)))));
        s.update(plan, forked);
        Sequence b = a.request.choices[1];
        assertEquals(2, s.running(), "choice 2 ended with its first token: it never runs");
        assertEquals(a.computed(), b.computed());
        assertEquals(8, b.tokens()[20]);
        assertEquals(7, a.tokens()[20]);
        assertEquals(a.table().blockId(0), b.table().blockId(0), "the full block is shared");
        assertEquals(2, s.cache().pool().refCount(a.table().blockId(0)));
        assertEquals(List.of("a@20+1/1", "a.1@20+1/1"), shape(s.schedule()));
        assertFalse(s.cache().drainCopies().isEmpty(), "the shared partial block is copied before it is written");
        assertTrue(a.table().blockId(1) != b.table().blockId(1));
    }

    @Test
    void aMultiTokenOutcomeKeepsTheAcceptedDraftsAndRollsBackTheRejectedTail() {
        Scheduler s = scheduler(8, 512, 64, true, true, (sequence, tokens, length, max) -> new int[] {50, 51, 52});
        Sequence a = add(s, "a", 30);
        assertEquals(List.of("a@0+30/1"), shape(step(s)));   // prompts are never speculated on
        StepPlan plan = s.schedule();
        assertEquals(List.of("a@30+1(+3)/4"), shape(plan));
        assertEquals(34, a.table().length(), "planned: the pending token and the drafts are in the table");
        // The first draft is accepted, the second rejected: the recovered token 60 follows it.
        s.update(plan, new StepOutcome(List.of(new StepOutcome.SliceOutcome(1, new int[] {50, 60}, false, List.of()))));
        assertEquals(32, a.computed(), "the known token and one draft have K/V");
        assertEquals(33, a.length());
        assertArrayEquals(new int[] {7, 50, 60}, a.tokens(30, 33));
        assertEquals(32, a.table().length(), "the rejected drafts' slots are rolled back");
        assertArrayEquals(a.tokens(0, 32), a.table().tokens());
        assertEquals(2, a.table().numBlocks());
        assertEquals(List.of("a@32+1(+3)/4"), shape(s.schedule()));
    }

    @Test
    void whenEveryDraftIsAcceptedTheBonusTokenFollowsThemAndNothingIsRolledBack() {
        Scheduler s = scheduler(8, 512, 64, true, true, (sequence, tokens, length, max) -> new int[] {50, 51});
        Sequence a = add(s, "a", 14);
        step(s);
        StepPlan plan = s.schedule();
        assertEquals(List.of("a@14+1(+2)/3"), shape(plan));
        s.update(plan, new StepOutcome(List.of(new StepOutcome.SliceOutcome(2, new int[] {50, 51, 61}, false, List.of()))));
        assertEquals(17, a.computed());
        assertEquals(18, a.length());
        assertEquals(17, a.table().length());
        assertEquals(2, a.table().numBlocks(), "positions 16 and 17 went into a second block");
    }

    @Test
    void draftsTakeTokensFromTheBudgetAndAreCutToIt() {
        Scheduler s = scheduler(8, 4, 64, true, true, (sequence, tokens, length, max) -> new int[] {50, 51, 52, 53, 54});
        add(s, "a", 3);
        assertEquals(List.of("a@0+3/1"), shape(step(s)));
        assertEquals(List.of("a@3+1(+3)/4"), shape(s.schedule()));
    }

    @Test
    void anOutcomeThatContradictsThePlanIsRefused() {
        Scheduler s = scheduler(8, 512, 64, true, true, (sequence, tokens, length, max) -> new int[] {50});
        add(s, "a", 3);
        step(s);
        StepPlan plan = s.schedule();
        assertThrows(IllegalArgumentException.class, () -> s.update(plan,
                new StepOutcome(List.of(new StepOutcome.SliceOutcome(2, new int[] {50, 51, 9}, false, List.of())))));
        assertThrows(IllegalArgumentException.class, () -> s.update(plan,
                new StepOutcome(List.of(new StepOutcome.SliceOutcome(1, new int[] {49, 9}, false, List.of())))));
    }

    @Test
    void aSequenceWhoseSchedulingFailsIsReleasedAndReportedWhileTheOthersAreScheduled() {
        Scheduler s = scheduler(8, 512, 64, true, true, (sequence, tokens, length, max) -> {
            if (tokens[0] == 300) {
                throw new IllegalStateException("proposer bug");
            }
            return new int[0];
        });
        Sequence bad = add(s, "bad", prompt(300, 4), 1, 0, -1);
        add(s, "good", prompt(100, 4), 1, 0, -1);
        step(s);
        StepPlan plan = s.schedule();
        assertEquals(List.of("good@4+1/1"), shape(plan));
        assertEquals(1, plan.failures().size());
        assertSame(bad, plan.failures().getFirst().sequence());
        assertTrue(bad.finished());
        assertEquals(1, s.running());
    }

    @Test
    void aFinishedSequenceReleasesItsBlocksAndIsNotScheduledAgain() {
        Scheduler s = scheduler(8, 512, 64);
        Sequence a = add(s, "a", 20);
        StepPlan plan = s.schedule();
        s.update(plan, new StepOutcome(List.of(new StepOutcome.SliceOutcome(0, new int[] {2}, true, List.of()))));
        assertTrue(a.finished());
        assertEquals(0, s.running());
        assertEquals(0, s.cache().stats().usedBlocks());
        assertTrue(s.schedule().isEmpty());
        assertFalse(s.hasWork());
    }
}
