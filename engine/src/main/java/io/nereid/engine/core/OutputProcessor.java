package io.nereid.engine.core;

import io.nereid.engine.api.EngineStats;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.backend.ChosenLogprobs;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.sampling.SampledToken;
import io.nereid.engine.sampling.RawLogprobs;
import io.nereid.engine.sampling.SamplingChain;
import io.nereid.engine.structured.TokenMatcher;
import io.nereid.engine.text.IncrementalDetokenizer;
import io.nereid.engine.text.StopMatch;
import io.nereid.engine.text.StopStringMatcher;
import io.nereid.engine.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.stream.IntStream;

/**
 * Turns a step's logits into output, per slice: scores prompt positions (prompt logprobs), then for
 * a slice that ends at its sequence's last known token chooses the next token (the choice's
 * {@link SamplingChain}: min_tokens, penalties, bias, distribution, selector), detokenizes incrementally, matches stop token ids and stop strings, and delivers the
 * deltas and finishes through {@link Events}. When a prompt completes with n > 1 the other choices
 * start here, each with its own output state and RNG stream, their first tokens drawn from the same
 * row. Reports what it did as a {@link StepOutcome} for the {@link Scheduler}.
 *
 * <p>A failure in one slice's processing fails that slice's request ({@code onFailure}) and the
 * others go on. Engine thread only.
 */
final class OutputProcessor {

    private final Tokenizer tokenizer;
    private final int vocabSize;
    private final int[] eosIds;
    private final int maxModelLen;
    private final Events events;
    private long generated;   // tokens produced by this processor, for stats
    private final boolean speculates;
    private final SpeculationCounts speculation = new SpeculationCounts();

    /** {@code speculates}: whether slices may carry drafts (reported in {@link #speculation}). */
    OutputProcessor(Tokenizer tokenizer, int vocabSize, int maxModelLen, Events events, boolean speculates) {
        this.speculates = speculates;
        this.tokenizer = tokenizer;
        this.vocabSize = vocabSize;
        this.eosIds = tokenizer.specialTokens().stopIds();
        this.maxModelLen = maxModelLen;
        this.events = events;
    }

    /** Tokens generated so far. */
    long generated() {
        return generated;
    }

    /** Drafts verified so far. */
    EngineStats.Speculation speculation() {
        return speculation.snapshot(speculates);
    }

    /** vLLM's spec-decode counters: drafts, draft tokens, accepted tokens, accepted by position. */
    private static final class SpeculationCounts {
        private long drafts;
        private long draftTokens;
        private long accepted;
        private long[] perPosition = new long[0];

        void record(int proposed, int acceptedHere) {
            drafts++;
            draftTokens += proposed;
            accepted += acceptedHere;
            if (perPosition.length < proposed) {
                perPosition = Arrays.copyOf(perPosition, proposed);
            }
            for (int p = 0; p < acceptedHere; p++) {
                perPosition[p]++;
            }
        }

        EngineStats.Speculation snapshot(boolean enabled) {
            return new EngineStats.Speculation(enabled, drafts, draftTokens, accepted, perPosition.clone());
        }
    }

    /** The output state of choice {@code choice}: its own RNG stream (seed + choice, or one per request). */
    ChoiceOutput newOutput(RequestState r, int choice) {
        GenerationRequest q = r.request;
        long seed = q.sampling().seed() != null ? q.sampling().seed() + choice : r.order * 0x9E3779B97F4A7C15L + choice;
        // min_tokens holds back the model's EOS ids (unless ignore_eos) and the request's stop token ids.
        int[] suppressed = IntStream.concat(q.ignoreEos() ? IntStream.empty() : IntStream.of(eosIds),
                IntStream.of(q.stopTokenIds())).toArray();
        TokenMatcher constraint = r.constraint == null ? null : r.constraint.matcher(eosIds);
        return new ChoiceOutput(new SamplingChain(q.sampling(), vocabSize, q.promptTokens(), seed, q.minTokens(), suppressed,
                constraint), constraint,
                new IncrementalDetokenizer(tokenizer, true, true, r.constraint == null ? new int[0] : r.constraint.specialTokens()),
                new StopStringMatcher(q.stop()));
    }

    /**
     * Processes every slice of {@code plan} with the rows of {@code out}; a slice whose request fails
     * here is handed to {@code onFailure} (which ends the request) and counts as computed only.
     */
    StepOutcome process(StepPlan plan, StepOutput out, BiConsumer<RequestState, Throwable> onFailure) {
        List<StepOutcome.SliceOutcome> outcomes = new ArrayList<>(plan.slices().size());
        for (int i = 0; i < plan.slices().size(); i++) {
            ScheduledSlice slice = plan.slices().get(i);
            StepOutcome.SliceOutcome o = StepOutcome.SliceOutcome.COMPUTED;
            if (slice.sequence().running()) {
                try {
                    o = process(slice, out, i);
                } catch (RuntimeException | Error e) {
                    onFailure.accept(slice.sequence().request, e);
                }
            }
            outcomes.add(o);
        }
        return new StepOutcome(outcomes);
    }

    private StepOutcome.SliceOutcome process(ScheduledSlice slice, StepOutput out, int i) {
        Sequence s = slice.sequence();
        RequestState r = s.request;
        if (slice.scoresPrompt()) {
            scorePrompt(r, slice, out, i);
        } else if (out.scored()[i] != null) {
            throw new IllegalStateException("the backend returned scored rows for a slice that scores nothing");
        }
        if (r.pools()) {
            pool(r, slice, out, i);
        }
        if (!slice.samples()) {
            return StepOutcome.SliceOutcome.COMPUTED;
        }
        int[] drafts = slice.draftTokens();
        int firstRow = out.rows(i) - 1 - drafts.length;   // the row after the last known token
        if (out.chosen()[i] != null && s.output().pending == null) {
            throw new IllegalStateException("the backend returned chosen tokens for a slice that asked for logits");
        }
        Row logits = new Row(out, i, firstRow);
        GenerationRequest q = r.request;
        if (r.needsPromptLogprobs()) {
            events.promptLogprobs(r);
        }
        if (r.pools()) {   // an embedding: the pooled vector, then the end
            events.embedding(r, pooledVector(r));
        }
        if (q.maxTokens() == 0) {   // only the prompt was wanted (scoring it, or embedding it)
            for (int c = 0; c < q.n(); c++) {
                events.finish(r, c, FinishReason.LENGTH, null);
            }
            return new StepOutcome.SliceOutcome(0, new int[0], true, List.of());
        }
        List<StepOutcome.Fork> forks = new ArrayList<>();
        if (!r.forked && q.n() > 1) {
            // The prompt is done once; the other choices start from a copy-on-write fork of it.
            r.forked = true;
            for (int c = 1; c < q.n(); c++) {
                ChoiceOutput o = newOutput(r, c);
                r.outputs[c] = o;
                int[] token = new int[1];
                boolean done = next(r, c, o, logits, s.length(), token, -1, null);
                forks.add(new StepOutcome.Fork(c, o, token, done));
            }
        }
        if (drafts.length > 0) {
            return verify(slice, out, i, firstRow, forks);
        }
        int[] token = new int[1];
        boolean done = next(r, s.choice, s.output(), logits, s.length(), token, -1, null);
        return new StepOutcome.SliceOutcome(0, token, done, forks);
    }

    /**
     * Speculative decoding: row {@code firstRow + j} verifies draft {@code j}
     * ({@link SamplingChain#verify}); the tokens are emitted one by one, each through the same stop,
     * length and logprob handling as without drafts, until a draft is replaced (the replacement is
     * the step's last token) or the choice ends; when every draft survives, the last row gives a
     * bonus token. Only emitted tokens reach the chain's processors and the output, so nothing needs
     * rolling back here; the {@link Scheduler} truncates the rejected drafts' KV.
     */
    private StepOutcome.SliceOutcome verify(ScheduledSlice slice, StepOutput out, int i, int firstRow,
            List<StepOutcome.Fork> forks) {
        Sequence s = slice.sequence();
        int[] drafts = slice.draftTokens();
        int[] emitted = new int[drafts.length + 1];
        int count = 0;
        int accepted = 0;
        boolean done = false;
        int[] token = new int[1];
        events.beginMerge();   // the run's tokens stream as one delta
        try {
            io.nereid.engine.sampling.Probabilities[] qs = s.draftQ;
            for (int j = 0; j <= drafts.length && !done; j++) {
                int draft = j < drafts.length ? drafts[j] : -1;
                io.nereid.engine.sampling.Probabilities q = qs != null && j < qs.length && draft >= 0 ? qs[j] : null;
                done = next(s.request, s.choice, s.output(), new Row(out, i, firstRow + j), s.length() + j, token, draft, q);
                emitted[count++] = token[0];
                if (draft < 0 || token[0] != draft) {
                    break;
                }
                accepted++;
            }
        } finally {
            events.endMerge();
        }
        speculation.record(drafts.length, accepted);
        return new StepOutcome.SliceOutcome(accepted, Arrays.copyOf(emitted, count), done, forks);
    }

    /**
     * Chooses choice {@code c}'s next token from {@code logits} (its sequence has {@code length} tokens
     * before it), emits its text and, if it ends the choice, the finish; the token goes to
     * {@code token[0]}. With a {@code draft} (a token id; -1 for none) the token is that draft's
     * verification. Returns whether the choice ended.
     */
    private boolean next(RequestState r, int c, ChoiceOutput o, Row logits, int length, int[] token, int draft,
            io.nereid.engine.sampling.Probabilities draftQ) {
        GenerationRequest q = r.request;
        int[] chosen = logits.out.chosen()[logits.slice];
        TokenChoice pending = o.pending;
        SampledToken t = chosen != null ? chosen(o, logits, chosen[logits.row], q)   // as pending said (or the argmax: a fork)
                : pending != null && draft < 0 ? o.chain.sample(logits.values(), pending)
                : draft < 0 ? o.chain.sample(logits.values(), q.logprobs())
                : o.chain.verify(logits.values(), draft, q.logprobs(), draftQ);
        o.pending = null;
        o.chain.accept(t.id());
        token[0] = t.id();
        o.produced();
        generated++;
        int[] ids = {t.id()};
        List<TokenLogprob> lp = q.logprobs()
                ? List.of(new TokenLogprob(t.id(), t.logprob(), t.rank(), t.topIds(), t.topLogprobs())) : List.of();
        boolean eos = !q.ignoreEos() && contains(eosIds, t.id());
        if (eos || contains(q.stopTokenIds(), t.id())) {
            events.delta(r, c, flush(o), ids, lp);
            events.finish(r, c, FinishReason.STOP, eos ? null : t.id());
            return true;
        }
        String text = o.detokenizer.push(t.id());
        if (o.generated() > q.minTokens() || q.stop().isEmpty()) {
            StopMatch m = o.stops.push(text);
            if (m instanceof StopMatch.Stop stop) {
                events.delta(r, c, stop.text(), ids, lp);
                events.finish(r, c, FinishReason.STOP, stop.stop());
                return true;
            }
            text = ((StopMatch.Continue) m).text();
        }
        if (o.constraint != null && o.constraint.terminated()) {
            // the constraint is complete and nothing may follow: the choice ends here, EOS or not (ignore_eos, min_tokens)
            events.delta(r, c, text + flush(o), ids, lp);
            events.finish(r, c, FinishReason.STOP, null);
            return true;
        }
        if (o.generated() >= q.maxTokens() || length + 1 >= maxModelLen) {
            events.delta(r, c, text + flush(o), ids, lp);
            events.finish(r, c, FinishReason.LENGTH, null);
            return true;
        }
        events.delta(r, c, text, ids, lp);
        return false;
    }

    /** The token the backend chose for {@code logits}' row, with the logprobs it reported when the request asked. */
    private static SampledToken chosen(ChoiceOutput o, Row logits, int id, GenerationRequest q) {
        SampledToken t = o.chain.chosen(id);
        if (!q.logprobs()) {
            return t;
        }
        ChosenLogprobs[] lps = logits.out.logprobs()[logits.slice];
        ChosenLogprobs lp = reported(lps == null ? null : lps[logits.row], q.sampling().topLogprobs(), logits.out.vocabSize(),
                "chosen token " + id);
        return new SampledToken(id, lp.logprob(), lp.rank(), lp.topIds(), lp.topLogprobs());
    }

    /**
     * A record the backend reported, checked: there, with the alternatives asked for (min(top, vocabulary), as
     * RawLogprobs.score reports them); else a backend bug that fails the request ({@code what} names the token).
     */
    private static ChosenLogprobs reported(ChosenLogprobs lp, int top, int vocabSize, String what) {
        int expected = Math.min(top, vocabSize);
        if (lp == null || lp.topIds().length != expected) {
            throw new IllegalStateException("the backend's logprobs of " + what + (lp == null ? " are missing"
                    : " have " + lp.topIds().length + " alternatives, not " + expected));
        }
        return lp;
    }

    /**
     * Row {@code row} of slice {@code slice}'s logits in {@code out}: the values, or only the token the backend
     * chose from them ({@link StepOutput#chosen()}, for a slice that let it).
     */
    private record Row(StepOutput out, int slice, int row) {

        float[] values() {
            return out.row(slice, row);
        }
    }

    /** Text still held by the detokenizer and the stop matcher, when the choice ends for another reason. */
    private static String flush(ChoiceOutput o) {
        String tail = o.detokenizer.flush();
        StopMatch m = o.stops.push(tail);
        String text = m instanceof StopMatch.Stop stop ? stop.text() : ((StopMatch.Continue) m).text();
        return text + (m instanceof StopMatch.Continue ? o.stops.flush() : "");
    }

    /**
     * Scores the prompt tokens that follow the slice's positions (row j predicts the token at
     * {@code start + j + 1}); a position computed again after a preemption is scored again, to the same value.
     * Where the backend scored them itself ({@link StepOutput#scored()}), its records are taken, checked for
     * their count and alternatives (a backend that gets them wrong fails this request).
     */
    private static void scorePrompt(RequestState r, ScheduledSlice slice, StepOutput out, int i) {
        int[] prompt = r.request.promptTokens();
        ChosenLogprobs[] scored = out.scored()[i];
        if (scored != null) {
            int[] ids = slice.scoredIds();
            if (scored.length != ids.length) {
                throw new IllegalStateException("the backend scored " + scored.length + " prompt tokens of "
                        + ids.length);
            }
            for (int j = 0; j < ids.length; j++) {
                ChosenLogprobs c = reported(scored[j], r.request.promptLogprobs(), out.vocabSize(),
                        "prompt token " + (slice.start() + j + 1));
                r.promptLogprobs[slice.start() + j] = new TokenLogprob(ids[j], c.logprob(), c.rank(), c.topIds(),
                        c.topLogprobs());
            }
            return;
        }
        float[] rows = out.logits()[i];
        int vocab = out.vocabSize();
        for (int j = 0; j < slice.tokens().length; j++) {
            int next = slice.start() + j + 1;
            if (next >= prompt.length) {
                break;
            }
            SampledToken t = RawLogprobs.score(Arrays.copyOfRange(rows, j * vocab, (j + 1) * vocab), prompt[next],
                    r.request.promptLogprobs());
            r.promptLogprobs[next - 1] = new TokenLogprob(t.id(), t.logprob(), t.rank(), t.topIds(), t.topLogprobs());
        }
    }

    /**
     * Adds the slice's hidden states to an embedding request's pool: every new position for mean
     * pooling, the first for CLS, the latest for last-token pooling. A position computed again after
     * a preemption was pooled already and is skipped.
     */
    private static void pool(RequestState r, ScheduledSlice slice, StepOutput out, int i) {
        float[] h = out.hidden()[i];
        if (h == null) {
            throw new IllegalStateException("the backend returned no hidden states for an embedding request");
        }
        if (r.pooled == null) {
            r.pooled = new float[out.hiddenSize()];
        }
        int dim = r.pooled.length;
        if (out.hiddenSize() != dim || h.length != slice.length() * dim) {
            throw new IllegalStateException("hidden states of " + h.length + " floats for " + slice.length()
                    + " positions of " + dim);
        }
        for (int j = 0; j < slice.tokens().length; j++) {
            int pos = slice.start() + j;
            if (pos < r.pooledUpTo) {
                continue;
            }
            switch (r.request.pooling()) {
                case MEAN -> {
                    for (int d = 0; d < dim; d++) {
                        r.pooled[d] += h[j * dim + d];
                    }
                }
                case CLS -> {
                    if (pos == 0) {
                        System.arraycopy(h, j * dim, r.pooled, 0, dim);
                    }
                }
                case LAST -> System.arraycopy(h, j * dim, r.pooled, 0, dim);
            }
            r.pooledUpTo = pos + 1;
        }
    }

    private static float[] pooledVector(RequestState r) {
        float[] v = r.pooled.clone();
        if (r.request.pooling() == io.nereid.engine.api.Pooling.MEAN) {
            int n = r.request.promptLength();
            for (int d = 0; d < v.length; d++) {
                v[d] /= n;
            }
        }
        return v;
    }

    private static boolean contains(int[] ids, int id) {
        for (int x : ids) {
            if (x == id) {
                return true;
            }
        }
        return false;
    }
}
