package io.nereid.engine.core;

import java.util.Arrays;

/**
 * Prompt-lookup drafts (vLLM's {@code "method": "ngram"}): the longest n-gram, {@code n} from
 * {@code maxN} down to {@code minN}, that ends the sequence and also occurs earlier in it (prompt
 * and output alike); the tokens that followed its earliest occurrence are the drafts, up to
 * {@code k}: vLLM's choice ({@code _find_longest_matched_ngram_and_propose_tokens} keeps "the
 * earliest position"), which in a run of repeats leaves the most tokens to propose (the most
 * recent occurrence of {@code A A} inside {@code A A A A} is followed by one token only). No
 * model: the cost is a scan of the sequence, {@code O(length × maxN)} token comparisons at worst,
 * usually far fewer (a candidate is dropped at its first mismatch).
 *
 * <p>Immutable and stateless; the engine thread calls it.
 */
public final class NgramProposer implements DraftProposer {

    private final int k;
    private final int minN;
    private final int maxN;
    private final int disableAbove;

    /**
     * @param k            most drafts per step ({@code num_speculative_tokens})
     * @param minN         shortest n-gram to match ({@code prompt_lookup_min})
     * @param maxN         longest ({@code prompt_lookup_max})
     * @param disableAbove no drafts while more sequences than this run ({@code disable_by_batch_size});
     *                     {@link Integer#MAX_VALUE} for always
     * @throws IllegalArgumentException unless {@code 1 <= k}, {@code 1 <= minN <= maxN} and {@code disableAbove >= 1}
     */
    public NgramProposer(int k, int minN, int maxN, int disableAbove) {
        if (k < 1 || minN < 1 || maxN < minN || disableAbove < 1) {
            throw new IllegalArgumentException("n-gram drafts need 1 <= k, 1 <= min <= max and a batch limit >= 1, got k "
                    + k + ", min " + minN + ", max " + maxN + ", limit " + disableAbove);
        }
        this.k = k;
        this.minN = minN;
        this.maxN = maxN;
        this.disableAbove = disableAbove;
    }

    @Override
    public int[] propose(Object sequence, int[] tokens, int length, int max) {
        int want = Math.min(k, max);
        for (int n = Math.min(maxN, length - 1); n >= minN && want > 0; n--) {
            int suffix = length - n;
            // the earliest start; any start before the suffix has a token after the match
            for (int i = 0; i < suffix; i++) {
                if (matches(tokens, i, suffix, n)) {
                    int from = i + n;
                    return Arrays.copyOfRange(tokens, from, Math.min(from + want, length));
                }
            }
        }
        return new int[0];
    }

    private static boolean matches(int[] tokens, int at, int suffix, int n) {
        for (int j = n - 1; j >= 0; j--) {   // last token first: it is the most selective
            if (tokens[at + j] != tokens[suffix + j]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean enabledAt(int running) {
        return running <= disableAbove;
    }

    @Override
    public String toString() {
        return "ngram(k=" + k + ", n=" + minN + ".." + maxN + (disableAbove == Integer.MAX_VALUE ? "" : ", batch <= " + disableAbove) + ")";
    }
}
