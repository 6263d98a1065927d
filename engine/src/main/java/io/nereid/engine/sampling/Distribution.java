package io.nereid.engine.sampling;

import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.TokenChoice;
import java.util.Arrays;
import java.util.Map;
import java.util.function.DoubleSupplier;

/**
 * Turns processed logits into the {@link Probabilities} a token is selected from, per the
 * request's temperature, top-k, top-p and min-p (vLLM's order: temperature, then top-k, then top-p
 * over the top-k renormalised, then min-p against the most likely). Temperature 0 is greedy: the
 * argmax (ties to the lowest id) with probability 1. Immutable and pure; engine thread.
 */
public final class Distribution {

    private final SamplingParams p;

    public Distribution(SamplingParams params) {
        this.p = params;
    }

    /** Whether no top-k, top-p or min-p cut applies over a vocabulary of {@code vocabSize}: the whole softmax. */
    public boolean unfiltered(int vocabSize) {
        return (p.topK() <= 0 || p.topK() >= vocabSize) && p.topP() >= 1f && p.minP() <= 0f;
    }

    /**
     * How a backend may draw from this distribution where the logits are ({@link TokenChoice}): from the whole
     * softmax, or from a top-k of at most {@link TokenChoice#MAX_TOP_K} with its top-p and min-p, with the
     * number {@code uniform} gives (asked only then); null when neither (top-p or min-p without such a top-k).
     */
    TokenChoice draw(int vocabSize, DoubleSupplier uniform) {
        if (unfiltered(vocabSize)) {
            return TokenChoice.draw(p.temperature(), uniform.getAsDouble());
        }
        if (p.topK() > 0 && p.topK() <= TokenChoice.MAX_TOP_K && p.topK() < vocabSize) {
            return TokenChoice.draw(p.temperature(), uniform.getAsDouble(), p.topK(), p.topP(), p.minP());
        }
        return null;
    }

    /**
     * The token a sampling chain with no logits processor at work picks from {@code row} (raw logits) as
     * {@code choice} says: what a backend that chooses on a device must match.
     */
    public static int choose(TokenChoice choice, float[] row) {
        if (choice.argmax()) {
            return argmax(row);
        }
        SamplingParams params = new SamplingParams(choice.temperature(), choice.topK() == 0 ? -1 : choice.topK(),
                choice.topP(), choice.minP(), 1f, 0f, 0f, Map.of(), null, 0);
        return TokenSelector.Draw.select(new Distribution(params).of(row), choice.uniform());
    }

    /** The distribution of {@code z} (vocab), processed logits, which are left unchanged. */
    public Probabilities of(float[] z) {
        if (p.greedy()) {
            return Probabilities.certain(argmax(z));
        }
        if (unfiltered(z.length)) {
            return unfiltered(z);
        }
        float inv = 1f / p.temperature();
        // Candidates sorted by logit, highest first: the key orders by float bits then index.
        long[] order = new long[z.length];
        for (int i = 0; i < z.length; i++) {
            order[i] = ((long) sortableBits(z[i]) << 32) | (i & 0xffffffffL);
        }
        Arrays.sort(order);
        int n = z.length;
        if (p.topK() > 0 && p.topK() < n) {
            n = p.topK();
        }
        double[] prob = new double[n];   // (n) by rank, most likely first
        double max = z[index(order, z.length - 1)] * inv;
        double sum = 0;
        for (int r = 0; r < n; r++) {
            double e = Math.exp(z[index(order, z.length - 1 - r)] * inv - max);
            prob[r] = e;
            sum += e;
        }
        int keep = n;
        if (p.topP() < 1f) {
            double cumulative = 0;
            for (int r = 0; r < n; r++) {
                cumulative += prob[r] / sum;
                if (cumulative >= p.topP()) {
                    keep = r + 1;
                    break;
                }
            }
        }
        if (p.minP() > 0f) {
            double threshold = p.minP() * prob[0];
            int r = 1;
            while (r < keep && prob[r] >= threshold) {
                r++;
            }
            keep = r;
        }
        int[] ids = new int[keep];
        double total = 0;
        for (int r = 0; r < keep; r++) {
            ids[r] = index(order, z.length - 1 - r);
            total += prob[r];
        }
        return new Probabilities(ids, Arrays.copyOf(prob, keep), total);
    }

    /**
     * No top-k / top-p / min-p cut: the whole softmax in token order, so no sort (which costs
     * O(V log V) per token on a 32K-152K vocabulary). Tokens of weight 0 are no candidates; when no
     * token has a positive weight (every logit -infinity) all the probability falls on token 0.
     */
    private Probabilities unfiltered(float[] z) {
        double inv = 1.0 / p.temperature();
        double max = Double.NEGATIVE_INFINITY;
        for (float v : z) {
            max = Math.max(max, v * inv);
        }
        double[] prob = new double[z.length];   // (vocab)
        double sum = 0;
        int positive = 0;
        for (int i = 0; i < z.length; i++) {
            prob[i] = Math.exp(z[i] * inv - max);
            sum += prob[i];
            if (prob[i] > 0) {
                positive++;
            }
        }
        if (positive == 0) {
            return Probabilities.certain(0);
        }
        int[] ids = new int[positive];
        double[] weights = new double[positive];
        for (int i = 0, k = 0; i < z.length; i++) {
            if (prob[i] > 0) {
                ids[k] = i;
                weights[k++] = prob[i];
            }
        }
        return new Probabilities(ids, weights, sum);
    }

    private static int index(long[] order, int k) {
        return (int) order[k];
    }

    /** Float bits mapped so that signed comparison of the int orders like the float. */
    private static int sortableBits(float f) {
        int bits = Float.floatToIntBits(f);
        return bits >= 0 ? bits : bits ^ 0x7fffffff;
    }

    /** The index of the largest of {@code z}, the lowest among equals (greedy decoding's choice). */
    public static int argmax(float[] z) {
        return TokenChoice.argmaxOf(z);   // one definition, the one a backend that chooses on a device meets
    }
}
