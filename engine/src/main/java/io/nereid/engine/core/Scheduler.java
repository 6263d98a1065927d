package io.nereid.engine.core;

import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheManager;
import io.nereid.kvcache.PrefixMatch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;

/**
 * Decides what each engine step computes, and keeps the books afterwards; no model, no sampling,
 * no sinks (vLLM v1's scheduler). {@link #schedule()} plans a step: running sequences first (a
 * decode token, with any drafts the {@link DraftProposer} offers, or the next chunk of a prompt
 * being prefilled), then chunks of waiting prompts in order — within {@code maxNumBatchedTokens}
 * and {@code maxNumSeqs}. {@link #update} applies what the step produced: computed K/V, accepted
 * drafts (the rejected tail's slots rolled back by truncating the block table), appended tokens,
 * forks (n > 1) and finished sequences.
 *
 * <p>Memory: a new prompt claims its longest cached prefix and is admitted only if its chunk's
 * blocks fit above the watermark (without the watermark when nothing runs: it would only
 * deadlock); when a running sequence needs a block and none is free, the sequence with the highest
 * priority value, then the latest arrival, is preempted by recompute: its blocks are freed (its
 * prefix usually stays cached) and it returns to the front of its priority among the waiting.
 * Without chunked prefill a waiting prompt gets a step of its own, ahead of the decodes (vLLM's
 * prefill-first policy). Prompts whose logprobs are wanted take nothing from the prefix cache and
 * keep every position's logits, at most {@code promptLogitRowsPerStep} positions per step.
 *
 * <p>A sequence whose scheduling throws is released and reported in the plan's failures; the
 * others are scheduled as if it had never been there. Not thread-safe: engine thread only.
 */
final class Scheduler {

    private final EngineConfig config;
    private final KvCacheManager cache;
    private final DraftProposer proposer;
    private final int promptLogitRowsPerStep;
    private final Runnable firstScheduled;
    private final Deque<Sequence> waiting = new ArrayDeque<>();
    private final List<Sequence> running = new ArrayList<>();
    private long preemptions;

    /**
     * @param promptLogitRowsPerStep most prompt positions per step whose logits are all kept (prompt
     *                               logprobs), so that a long prompt on a large vocabulary is scored over
     *                               several steps instead of in one huge array
     * @param firstScheduled         runs when a request is scheduled for the first time (it leaves the engine's queue)
     */
    Scheduler(EngineConfig config, KvCacheManager cache, DraftProposer proposer, int promptLogitRowsPerStep,
            Runnable firstScheduled) {
        this.config = config;
        this.cache = cache;
        this.proposer = proposer;
        this.promptLogitRowsPerStep = Math.max(1, promptLogitRowsPerStep);
        this.firstScheduled = firstScheduled;
    }

    /** A new request's first choice joins the waiting queue (priority, then arrival). */
    void add(Sequence s) {
        enqueueWaiting(s, false);
    }

    boolean hasWork() {
        return !waiting.isEmpty() || !running.isEmpty();
    }

    /** Sequences waiting (never admitted, or preempted). */
    int waiting() {
        return waiting.size();
    }

    /** Sequences holding blocks. */
    int running() {
        return running.size();
    }

    long preemptions() {
        return preemptions;
    }

    KvCacheManager cache() {
        return cache;
    }

    /** Plans the next step (possibly empty: nothing fits until blocks are freed). */
    StepPlan schedule() {
        proposer.beginStep();
        int budget = config.maxNumBatchedTokens();
        int[] logitRows = {promptLogitRowsPerStep};
        List<ScheduledSlice> slices = new ArrayList<>();
        List<StepPlan.Failure> failures = new ArrayList<>();
        running.sort(Comparator.comparingInt((Sequence x) -> x.request.request.priority()).thenComparingLong(x -> x.request.order));
        for (Sequence s : running) {
            s.scheduledThisStep = false;
        }
        boolean prefillAlone = !config.chunkedPrefill() && !waiting.isEmpty() && running.size() < config.maxNumSeqs();
        // 1. Running sequences: a decode token (and drafts), or the next chunk of a prompt being prefilled.
        for (Sequence s : prefillAlone ? List.<Sequence>of() : List.copyOf(running)) {
            if (!s.running() || budget == 0) {
                continue;
            }
            try {
                budget -= scheduleRunning(s, budget, logitRows, slices);
            } catch (RuntimeException | Error e) {
                release(s);
                failures.add(new StepPlan.Failure(s, e));
            }
        }
        // 2. Waiting prompts, in order, while they fit (no skipping ahead: no starvation).
        while (budget > 0 && !waiting.isEmpty() && running.size() < config.maxNumSeqs()) {
            Sequence s = waiting.peekFirst();
            int scheduled;
            try {
                scheduled = scheduleWaiting(s, budget, logitRows, slices);
            } catch (RuntimeException | Error e) {
                release(s);
                failures.add(new StepPlan.Failure(s, e));
                continue;
            }
            if (scheduled < 0) {
                break;
            }
            budget = Math.max(0, budget - scheduled);
        }
        // A sequence preempted after it was planned (by a later one of the same step) cannot be in it.
        slices.removeIf(sl -> !sl.sequence().running());
        return new StepPlan(slices, failures);
    }

    private int scheduleRunning(Sequence s, int budget, int[] logitRows, List<ScheduledSlice> slices) {
        int pending = s.pending();
        int chunk = config.chunkedPrefill() ? Math.min(pending, budget) : pending;
        if (chunk > budget && budget < config.maxNumBatchedTokens()) {
            return 0; // an unchunked prompt takes a step of its own
        }
        boolean scores = scoresPrompt(s, s.computed());
        if (scores) {
            chunk = Math.min(chunk, logitRows[0]);   // scored in chunks even without chunked prefill
            if (chunk == 0) {
                return 0;
            }
            logitRows[0] -= chunk;
        }
        int[] drafts = chunk == pending && s.computed() >= s.promptLength() ? drafts(s, budget - chunk) : new int[0];
        while (!cache.canAppend(s.table(), chunk + drafts.length)) {
            Sequence victim = victim();
            preempt(victim);
            if (victim == s) {
                return 0;   // preempted itself
            }
        }
        return plan(s, chunk, drafts, scores, slices);
    }

    /** Drafts for a decode, within the budget and the context; the KV they need is checked by the caller. */
    private int[] drafts(Sequence s, int budget) {
        int room = Math.min(budget, config.maxModelLen() - s.length());
        if (room <= 0 || !proposer.enabledAt(running.size())) {
            return new int[0];
        }
        int[] d = proposer.propose(s, s.tokenArray(), s.length(), room);
        return d.length <= room ? d : java.util.Arrays.copyOf(d, room);
    }

    /**
     * The step of {@code plan} took {@code nanos} from planning to its processed output: told to the
     * proposer when every slice was a decode (one known token, its drafts after it).
     */
    void stepTimed(StepPlan plan, long nanos) {
        int tokens = 0;
        for (ScheduledSlice sl : plan.slices()) {
            if (sl.tokens().length != 1 || sl.start() < sl.sequence().promptLength() || !sl.samples()) {
                return;
            }
            tokens += sl.length();
        }
        if (tokens > 0) {
            proposer.stepTimed(plan.slices().size(), tokens, nanos);
        }
    }

    /** Admits the first waiting sequence and plans its first chunk; -1 when it does not fit now. */
    private int scheduleWaiting(Sequence s, int budget, int[] logitRows, List<ScheduledSlice> slices) {
        // A prompt whose logprobs are wanted is computed in full: its logits are not in the cache.
        // So is an embedding request's: every position's hidden state is pooled.
        PrefixMatch match = config.prefixCaching() && !s.request.needsPromptLogprobs() && !s.request.pools()
                ? cache.longestCachedPrefix(s.tokens(), 0) : cache.longestCachedPrefix(new int[0], 0);
        int chunk = s.length() - match.numTokens();
        if (config.chunkedPrefill()) {
            chunk = Math.min(chunk, budget);
        } else if (chunk > budget && budget < config.maxNumBatchedTokens()) {
            return -1; // an unchunked prompt waits for a step of its own
        }
        boolean scores = scoresPrompt(s, match.numTokens());
        if (scores) {
            chunk = Math.min(chunk, logitRows[0]);
            if (chunk == 0) {
                return -1;
            }
        }
        int blocks = cache.blocksToAdmit(match, match.numTokens() + chunk);
        if (running.isEmpty() ? blocks > cache.freeBlocks() : !cache.canAdmit(blocks)) {
            return -1;
        }
        waiting.pollFirst();
        boolean first = s.request.scheduledNanos == 0;
        s.admit(cache.newTable(0, match, s.tokens()), match.numTokens(), first);
        if (first) {
            s.request.scheduledNanos = System.nanoTime();
            firstScheduled.run();
        }
        running.add(s);
        if (scores) {
            logitRows[0] -= chunk;
        }
        return plan(s, chunk, new int[0], scores, slices);
    }

    /** Whether a slice of {@code s} from {@code start} keeps every position's logits (prompt logprobs). */
    private static boolean scoresPrompt(Sequence s, int start) {
        // Every position whose next token is a prompt token needs its logits.
        return s.request.needsPromptLogprobs() && start < s.promptLength() - 1;
    }

    /** Appends the slice's tokens (and drafts) to the block table and adds the slice; returns the tokens it takes. */
    private int plan(Sequence s, int chunk, int[] drafts, boolean scores, List<ScheduledSlice> slices) {
        int start = s.computed();
        int[] tokens = s.tokens(start, start + chunk);
        s.table().append(tokens);
        if (drafts.length > 0) {
            s.table().append(drafts);
        }
        boolean ends = start + chunk == s.length();
        int rows = scores ? chunk + drafts.length : ends ? 1 + drafts.length : 0;
        slices.add(new ScheduledSlice(s, start, tokens, drafts, rows));
        s.scheduledThisStep = true;
        return chunk + drafts.length;
    }

    /** The running sequence to give up first: highest priority value, then latest arrival, not yet in this step. */
    private Sequence victim() {
        Sequence worst = null;
        for (Sequence s : running) {
            if (!s.running() || s.scheduledThisStep) {
                continue;
            }
            if (worst == null || s.request.request.priority() > worst.request.request.priority()
                    || (s.request.request.priority() == worst.request.request.priority() && s.request.order > worst.request.order)) {
                worst = s;
            }
        }
        if (worst == null) {
            throw new IllegalStateException("no sequence can be preempted, yet blocks are needed");
        }
        return worst;
    }

    private void preempt(Sequence s) {
        s.preempt().free();
        running.remove(s);
        preemptions++;
        enqueueWaiting(s, true);
    }

    /** Waiting order: priority (lower first), then arrival; a preempted sequence goes before its equals. */
    private void enqueueWaiting(Sequence s, boolean preempted) {
        Comparator<Sequence> order = Comparator.comparingInt((Sequence x) -> x.request.request.priority())
                .thenComparingLong(x -> x.request.order);
        List<Sequence> all = new ArrayList<>(waiting);
        int at = 0;
        while (at < all.size() && (order.compare(all.get(at), s) < 0 || (!preempted && order.compare(all.get(at), s) == 0))) {
            at++;
        }
        all.add(at, s);
        waiting.clear();
        waiting.addAll(all);
    }

    /**
     * Applies a step's outcome. Per slice: its known tokens and accepted drafts now have K/V; a
     * rejected draft tail is rolled back (the table truncated to what was computed); forks share the
     * computed blocks; the appended tokens become pending; a finished sequence is released. A slice
     * whose sequence finished meanwhile (its request failed or was cancelled) is skipped.
     */
    void update(StepPlan plan, StepOutcome outcome) {
        if (plan.slices().size() != outcome.slices().size()) {
            throw new IllegalArgumentException(outcome.slices().size() + " outcomes for " + plan.slices().size() + " slices");
        }
        for (int i = 0; i < plan.slices().size(); i++) {
            ScheduledSlice slice = plan.slices().get(i);
            StepOutcome.SliceOutcome o = outcome.slices().get(i);
            Sequence s = slice.sequence();
            if (!s.running()) {
                continue;
            }
            if (o.acceptedDrafts() > slice.draftTokens().length) {
                throw new IllegalArgumentException(o.acceptedDrafts() + " drafts accepted of " + slice.draftTokens().length);
            }
            for (int d = 0; d < o.acceptedDrafts(); d++) {
                if (o.appended().length <= d || o.appended()[d] != slice.draftTokens()[d]) {
                    throw new IllegalArgumentException("accepted drafts must lead the appended tokens");
                }
            }
            if (slice.draftTokens().length > 0 && !o.finished()) {
                proposer.verified(s, slice.draftTokens().length, o.acceptedDrafts());
            }
            // Accepted drafts were computed in this pass: they join the tokens with their K/V.
            s.advance(slice.tokens().length);
            for (int d = 0; d < o.acceptedDrafts(); d++) {
                s.append(o.appended()[d]);
            }
            s.advance(o.acceptedDrafts());
            if (o.acceptedDrafts() < slice.draftTokens().length) {
                s.table().truncate(s.computed());   // the rejected drafts' slots
            }
            for (StepOutcome.Fork f : o.forks()) {
                if (!f.finished()) {
                    fork(s, f);
                }
            }
            for (int j = o.acceptedDrafts(); j < o.appended().length; j++) {
                s.append(o.appended()[j]);
            }
            if (o.finished()) {
                release(s);
            }
        }
    }

    /** Choice {@code f.choice()} of {@code parent}'s request, sharing its computed blocks (copy-on-write), running. */
    private void fork(Sequence parent, StepOutcome.Fork f) {
        Sequence child = new Sequence(parent, f.choice(), f.output(), parent.table().fork());
        for (int t : f.appended()) {
            child.append(t);
        }
        parent.request.choices[f.choice()] = child;
        running.add(child);
    }

    /** {@code s} is done (finished, failed or cancelled): out of the queues, its blocks freed (tail first). */
    void release(Sequence s) {
        running.remove(s);   // first: out of the queues even if freeing its blocks fails
        waiting.remove(s);
        proposer.released(s);
        BlockTable table = s.finish();
        if (table != null) {
            table.free();
        }
    }
}
