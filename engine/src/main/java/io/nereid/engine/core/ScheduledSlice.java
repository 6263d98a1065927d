package io.nereid.engine.core;

import io.nereid.engine.backend.Slice;
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
     * The backend's view: every position, the sequence's blocks, the logit rows, and whether their argmax
     * is all the {@code OutputProcessor} needs of them (a greedy choice without logprobs or active logits
     * processors, which {@link #argmaxOnly} tells).
     */
    Slice toSlice() {
        int[] all = draftTokens.length == 0 ? tokens : concat(tokens, draftTokens);
        return new Slice(all, start, sequence.table().blockIds(), logitRows, sequence.request.pools(), argmaxOnly());
    }

    /**
     * Whether the slice's logit rows are only there to choose the next tokens, each the argmax of its raw row:
     * it samples, scores no prompt and pools nothing, and its choice takes the argmax with no logprobs
     * (forks of n > 1 start from the same chain state, so they take it too).
     */
    boolean argmaxOnly() {
        RequestState r = sequence.request;
        return samples() && logitRows == 1 + draftTokens.length && !scoresPrompt() && !r.pools()
                && !r.request.logprobs() && sequence.output().chain.takesArgmax();
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
