package io.nereid.engine.core;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Speculation that pays for itself: a {@link DraftProposer} around another that asks it, per
 * sequence and step, for the number of drafts that is expected to give the most tokens a second,
 * from what this engine has measured: the step times of decode-only steps by their token count
 * (prompt lookup or draft model included), and the sequence's acceptance rate. {@code 0} (no drafts)
 * is one of the choices, so where verifying costs more than its accepted drafts bring (on a CPU the
 * integer kernels of Q4_0 / Q4_K_M / Q8_0 cost about one decode a token: 110M Q4_0 n-gram with 2 or 4
 * drafts ran at 135 against 166 tok/s plain), the sequence decodes one token a step instead.
 *
 * <p>The choice: with {@code B} sequences in the step, {@code T(n)} the time of a decode-only step of
 * {@code n} tokens and {@code α} the probability that a draft is accepted (each draft after an
 * accepted one; estimated per sequence as accepted / tried positions, decayed so that it follows the
 * text, and pulled toward all sequences' rate while it has seen little), {@code k} drafts give
 * {@code (1 - α^(k+1)) / (1 - α)} tokens in expectation (Leviathan et al. 2023) for a step costing
 * {@code T(B + k) / T(B)} of one without them; the {@code k} in {@code [0, max]} with the most tokens
 * per cost is taken (the smaller on a tie). A step time not yet seen is interpolated between the
 * nearest ones seen (beyond the largest: grown in proportion to the tokens, a compute-bound step's
 * cost); a step time's mean follows faster steps more than slower ones, and the first
 * {@value #COLD_STEPS} of each token count are not kept (the JIT compiles each count's kernels when it
 * first runs them). Exploration, deterministic: while {@code T(B)} is unknown a step runs without
 * drafts, while {@code T(B + max)} is unknown with all {@code max}; and now and then a sequence takes
 * another length, the one whose step was timed longest ago, so that a choice of none still learns
 * the sequence's acceptance, and step costs measured at a shorter context are measured again:
 * {@value #PROBE_EVERY} decisions after its choice last moved, then twice as many each time, up to
 * {@value #MAX_PROBE_EVERY_DRAFTING} while it drafts and {@value #MAX_PROBE_EVERY} while it does not (a
 * probe then may cost several steps' time: a draft model first catches up on the tokens it skipped);
 * after {@value #NONE_AFTER_PROBES} probes in a row that left the choice at none, none for the rest of
 * the sequence.
 *
 * <p>Not in vLLM, whose {@code num_speculative_tokens} is a fixed length; {@code --speculative-adaptive
 * false} keeps that. Greedy output and the sampled distribution are the same for any draft length
 * (verification is lossless), so the choice changes speed only. Engine thread only.
 */
public final class AdaptiveDraftLength implements DraftProposer {

    /** Decisions between a sequence's probes of another length after its choice moved; doubled after each probe. */
    static final int PROBE_EVERY = 8;

    /** The most decisions between probes while the choice is none. */
    static final int MAX_PROBE_EVERY = 1024;

    /**
     * The most decisions between probes while the choice drafts (the draft model keeps up then, so a probe costs
     * one step): the lengths not chosen are measured again at least this often, in turn.
     */
    static final int MAX_PROBE_EVERY_DRAFTING = 64;

    /**
     * Timed steps of each token count not kept: the first ones run code the JIT has not compiled yet (110M F16, the
     * first 60 one-token steps 11.8 ms on average against 4.5 after; the first of five tokens 33 ms against 14).
     */
    static final int COLD_STEPS = 2;

    /**
     * Probes in a row after which the choice stayed none that end a sequence's probes: a draft model
     * catches up on every token it skipped before it drafts (110M Q4_0 with a Q8_0 draft, drafts
     * accepted a third of the time: 115 against 160 tok/s plain while it kept probing every 1024).
     */
    static final int NONE_AFTER_PROBES = 3;

    /** Weight of a new step time in its running mean: faster than the mean, slower. */
    private static final double DOWN_WEIGHT = 0.75;
    private static final double UP_WEIGHT = 0.1;

    /** How much of a sequence's counts a new verification keeps (so its rate follows the text). */
    private static final double DECAY = 0.9;

    /** Pseudo-trials of all sequences' rate a sequence's estimate starts from. */
    private static final double PRIOR_TRIALS = 4;

    private final DraftProposer inner;
    private final int max;
    private final double[] stepNanos;     // mean time of a decode-only step of n tokens; 0 when not seen
    private final int[] observed;         // steps of n tokens timed, the cold ones included
    private final long[] seenAt;          // the decision count when a step of n tokens was last timed
    private final Map<Object, Acceptance> sequences = new IdentityHashMap<>();
    private double acceptedAll = 1;     // all sequences' accepted / tried positions, from 1 / 2
    private double triedAll = 2;
    private int running = 1;
    private long decisions;
    private long draftsChosen;

    private static final class Acceptance {
        double accepted;
        double tried;
        int best = -1;                      // the last choice
        int interval = PROBE_EVERY;         // decisions between probes
        int sinceProbe;
        long probes;
        int noneAfterProbes;                // probes in a row after which the choice stayed none
    }

    /**
     * @param inner     the proposer whose drafts are verified
     * @param max       the most drafts a step ({@code num_speculative_tokens})
     * @param maxTokens the most tokens a step may hold (the scheduler's token budget); step times of
     *                  more are not kept
     */
    public AdaptiveDraftLength(DraftProposer inner, int max, int maxTokens) {
        if (max < 1 || maxTokens < 1) {
            throw new IllegalArgumentException("adaptive draft length: max " + max + " and step tokens " + maxTokens
                    + " must be positive");
        }
        this.inner = inner;
        this.max = max;
        this.stepNanos = new double[maxTokens + 1];
        this.observed = new int[maxTokens + 1];
        this.seenAt = new long[maxTokens + 1];
    }

    @Override
    public boolean enabledAt(int running) {
        this.running = Math.max(1, running);
        return inner.enabledAt(running);
    }

    @Override
    public int[] propose(Object sequence, int[] tokens, int length, int limit) {
        int k = draftLength(sequence, Math.min(limit, max));
        return k == 0 ? new int[0] : inner.propose(sequence, tokens, length, k);
    }

    @Override
    public void released(Object sequence) {
        sequences.remove(sequence);
        inner.released(sequence);
    }

    @Override
    public void verified(Object sequence, int drafted, int accepted) {
        if (drafted <= 0) {
            return;
        }
        // positions tried: the accepted ones and the first rejected, if any (each draft after an accepted one)
        int tried = accepted + (accepted < drafted ? 1 : 0);
        acceptedAll += accepted;
        triedAll += tried;
        Acceptance a = sequences.computeIfAbsent(sequence, x -> new Acceptance());
        a.accepted = DECAY * a.accepted + accepted;
        a.tried = DECAY * a.tried + tried;
        inner.verified(sequence, drafted, accepted);
    }

    @Override
    public void stepTimed(int sequences, int tokens, long nanos) {
        if (tokens >= 1 && tokens < stepNanos.length && nanos > 0) {
            seenAt[tokens] = decisions;
            if (++observed[tokens] <= COLD_STEPS) {
                inner.stepTimed(sequences, tokens, nanos);
                return;
            }
            double t = stepNanos[tokens];
            // a step slower than the mean moves it little (a collection, a compilation, another process), a faster
            // one much (the first steps ran before the JIT had compiled the kernels: 110M Q4_0 458 against 4 ms)
            stepNanos[tokens] = t == 0 ? nanos : t + (nanos < t ? DOWN_WEIGHT : UP_WEIGHT) * (nanos - t);
        }
        inner.stepTimed(sequences, tokens, nanos);
    }

    /** The drafts {@code sequence} verifies in this step, at most {@code limit}. */
    int draftLength(Object sequence, int limit) {
        if (limit <= 0) {
            return 0;
        }
        decisions++;
        int base = Math.min(running, stepNanos.length - 1);
        int top = Math.min(limit, stepNanos.length - 1 - base);
        if (top <= 0) {
            return 0;
        }
        int k;
        if (stepNanos[base] == 0) {
            k = 0;                                   // the cost of a step without drafts first
        } else if (stepNanos[base + top] == 0) {
            k = top;                                 // then that of the most drafts
        } else {
            Acceptance a = sequences.computeIfAbsent(sequence, x -> new Acceptance());
            k = best(acceptance(a), base, top);
            if (k != a.best) {
                a.best = k;
                a.interval = PROBE_EVERY;            // the choice moved: look around often again
                a.noneAfterProbes = 0;
            } else if (k == 0 && a.sinceProbe == 0 && a.probes > 0 && ++a.noneAfterProbes >= NONE_AFTER_PROBES) {
                a.interval = Integer.MAX_VALUE;      // none, probe after probe: no more probes for this sequence
            }
            if (++a.sinceProbe >= a.interval) {
                // now and then another length, each in turn: the sequence's rate even where none pays, and the
                // step costs of the others measured again (those of a cold JIT, or of a shorter context, go
                // stale); less often each time the choice stays (a probe can cost several steps: a draft model
                // catches up on the tokens it missed)
                int probe = -1;
                for (int j = 0; j <= top; j++) {       // the other length whose step was timed longest ago
                    if (j != k && (probe < 0 || seenAt[base + j] < seenAt[base + probe])) {
                        probe = j;
                    }
                }
                k = probe;
                a.probes++;
                a.sinceProbe = 0;
                a.interval = Math.min(a.best > 0 ? MAX_PROBE_EVERY_DRAFTING : MAX_PROBE_EVERY, 2 * a.interval);
            }
        }
        draftsChosen += k;
        return k;
    }

    /** The {@code k} in {@code [0, top]} with the most expected tokens per step cost. */
    int best(double alpha, int base, int top) {
        double one = cost(base);
        int best = 0;
        double bestRate = 1;
        double tokens = 1;
        double power = 1;
        for (int k = 1; k <= top; k++) {
            power *= alpha;
            tokens += power;                       // 1 + α + ... + α^k
            double rate = tokens / (cost(base + k) / one);
            if (rate > bestRate * (1 + 1e-9)) {
                best = k;
                bestRate = rate;
            }
        }
        return best;
    }

    /** {@code sequence}'s acceptance rate: its decayed counts with {@value #PRIOR_TRIALS} trials at all sequences' rate. */
    double acceptance(Acceptance a) {
        double all = acceptedAll / triedAll;
        return Math.min(0.999, (a.accepted + PRIOR_TRIALS * all) / (a.tried + PRIOR_TRIALS));
    }

    /** The time of a decode-only step of {@code n} tokens: measured, else interpolated (see the class doc). */
    double cost(int n) {
        if (stepNanos[n] > 0) {
            return stepNanos[n];
        }
        int lo = n - 1;
        while (lo >= 1 && stepNanos[lo] == 0) {
            lo--;
        }
        int hi = n + 1;
        while (hi < stepNanos.length && stepNanos[hi] == 0) {
            hi++;
        }
        if (lo < 1) {
            return hi < stepNanos.length ? stepNanos[hi] : 1;   // callers have seen a shorter step
        }
        if (hi >= stepNanos.length) {
            return stepNanos[lo] * n / lo;
        }
        return stepNanos[lo] + (stepNanos[hi] - stepNanos[lo]) * (n - lo) / (hi - lo);
    }

    /** Mean drafts chosen per decision so far (for the log and {@code generate}'s summary). */
    public double meanDraftLength() {
        return decisions == 0 ? 0 : (double) draftsChosen / decisions;
    }
}
