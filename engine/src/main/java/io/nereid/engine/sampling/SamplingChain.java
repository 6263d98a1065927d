package io.nereid.engine.sampling;

import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.TokenChoice;
import java.util.ArrayList;
import java.util.List;

/**
 * One sequence's way from logits to its next token: {@link LogitsProcessor}s (min_tokens
 * suppression, penalties, logit bias, in that order) on a copy of the logits, then the
 * {@link Distribution} (temperature, top-k, top-p, min-p), then the {@link TokenSelector} (greedy
 * or a draw from the sequence's own seeded RNG). Logprobs are reported from the raw logits, before
 * any processor.
 *
 * <p>{@link #sample} and {@link #distribution} read the processors' state but never change it; the
 * caller says which token the sequence emitted with {@link #accept}, and may take tokens back with
 * {@link #rollback} (a rejected draft). Only the draw's RNG advances on {@link #sample}, by one
 * number per token, and rollback does not rewind it.
 *
 * <p>Threading and lifecycle: one per sequence (each choice of n > 1 its own, with its own seed),
 * created when the sequence is and used by the engine thread only; not thread-safe.
 */
public final class SamplingChain {

    private final int vocabSize;
    private final int topLogprobs;
    private final LogitsProcessor[] processors;
    private final Distribution distribution;
    private final TokenSelector selector;
    private int accepted;

    /** A chain without min_tokens (single-sequence generation, tests). */
    public SamplingChain(SamplingParams params, int vocabSize, int[] promptTokens, long seed) {
        this(params, vocabSize, promptTokens, seed, 0, new int[0]);
    }

    /**
     * @param promptTokens  the prompt, for the repetition penalty
     * @param seed          the draw's seed (callers give each choice of n > 1 its own)
     * @param minTokens     how many tokens must be accepted before a suppressed id may be chosen
     * @param suppressedIds the ids held back until then: the model's EOS ids unless ignore_eos, and
     *                      the request's stop token ids
     * @throws IllegalArgumentException when logit_bias names a token outside the vocabulary
     */
    public SamplingChain(SamplingParams params, int vocabSize, int[] promptTokens, long seed, int minTokens,
            int[] suppressedIds) {
        this(params, vocabSize, promptTokens, seed, minTokens, suppressedIds, null);
    }

    /**
     * A chain that also applies {@code constraint} (a structured-output mask), last: after the
     * penalties and the bias, so nothing can bring back a token it forbids. Null for none.
     */
    public SamplingChain(SamplingParams params, int vocabSize, int[] promptTokens, long seed, int minTokens,
            int[] suppressedIds, LogitsProcessor constraint) {
        for (int id : params.logitBias().keySet()) {
            if (id < 0 || id >= vocabSize) {
                throw new IllegalArgumentException("logit_bias names token " + id + ", outside the vocabulary of " + vocabSize);
            }
        }
        this.vocabSize = vocabSize;
        this.topLogprobs = params.topLogprobs();
        List<LogitsProcessor> chain = new ArrayList<>(3);
        if (minTokens > 0 && suppressedIds.length > 0) {
            chain.add(new MinTokensProcessor(minTokens, suppressedIds));
        }
        if (!PenaltyProcessor.isNeutral(params.repetitionPenalty(), params.presencePenalty(), params.frequencyPenalty())) {
            chain.add(new PenaltyProcessor(params.repetitionPenalty(), params.presencePenalty(), params.frequencyPenalty(),
                    vocabSize, promptTokens));
        }
        if (!params.logitBias().isEmpty()) {
            chain.add(new LogitBiasProcessor(params.logitBias()));
        }
        if (constraint != null) {
            chain.add(constraint);
        }
        this.processors = chain.toArray(LogitsProcessor[]::new);
        this.distribution = new Distribution(params);
        this.selector = params.greedy() ? new TokenSelector.Greedy() : new TokenSelector.Draw(seed);
    }

    /**
     * Chooses the next token from {@code rawLogits} (vocab, left unchanged) without recording it:
     * call {@link #accept} with the token the sequence keeps. With {@code logprobs} the token comes
     * with its raw log-probability, rank and the request's {@code top_logprobs} alternatives;
     * without, logprob NaN, rank 0 and no alternatives, which spares two passes over the vocabulary.
     */
    public SampledToken sample(float[] rawLogits, boolean logprobs) {
        return choose(rawLogits, logprobs, selector::select);
    }

    /** The token {@code choice} picks from the processed distribution, reported from the raw logits. */
    private SampledToken choose(float[] rawLogits, boolean logprobs, java.util.function.ToIntFunction<Probabilities> choice) {
        float[] raw = logprobs ? RawLogprobs.logSoftmax(checked(rawLogits)) : null;
        int id = choice.applyAsInt(distribution(rawLogits));
        return logprobs ? RawLogprobs.report(raw, id, topLogprobs) : new SampledToken(id, Float.NaN, 0, new int[0], new float[0]);
    }

    /**
     * Verifies {@code draft} as the next token under {@code rawLogits} (see
     * {@link TokenSelector#verify}): the draft if it is accepted, else the token chosen in its place,
     * reported as {@link #sample} reports; not recorded (call {@link #accept} with the token kept).
     */
    public SampledToken verify(float[] rawLogits, int draft, boolean logprobs) {
        return verify(rawLogits, draft, logprobs, null);
    }

    /** {@link #verify(float[], int, boolean)} of a draft drawn from {@code q} (null: q all on the draft). */
    public SampledToken verify(float[] rawLogits, int draft, boolean logprobs, Probabilities q) {
        if (draft < 0 || draft >= vocabSize) {
            throw new IllegalArgumentException("draft token " + draft + " is outside the vocabulary of " + vocabSize);
        }
        return choose(rawLogits, logprobs, p -> selector.verify(p, draft, q));
    }

    /**
     * Whether the next token is the argmax of the raw logits (the lowest id among equals), whatever
     * else they hold: a greedy chain whose processors would change nothing now. Holds while the
     * sequence goes on, except through a {@link #rollback} (of min_tokens' count).
     */
    public boolean takesArgmax() {
        return selector instanceof TokenSelector.Greedy && !processing();
    }

    /**
     * How a backend may choose the next token for this chain where the logits are
     * ({@link TokenChoice}): the argmax ({@link #takesArgmax}), or a draw (a drawing chain with no processor
     * at work) from the whole softmax, or from a top-k of at most {@link TokenChoice#MAX_TOP_K} or the whole
     * vocabulary cut by top-p and min-p, whose number this takes from the chain's generator now, as
     * {@link #sample} would have; null when the chain needs the logits (a processor at work, or a top-k above
     * {@link TokenChoice#MAX_TOP_K}). Call once per token,
     * then take the token with {@link #chosen} (the backend chose) or {@link #sample(float[], TokenChoice)}
     * (it returned the logits).
     */
    public TokenChoice choice() {
        if (takesArgmax()) {
            return TokenChoice.ARGMAX;
        }
        if (!(selector instanceof TokenSelector.Draw draw) || processing()) {
            return null;
        }
        return distribution.draw(vocabSize, draw::nextUniform);
    }

    /** The token a backend chose as {@link #choice} said (no logprobs). */
    public SampledToken chosen(int token) {
        if (token < 0 || token >= vocabSize) {
            throw new IllegalArgumentException("chosen token " + token + " is outside the vocabulary of " + vocabSize);
        }
        return new SampledToken(token, Float.NaN, 0, new int[0], new float[0]);
    }

    /**
     * {@link #sample(float[], boolean)} as {@code choice} (from {@link #choice}) says, with logprobs when it asks
     * for them.
     */
    public SampledToken sample(float[] rawLogits, TokenChoice choice) {
        if (choice.argmax()) {
            return sample(rawLogits, choice.logprobs());
        }
        return choose(rawLogits, choice.logprobs(), p -> TokenSelector.Draw.select(p, choice.uniform()));
    }

    private boolean processing() {
        for (LogitsProcessor p : processors) {
            if (p.active()) {
                return true;
            }
        }
        return false;
    }

    /** The processed distribution of the next token under {@code rawLogits} (left unchanged), without drawing. */
    public Probabilities distribution(float[] rawLogits) {
        if (!processing()) {
            return distribution.of(checked(rawLogits));   // nothing would change the row, and of() leaves it: no copy
        }
        float[] z = checked(rawLogits).clone();
        for (LogitsProcessor p : processors) {
            p.apply(z);
        }
        return distribution.of(z);
    }

    /** The sequence emitted {@code token}: every processor advances past it. */
    public void accept(int token) {
        if (token < 0 || token >= vocabSize) {
            throw new IllegalArgumentException("token " + token + " is outside the vocabulary of " + vocabSize);
        }
        for (LogitsProcessor p : processors) {
            p.accept(token);
        }
        accepted++;
    }

    /** Forgets the last {@code n} accepted tokens: every processor is as it was before them. */
    public void rollback(int n) {
        if (n < 0 || n > accepted) {
            throw new IllegalArgumentException("cannot roll back " + n + " tokens; " + accepted + " were accepted");
        }
        for (LogitsProcessor p : processors) {
            p.rollback(n);
        }
        accepted -= n;
    }

    /** How many tokens were accepted and not rolled back. */
    public int accepted() {
        return accepted;
    }

    private float[] checked(float[] logits) {
        if (logits.length != vocabSize) {
            throw new IllegalArgumentException("logits have " + logits.length + " entries for a vocabulary of " + vocabSize);
        }
        return logits;
    }
}
