package io.nereid.engine.core;

import io.nereid.engine.backend.Scoring;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.TokenChoice;
import java.util.Arrays;

/**
 * One sequence's part of a step, as the {@link Scheduler} planned it: {@code tokens} (a prompt
 * chunk, or the last sampled token of a running sequence) at positions from {@code start}, then
 * {@code draftTokens} proposed to be verified in the same pass (speculative decoding; usually
 * none), and how many of the last positions need logits.
 *
 * <pre>
 *   position   start ............ start + tokens.length ...... + draftTokens.length
 *              [ tokens (known)  ][ draftTokens (to verify) ]
 *   logitRows                      the last logitRows positions: 1 + drafts for a decode,
 *                                  every position when the prompt is scored, 0 mid-prompt
 * </pre>
 *
 * @param sequence    whose tokens these are; its block table covers every position of the slice
 * @param start       position of {@code tokens[0]}
 * @param tokens      known tokens to compute (at least one)
 * @param draftTokens proposed tokens after them, to verify (empty for no speculation)
 * @param logitRows   trailing positions whose logits the backend returns
 */
record ScheduledSlice(Sequence sequence, int start, int[] tokens, int[] draftTokens, int logitRows) {

    private static final int[] NONE = {};

    ScheduledSlice {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("a slice needs at least one known token");
        }
        if (logitRows < 0 || logitRows > tokens.length + draftTokens.length) {
            throw new IllegalArgumentException("logit rows " + logitRows + " for " + tokens.length + " + "
                    + draftTokens.length + " tokens");
        }
    }

    /** Positions computed: known tokens and drafts. */
    int length() {
        return tokens.length + draftTokens.length;
    }

    /** Whether the slice ends at the sequence's last known token, so its logits give the next token. */
    boolean samples() {
        return start + tokens.length == sequence.length() && logitRows >= 1 + draftTokens.length;
    }

    /** Whether every position's logits are kept to score the prompt tokens that follow them. */
    boolean scoresPrompt() {
        return sequence.request.needsPromptLogprobs() && logitRows == length();
    }

    /**
     * The backend's view: every position, the sequence's blocks, the logit rows, and how the backend may
     * choose the next tokens itself ({@link #choose}). Called once per step the slice is computed in.
     */
    Slice toSlice() {
        int[] all = draftTokens.length == 0 ? tokens : concat(tokens, draftTokens);
        int[] next = scoredIds();
        return new Slice(all, start, sequence.table().blockIds(), logitRows, sequence.request.pools(), choose(),
                next.length == 0 ? null : new Scoring(next, sequence.request.request.promptLogprobs()));
    }

    /**
     * The prompt tokens this slice's rows score when it {@link #scoresPrompt() scores the prompt}: row j the token
     * at {@code start + j + 1}, for the rows whose next position is still the prompt's (none otherwise).
     */
    int[] scoredIds() {
        if (!scoresPrompt()) {
            return NONE;
        }
        int[] prompt = sequence.request.request.promptTokens();
        int end = Math.min(start + tokens.length, prompt.length - 1);
        return start >= end ? NONE : Arrays.copyOfRange(prompt, start + 1, end + 1);
    }

    /**
     * How the backend may choose the tokens this slice samples, kept in the choice's output for the
     * {@code OutputProcessor}: only where the rows serve nothing but choosing them and reporting the chosen
     * tokens' raw logprobs (the slice samples, scores no prompt, pools nothing) and the chain would choose from
     * the raw logits alone ({@link io.nereid.engine.sampling.SamplingChain#choice}). A draw (one number from
     * the chain's generator, taken here) needs a slice of one row whose choice is its own: no drafts, and not
     * the first token of n &gt; 1 choices, which all sample from one row; the argmax is every choice's. A
     * request for logprobs asks the backend for them with the tokens.
     */
    private TokenChoice choose() {
        ChoiceOutput o = sequence.output();
        o.pending = null;
        RequestState r = sequence.request;
        if (!samples() || logitRows != 1 + draftTokens.length || scoresPrompt() || r.pools()) {
            return null;
        }
        if (o.chain.takesArgmax()) {
            o.pending = TokenChoice.ARGMAX;
        } else if (draftTokens.length == 0 && (r.forked || r.request.n() == 1)) {
            o.pending = o.chain.choice();
        }
        if (o.pending != null && r.request.logprobs()) {
            o.pending = o.pending.withLogprobs(r.request.sampling().topLogprobs());
        }
        return o.pending;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Override
    public String toString() {
        return sequence.request.id() + "/" + sequence.choice + "@" + start + " " + Arrays.toString(tokens)
                + (draftTokens.length == 0 ? "" : " + drafts " + Arrays.toString(draftTokens)) + " rows " + logitRows;
    }
}
