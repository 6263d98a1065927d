package io.nereid.engine.core;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.sampling.Distribution;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Draft-model drafts (vLLM's {@code "method": "draft_model"}): a second, smaller model with the
 * target's vocabulary runs on a backend of its own, with its own KV blocks, and proposes its
 * continuation of each decoding sequence, {@code k} tokens: for a greedy request its argmax (q one-hot),
 * for a sampled one a draw from its distribution q under the request's temperature / top-k / top-p /
 * min-p (seeded per request and choice), the q of each draft left on the sequence
 * ({@code Sequence.draftQ}) for the verifier, which keeps a draft with probability min(1, p/q) and else
 * draws from normalize(max(0, p - q)) ({@link io.nereid.engine.sampling.TokenSelector#verify(
 * io.nereid.engine.sampling.Probabilities, int, io.nereid.engine.sampling.Probabilities)}): the output is
 * exactly the target's distribution either way, and a draft close to the target is kept more often
 * when sampling than its argmax would be.
 *
 * <p>Per sequence it remembers which tokens its KV holds. Before proposing it keeps only the prefix
 * those share with the sequence (what the target rejected, or recomputed after a preemption, is
 * dropped), feeds the rest in prefill chunks of at most {@code chunk} tokens (the prompt the first
 * time, the verified tokens after that), then runs {@code k - 1} one-token steps. Sequences are
 * drafted one at a time, inside the scheduler's step planning; when its blocks run out it proposes
 * nothing for that sequence rather than fail.
 *
 * <p>Engine thread only. The draft backend belongs to the caller, who closes it after the engine.
 */
public final class DraftModelProposer implements DraftProposer {

    private final Backend draft;
    private final int k;
    private final int blockSize;
    private final int maxPositions;
    private final int chunk;
    private final int disableAbove;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private final Map<Object, State> states = new IdentityHashMap<>();

    /** One sequence's draft KV: the tokens it holds, in order, and the blocks they fill. */
    private static final class State {
        int[] known = new int[64];
        int length;
        int[] blocks = new int[0];
        io.nereid.engine.sampling.Distribution q;   // the request's temperature / top-k / top-p / min-p, when it samples
        io.nereid.engine.sampling.TokenSelector.Draw draw;
    }

    /**
     * @param draft        the draft model's backend, its KV already allocated with {@code numBlocks}
     *                     blocks of {@code blockSize} for up to {@code maxPositions} positions
     * @param k            drafts per step
     * @param chunk        most tokens per catch-up forward
     * @param disableAbove no drafts while more sequences than this run
     */
    public DraftModelProposer(Backend draft, int numBlocks, int blockSize, int maxPositions, int k, int chunk,
            int disableAbove) {
        if (k < 1 || chunk < 1 || numBlocks < 1 || disableAbove < 1) {
            throw new IllegalArgumentException("draft model: k " + k + ", chunk " + chunk + ", blocks " + numBlocks
                    + " and the batch limit " + disableAbove + " must be positive");
        }
        this.draft = draft;
        this.k = k;
        this.blockSize = blockSize;
        this.maxPositions = maxPositions;
        this.chunk = chunk;
        this.disableAbove = disableAbove;
        for (int b = 0; b < numBlocks; b++) {
            free.add(b);
        }
    }

    /** Skipped steps' tokens are computed into the draft's KV before its next proposal. */
    @Override
    public boolean catchesUp() {
        return true;
    }

    @Override
    public int[] propose(Object sequence, int[] tokens, int length, int max) {
        int want = Math.min(k, Math.min(max, maxPositions - length));
        if (want <= 0 || length == 0) {
            return new int[0];
        }
        State s = states.computeIfAbsent(sequence, x -> new State());
        int common = 0;
        while (common < Math.min(s.length, length) && s.known[common] == tokens[common]) {
            common++;
        }
        // the last token is always computed again: its logits give the first draft
        s.length = Math.min(common, length - 1);
        if (!reserve(s, length + want - 1)) {
            return new int[0];
        }
        float[] logits = null;
        for (int from = s.length; from < length; from += chunk) {
            int[] piece = Arrays.copyOfRange(tokens, from, Math.min(length, from + chunk));
            logits = forward(s, piece, from, from + piece.length == length);
        }
        // a sampled request's drafts are drawn from the draft model's distribution q under its sampling
        // parameters (the verifier keeps d with probability min(1, p(d)/q(d))); a greedy one's are the argmax
        Sequence seq = sequence instanceof Sequence x ? x : null;
        io.nereid.engine.api.SamplingParams params = seq == null ? null : seq.request.request.sampling();
        boolean sample = params != null && !params.greedy();
        if (sample && s.q == null) {
            s.q = new io.nereid.engine.sampling.Distribution(params);
            long seed = (params.seed() == null ? seq.request.request.id().hashCode() : params.seed()) * 0x9E3779B97F4A7C15L;
            s.draw = new io.nereid.engine.sampling.TokenSelector.Draw(seed + 31L * seq.choice + 1);
        }
        io.nereid.engine.sampling.Probabilities[] qs = sample ? new io.nereid.engine.sampling.Probabilities[want] : null;
        int[] drafts = new int[want];
        for (int i = 0; i < want; i++) {
            if (i > 0) {
                logits = forward(s, new int[] {drafts[i - 1]}, length + i - 1, true);
            }
            if (sample) {
                qs[i] = s.q.of(logits);
                drafts[i] = s.draw.select(qs[i]);
            } else {
                drafts[i] = Distribution.argmax(logits);
            }
        }
        if (seq != null) {
            seq.draftQ = qs;
        }
        return drafts;
    }

    /** Computes {@code tokens} at {@code start} into the sequence's draft KV; the last row's logits if wanted. */
    private float[] forward(State s, int[] tokens, int start, boolean logits) {
        StepOutput out = draft.forward(new Step(java.util.List.of(new Slice(tokens, start, Arrays.copyOf(s.blocks,
                (start + tokens.length + blockSize - 1) / blockSize), logits ? 1 : 0))));
        if (s.known.length < start + tokens.length) {
            s.known = Arrays.copyOf(s.known, Math.max(2 * s.known.length, start + tokens.length));
        }
        System.arraycopy(tokens, 0, s.known, start, tokens.length);
        s.length = start + tokens.length;
        return logits ? out.row(0, 0) : null;
    }

    /** Blocks for positions {@code [0, positions)}; false (nothing taken) when the pool has too few. */
    private boolean reserve(State s, int positions) {
        int need = (positions + blockSize - 1) / blockSize - s.blocks.length;
        if (need <= 0) {
            return true;
        }
        if (need > free.size()) {
            return false;
        }
        int[] grown = Arrays.copyOf(s.blocks, s.blocks.length + need);
        for (int i = s.blocks.length; i < grown.length; i++) {
            grown[i] = free.pop();
        }
        s.blocks = grown;
        return true;
    }

    @Override
    public void released(Object sequence) {
        State s = states.remove(sequence);
        if (s != null) {
            for (int b : s.blocks) {
                free.push(b);
            }
        }
    }

    /** Blocks not held by any sequence, for tests. */
    int freeBlocks() {
        return free.size();
    }

    @Override
    public boolean enabledAt(int running) {
        return running <= disableAbove;
    }

    @Override
    public String toString() {
        return "draft_model(k=" + k + ")";
    }
}
