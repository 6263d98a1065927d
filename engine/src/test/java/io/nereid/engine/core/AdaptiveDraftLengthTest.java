package io.nereid.engine.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntToDoubleFunction;
import org.junit.jupiter.api.Test;

/**
 * The draft length {@link AdaptiveDraftLength} chooses from step times and acceptance it is told: none where
 * verifying costs more than the drafts bring, all where it is nearly free, the best in between, with its probes
 * of the other lengths; the step-time means and their interpolation.
 */
class AdaptiveDraftLengthTest {

    /** Proposes as many drafts as asked and remembers how many that was. */
    private static class Inner implements DraftProposer {
        final List<Integer> asked = new ArrayList<>();
        final List<Object> released = new ArrayList<>();
        int verified;

        @Override
        public int[] propose(Object sequence, int[] tokens, int length, int max) {
            asked.add(max);
            int[] d = new int[max];
            Arrays.fill(d, 7);
            return d;
        }

        @Override
        public void released(Object sequence) {
            released.add(sequence);
        }

        @Override
        public void verified(Object sequence, int drafted, int accepted) {
            verified++;
        }
    }

    /**
     * One sequence decoding alone for {@code steps} steps: each step's length chosen, the step "run" (its time
     * {@code millis(tokens)}, each draft accepted while the pattern says so) and told back. Returns the lengths.
     */
    private static List<Integer> decode(AdaptiveDraftLength p, Object seq, int steps, IntToDoubleFunction millis,
            double alpha) {
        List<Integer> lengths = new ArrayList<>();
        long drawn = 0;
        for (int i = 0; i < steps; i++) {
            p.beginStep();
            p.enabledAt(1);
            int k = p.propose(seq, new int[] {1}, 1, 4).length;
            lengths.add(k);
            int accepted = 0;
            // deterministic acceptance at rate alpha: draft j of the run kept while a low-discrepancy draw is below it
            while (accepted < k && ((++drawn * 0.6180339887) % 1.0) < alpha) {
                accepted++;
            }
            if (k > 0) {
                p.verified(seq, k, accepted);
            }
            p.stepTimed(1, 1 + k, (long) (millis.applyAsDouble(1 + k) * 1e6));
        }
        return lengths;
    }

    /** A step of {@code n} tokens timed at {@code nanos} after its cold steps (timed at ten times that, not kept). */
    private static void timed(AdaptiveDraftLength p, int n, long nanos) {
        for (int i = 0; i < AdaptiveDraftLength.COLD_STEPS; i++) {
            p.stepTimed(1, n, 10 * nanos);
        }
        p.stepTimed(1, n, nanos);
    }

    private static long count(List<Integer> lengths, int k) {
        return lengths.stream().filter(x -> x == k).count();
    }

    @Test
    void measuresWithoutDraftsThenWithAllBeforeChoosing() {
        AdaptiveDraftLength p = new AdaptiveDraftLength(new Inner(), 4, 512);
        List<Integer> lengths = decode(p, "s", 8, n -> 4.0 * n, 0.5);
        int cold = AdaptiveDraftLength.COLD_STEPS;
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i <= cold; i++) {
            expected.add(0);
        }
        for (int i = 0; i <= cold; i++) {
            expected.add(4);
        }
        assertEquals(expected, lengths.subList(0, 2 * cold + 2), "first steps without drafts, then with all of them,"
                + " until one of each is timed warm");
        assertEquals(4.0e6, p.cost(1, 1), 1);
        assertEquals(20.0e6, p.cost(1, 5), 1);
    }

    @Test
    void verificationThatCostsAboutADecodeATokenGetsNoDraftsButItsProbes() {
        // 110M Q4_0 on this CPU: steps of 1..5 tokens 1, 1.82, 2.51, 3.16, 3.82 times 4 ms; 3 of 4 drafts accepted
        double[] ms = {0, 4, 7.28, 10.04, 12.64, 15.28};
        Inner inner = new CatchingUp();
        AdaptiveDraftLength p = new AdaptiveDraftLength(inner, 4, 512);
        List<Integer> lengths = decode(p, "s", 400, n -> ms[n], 0.75);
        List<Integer> after = lengths.subList(2 * AdaptiveDraftLength.COLD_STEPS + 2, lengths.size());
        long none = count(after, 0);
        assertTrue(none >= after.size() - 8, "nearly every step without drafts: " + lengths);
        // the probes: the length timed longest ago, after 8, 16, 32 decisions; then none for good
        // (a length not timed yet is interpolated between those timed: one draft first looked worth it, until timed)
        List<Integer> probes = after.stream().filter(k -> k > 0).toList();
        assertTrue(probes.size() <= 8 && probes.containsAll(List.of(2, 3, 4)), "each other length timed: " + lengths);
        assertEquals(0, count(lengths.subList(200, lengths.size()), 1) + count(lengths.subList(200, lengths.size()), 2)
                + count(lengths.subList(200, lengths.size()), 3) + count(lengths.subList(200, lengths.size()), 4),
                "no probes after " + AdaptiveDraftLength.NONE_AFTER_PROBES + " that left the choice at none: " + lengths);
        // the inner proposer is asked only for the drafts chosen, never for none
        assertEquals(lengths.stream().filter(k -> k > 0).toList(), inner.asked);
    }

    /** {@link Inner} as a draft model: proposing after skipped steps costs a catch-up. */
    private static final class CatchingUp extends Inner {
        @Override
        public boolean catchesUp() {
            return true;
        }
    }

    /** Steps of two sequences, each proposing up to four drafts (always as many as asked), timed {@code millis(tokens)}. */
    private static List<String> decodeTwo(AdaptiveDraftLength p, int steps, IntToDoubleFunction millis, double alpha) {
        List<String> out = new ArrayList<>();
        long drawn = 0;
        for (int i = 0; i < steps; i++) {
            p.beginStep();
            int tokens = 0;
            StringBuilder step = new StringBuilder();
            for (String seq : List.of("a", "b")) {
                p.enabledAt(2);
                int k = p.propose(seq, new int[] {1}, 1, 4).length;
                step.append(k);
                tokens += 1 + k;
                int accepted = 0;
                while (accepted < k && ((++drawn * 0.6180339887) % 1.0) < alpha) {
                    accepted++;
                }
                if (k > 0) {
                    p.verified(seq, k, accepted);
                }
            }
            p.stepTimed(2, tokens, (long) (millis.applyAsDouble(tokens) * 1e6));
            out.add(step.toString());
        }
        return out;
    }

    @Test
    void twoSequencesAStepAreTimedAndChosenAsOneStep() {
        int cold = AdaptiveDraftLength.COLD_STEPS;
        // a draft costs 2/3 of a two-sequence step: drafts do not pay at α 0.75 (one of them: 2.75 tokens in 10 ms
        // against 2 in 6)
        List<String> steps = decodeTwo(new AdaptiveDraftLength(new Inner(), 4, 512), 300, n -> 6 + 4 * (n - 2), 0.75);
        // exploration: steps without drafts, then the first sequence with all four drafts and the second none, until
        // each is timed warm
        assertEquals(java.util.Collections.nCopies(cold + 1, "00"), steps.subList(0, cold + 1), steps.toString());
        assertEquals(java.util.Collections.nCopies(cold + 1, "40"), steps.subList(cold + 1, 2 * cold + 2), steps.toString());
        List<String> after = steps.subList(2 * cold + 2, steps.size());
        assertTrue(after.stream().filter("00"::equals).count() >= after.size() - 30, "mostly none: " + steps);
        // nearly free drafts (a bandwidth-bound step): both sequences draft all four
        steps = decodeTwo(new AdaptiveDraftLength(new Inner(), 4, 512), 300, n -> 10 + 0.3 * (n - 2), 0.75);
        after = steps.subList(2 * cold + 2, steps.size());
        assertTrue(after.stream().filter("44"::equals).count() >= after.size() - 30, "mostly all: " + steps);
    }

    @Test
    void probesThatLeaveNoneEndOnlyForADraftModelAndOnlyOnceVerified() {
        double[] ms = {0, 4, 7.28, 10.04, 12.64, 15.28};
        AdaptiveDraftLength ngram = new AdaptiveDraftLength(new Inner(), 4, 512);
        List<Integer> lengths = decode(ngram, "s", 2000, n -> ms[n], 0.75);
        assertTrue(lengths.subList(1000, 2000).stream().anyMatch(k -> k > 0), "prompt lookup keeps probing: " + lengths);
        AdaptiveDraftLength draft = new AdaptiveDraftLength(new CatchingUp(), 4, 512);
        lengths = decode(draft, "s", 2000, n -> ms[n], 0.75);
        assertTrue(lengths.subList(200, 2000).stream().allMatch(k -> k == 0), "a draft model stops: " + lengths);
    }

    @Test
    void nearlyFreeVerificationTakesEveryDraft() {
        // a bandwidth-bound decode: five tokens cost 1.2 of one
        AdaptiveDraftLength p = new AdaptiveDraftLength(new Inner(), 4, 512);
        List<Integer> lengths = decode(p, "s", 200, n -> 10 + 0.5 * (n - 1), 0.75);
        List<Integer> after = lengths.subList(2 * AdaptiveDraftLength.COLD_STEPS + 2, lengths.size());
        assertTrue(count(after, 4) >= after.size() - 12, "all drafts but the probes: " + lengths);
        assertTrue(count(after, 4) < after.size(), "the probes try shorter lengths: " + lengths);
    }

    @Test
    void choosesTheLengthWithTheMostTokensPerCost() {
        // 110M F16 here: steps of 1..5 tokens 7.7, 10.2, 12.7, 14.9, 18.2 ms; at α = 0.75 the expected tokens per cost
        // are 1.32, 1.40, 1.41, 1.29 for 1..4 drafts
        double[] ms = {0, 7.7, 10.2, 12.7, 14.9, 18.2};
        AdaptiveDraftLength p = new AdaptiveDraftLength(new Inner(), 4, 512);
        for (int n = 1; n <= 5; n++) {
            timed(p, n, (long) (ms[n] * 1e6));
        }
        assertEquals(3, p.best(0.75, 1, 1, 1, 4));
        assertEquals(4, p.best(0.99, 1, 1, 1, 4));
        assertEquals(0, p.best(0.2, 1, 1, 1, 4));
        assertEquals(2, p.best(0.75, 1, 1, 1, 2), "at most the drafts allowed");
        List<Integer> lengths = decode(p, "s", 100, n -> ms[n], 0.75);
        assertTrue(count(lengths, 2) + count(lengths, 3) >= 80, "mostly two or three drafts (their rates are close): "
                + lengths);
    }

    @Test
    void aStepSlowerThanTheMeanMovesItLittleAFasterOneMuch() {
        AdaptiveDraftLength p = new AdaptiveDraftLength(new Inner(), 4, 512);
        timed(p, 1, 400_000_000L);   // the JIT still compiling
        p.stepTimed(1, 1, 4_000_000L);
        p.stepTimed(1, 1, 4_000_000L);
        p.stepTimed(1, 1, 4_000_000L);
        assertTrue(p.cost(1, 1) < 15e6, "three warm steps bring a cold one's mean near theirs: " + p.cost(1, 1));
        double before = p.cost(1, 1);
        p.stepTimed(1, 1, 100_000_000L);   // a collection
        assertTrue(p.cost(1, 1) < before + 0.11 * 96e6 + 1, "one slow step moves the mean a tenth: " + p.cost(1, 1));
    }

    @Test
    void unmeasuredStepTimesAreInterpolatedAndBeyondTheLastGrowWithTheTokens() {
        AdaptiveDraftLength p = new AdaptiveDraftLength(new Inner(), 4, 512);
        timed(p, 1, 10_000_000L);
        timed(p, 5, 30_000_000L);
        assertEquals(15e6, p.cost(1, 2), 1);
        assertEquals(25e6, p.cost(1, 4), 1);
        assertEquals(60e6, p.cost(1, 10), 1, "beyond the largest seen: in proportion to the tokens");
    }

    @Test
    void eachSequenceHasItsOwnAcceptanceAndIsForgottenWhenReleased() {
        Inner inner = new Inner();
        AdaptiveDraftLength p = new AdaptiveDraftLength(inner, 4, 512);
        double[] ms = {0, 7.7, 10.2, 12.7, 14.9, 18.2};
        for (int n = 1; n <= 5; n++) {
            timed(p, n, (long) (ms[n] * 1e6));
        }
        List<Integer> good = decode(p, "good", 60, n -> ms[n], 1.0);
        List<Integer> poor = decode(p, "poor", 60, n -> ms[n], 0.05);
        assertTrue(count(good.subList(20, 60), 4) >= 35, "a sequence whose drafts are kept takes all: " + good);
        assertTrue(count(poor.subList(20, 60), 0) >= 35, "one whose drafts are not, none: " + poor);
        assertEquals(inner.verified, good.stream().filter(k -> k > 0).count() + poor.stream().filter(k -> k > 0).count(),
                "verifications reach the inner proposer");
        assertEquals(2, p.tracked());
        p.released("good");
        assertEquals(List.of("good"), inner.released);
        assertEquals(1, p.tracked(), "a released sequence's acceptance is forgotten");
    }
}
