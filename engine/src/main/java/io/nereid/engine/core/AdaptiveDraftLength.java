package io.nereid.engine.core;

import java.util.HashMap;
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
 * <p>The choice: with {@code B} sequences in the step, {@code d} drafts already proposed for those
 * planned before this one, expected to add {@code g} tokens, {@code T(n)} the time of a decode-only
 * step of {@code B} sequences and {@code n} tokens, and {@code α} the probability that a draft is
 * accepted (each draft after an accepted one; estimated per sequence as accepted / tried positions,
 * decayed so that it follows the text, and pulled toward all sequences' rate while it has seen
 * little), {@code k} drafts make the sequence emit {@code (1 - α^(k+1)) / (1 - α)} tokens in
 * expectation (Leviathan et al. 2023) instead of one, and the step
 * {@code (B + g + α + ... + α^k) / T(B + d + k)} tokens a second; the {@code k} in {@code [0, max]}
 * with the most is taken (the smaller on a tie). One sequence: {@code (1 - α^(k+1)) / (1 - α)} per
 * {@code T(1 + k)}. A step time not yet seen is interpolated between the
 * nearest ones seen (beyond the largest: grown in proportion to the tokens, a compute-bound step's
 * cost); a step time's mean follows faster steps more than slower ones, and the first
 * {@value #COLD_STEPS} of each token count are not kept (the JIT compiles each count's kernels when it
 * first runs them). Exploration, deterministic: while {@code T(B)} is unknown a step runs without
 * drafts, while {@code T(B + max)} is unknown its first sequence drafts {@code max} and the others none;
 * and now and then a sequence takes
 * another length, the one whose step was timed longest ago, so that a choice of none still learns
 * the sequence's acceptance, and step costs measured at a shorter context are measured again:
 * {@value #PROBE_EVERY} decisions after its choice last moved, then twice as many each time, up to
 * {@value #MAX_PROBE_EVERY_DRAFTING} while it drafts and {@value #MAX_PROBE_EVERY} while it does not; with
 * a draft model, whose probe then costs several steps' time (it first catches up on the tokens it
 * skipped), after {@value #NONE_AFTER_PROBES} verified probes in a row that left the choice at none,
 * none for the rest of the sequence.
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
    private final int maxTokens;
    private final Map<Integer, Costs> costs = new HashMap<>();   // by the step's sequences
    private final Map<Object, Acceptance> sequences = new IdentityHashMap<>();
    private double acceptedAll = 1;     // all sequences' accepted / tried positions, from 1 / 2
    private double triedAll = 2;
    private int running = 1;
    private int planned;                // drafts proposed so far in the step being planned
    private double plannedGain;         // the tokens they are expected to add
    private long decisions;

    /** Decode-only steps of one number of sequences, by their tokens. */
    private static final class Costs {
        final double[] nanos;           // mean time of a step of n tokens; 0 when not kept yet
        final int[] observed;           // steps of n tokens timed, the cold ones included
        final long[] seenAt;            // the decision count when a step of n tokens was last timed

        Costs(int maxTokens) {
            nanos = new double[maxTokens + 1];
            observed = new int[maxTokens + 1];
            seenAt = new long[maxTokens + 1];
        }
    }

    private static final class Acceptance {
        double accepted;
        double tried;
        int best = -1;                      // the last choice
        int interval = PROBE_EVERY;         // decisions between probes
        int sinceProbe;
        boolean probing;                    // the last decision was a probe, not yet verified
        boolean probeVerified;              // ... and it was
        int noneAfterProbes;                // verified probes in a row after which the choice stayed none
        // (a probe that drafted nothing, or whose slice finished, taught nothing and is not counted)
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
        this.maxTokens = maxTokens;
    }

    @Override
    public void beginStep() {
        planned = 0;
        plannedGain = 0;
        inner.beginStep();
    }

    @Override
    public boolean enabledAt(int running) {
        this.running = Math.max(1, running);
        return inner.enabledAt(running);
    }

    @Override
    public int[] propose(Object sequence, int[] tokens, int length, int limit) {
        int k = draftLength(sequence, Math.min(limit, max));
        int[] drafts = k == 0 ? new int[0] : inner.propose(sequence, tokens, length, k);
        planned += drafts.length;
        if (drafts.length > 0) {
            plannedGain += expectedTokens(acceptance(sequences.get(sequence)), drafts.length) - 1;
        }
        return drafts;
    }

    @Override
    public boolean catchesUp() {
        return inner.catchesUp();
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
        if (a.probing) {
            a.probeVerified = true;
        }
        inner.verified(sequence, drafted, accepted);
    }

    @Override
    public void stepTimed(int sequences, int tokens, long nanos) {
        if (sequences >= 1 && tokens >= sequences && tokens <= maxTokens && nanos > 0) {
            Costs c = costs(sequences);
            c.seenAt[tokens] = decisions;
            if (++c.observed[tokens] > COLD_STEPS) {
                double t = c.nanos[tokens];
                // a step slower than the mean moves it little (a collection, a compilation, another process), a faster
                // one much (the first steps ran before the JIT had compiled the kernels: 110M Q4_0 458 against 4 ms)
                c.nanos[tokens] = t == 0 ? nanos : t + (nanos < t ? DOWN_WEIGHT : UP_WEIGHT) * (nanos - t);
            }
        }
        inner.stepTimed(sequences, tokens, nanos);
    }

    private Costs costs(int sequences) {
        return this.costs.computeIfAbsent(sequences, x -> new Costs(maxTokens));
    }

    /**
     * The drafts {@code sequence} verifies in this step, at most {@code limit}: with {@code B} sequences running
     * and {@code d} drafts proposed for the others planned before it, the step costs {@code T(B + d + k)} against
     * {@code T(B + d)} without its drafts, both of steps of {@code B} sequences.
     */
    int draftLength(Object sequence, int limit) {
        if (limit <= 0) {
            return 0;
        }
        decisions++;
        int b = Math.min(running, maxTokens);
        Costs c = costs(b);
        int base = Math.min(b + planned, maxTokens);
        int top = Math.min(limit, maxTokens - base);
        if (top <= 0) {
            return 0;
        }
        Acceptance a = sequences.computeIfAbsent(sequence, x -> new Acceptance());
        boolean learned = a.probing && a.probeVerified;   // the last decision was a probe, and its drafts were verified
        a.probing = false;
        int k;
        int explore = Math.min(max, maxTokens - b);
        if (c.nanos[b] == 0) {
            k = 0;                                   // the cost of a step without drafts first
        } else if (c.nanos[b + explore] == 0) {
            k = planned == 0 ? top : 0;              // then that of the most drafts: the first sequence's, the others none
        } else {
            k = best(acceptance(a), b, b + plannedGain, base, top);
            if (k != a.best) {
                a.best = k;
                a.interval = PROBE_EVERY;            // the choice moved: look around often again
                a.noneAfterProbes = 0;
            } else if (k == 0 && learned && ++a.noneAfterProbes >= NONE_AFTER_PROBES && inner.catchesUp()) {
                a.interval = Integer.MAX_VALUE;      // none, probe after probe: no more probes for this sequence
            }
            if (++a.sinceProbe >= a.interval) {
                // now and then another length: the sequence's rate even where none pays, and the step costs of the
                // others measured again (those of a shorter context go stale); less often each time the choice stays
                // (a probe can cost several steps: a draft model catches up on the tokens it missed)
                int probe = -1;
                for (int j = 0; j <= top; j++) {       // the other length whose step was timed longest ago
                    if (j != k && (probe < 0 || c.seenAt[base + j] < c.seenAt[base + probe])) {
                        probe = j;
                    }
                }
                k = probe;
                a.probing = k > 0;
                a.probeVerified = false;
                a.sinceProbe = 0;
                a.interval = (int) Math.min(a.best > 0 ? MAX_PROBE_EVERY_DRAFTING : MAX_PROBE_EVERY, 2L * a.interval);
            }
        }
        return k;
    }

    /**
     * The {@code k} in {@code [0, top]} with the most expected tokens a second for the step: it holds {@code base}
     * tokens without this sequence's drafts, of {@code sequences} sequences, and is expected to emit
     * {@code expected} tokens; {@code k} drafts add {@code α + ... + α^k} to that.
     */
    int best(double alpha, int sequences, double expected, int base, int top) {
        int best = 0;
        double bestRate = expected / cost(sequences, base);
        for (int k = 1; k <= top; k++) {
            double rate = (expected + expectedTokens(alpha, k) - 1) / cost(sequences, base + k);
            if (rate > bestRate * (1 + 1e-9)) {
                best = k;
                bestRate = rate;
            }
        }
        return best;
    }

    /** Tokens a step emits for a sequence that drafts {@code k} accepted at rate {@code alpha}: {@code 1 + α + ... + α^k}. */
    static double expectedTokens(double alpha, int k) {
        double tokens = 1;
        double power = 1;
        for (int i = 0; i < k; i++) {
            power *= alpha;
            tokens += power;
        }
        return tokens;
    }

    /** {@code sequence}'s acceptance rate: its decayed counts with {@value #PRIOR_TRIALS} trials at all sequences' rate. */
    double acceptance(Acceptance a) {
        double all = acceptedAll / triedAll;
        return Math.min(0.999, (a.accepted + PRIOR_TRIALS * all) / (a.tried + PRIOR_TRIALS));
    }

    /**
     * The time of a decode-only step of {@code sequences} sequences and {@code n} tokens: measured, else interpolated
     * between the nearest measured (see the class doc); 1 when none of those sequences was.
     */
    double cost(int sequences, int n) {
        double[] t = costs(sequences).nanos;
        if (t[n] > 0) {
            return t[n];
        }
        int lo = n - 1;
        while (lo >= 1 && t[lo] == 0) {
            lo--;
        }
        int hi = n + 1;
        while (hi < t.length && t[hi] == 0) {
            hi++;
        }
        if (lo < 1) {
            return hi < t.length ? t[hi] : 1;
        }
        if (hi >= t.length) {
            return t[lo] * n / lo;
        }
        return t[lo] + (t[hi] - t[lo]) * (n - lo) / (hi - lo);
    }

    /** Sequences whose acceptance this keeps (released ones are forgotten). */
    int tracked() {
        return sequences.size();
    }
}
