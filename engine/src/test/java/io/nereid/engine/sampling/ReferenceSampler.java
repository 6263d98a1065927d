package io.nereid.engine.sampling;

import io.nereid.engine.api.SamplingParams;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The pre-chain implementation ({@code io.nereid.engine.sampling.Sampler} as it was before
 * {@link SamplingChain} replaced it), kept verbatim in test scope to prove that the chain draws
 * the same tokens and reports the same logprobs for the same seed ({@code SamplingChainEquivalenceTest}).
 * Do not fix or tidy it: its value is that it is the old code.
 *
 * <p>Its original Javadoc: turns logits into the next token for one sequence, in vLLM's order:
 * repetition / frequency / presence penalties and logit bias, then greedy argmax or temperature,
 * top-k, top-p, min-p and a draw from the sequence's own seeded RNG (same seed, same tokens). Keeps
 * the counts the penalties need. Not thread-safe: one per sequence, used by the engine thread.
 */
final class ReferenceSampler {

    private final SamplingParams p;
    private final int vocabSize;
    private final boolean[] inPrompt;     // (vocab) for the repetition penalty
    private final int[] outputCounts;     // (vocab) for frequency / presence penalties and repetition
    private final SplittableRandom random;

    /**
     * @param promptTokens the prompt, for the repetition penalty
     * @param seed         the request's seed (callers give each choice of n > 1 its own)
     */
    ReferenceSampler(SamplingParams params, int vocabSize, int[] promptTokens, long seed) {
        this.p = params;
        this.vocabSize = vocabSize;
        for (int id : params.logitBias().keySet()) {
            if (id < 0 || id >= vocabSize) {
                throw new IllegalArgumentException("logit_bias names token " + id + ", outside the vocabulary of " + vocabSize);
            }
        }
        this.inPrompt = new boolean[vocabSize];
        for (int t : promptTokens) {
            inPrompt[t] = true;
        }
        this.outputCounts = new int[vocabSize];
        this.random = new SplittableRandom(seed);
    }

    /** Chooses the next token from {@code logits} (left unchanged) and records it as output, with its logprobs. */
    public SampledToken sample(float[] logits) {
        return sample(logits, true);
    }

    /**
     * As {@link #sample(float[])}; without {@code logprobs} only the token is reported (logprob NaN,
     * rank 0, no alternatives), which spares two passes over the vocabulary per token.
     */
    public SampledToken sample(float[] logits, boolean logprobs) {
        if (logits.length != vocabSize) {
            throw new IllegalArgumentException("logits have " + logits.length + " entries for a vocabulary of " + vocabSize);
        }
        float[] raw = logprobs ? logSoftmax(logits) : null;
        float[] z = logits.clone();
        applyPenaltiesAndBias(z);
        int id = p.greedy() ? argmax(z) : draw(z);
        outputCounts[id]++;
        return logprobs ? withLogprobs(id, raw, p.topLogprobs()) : new SampledToken(id, Float.NaN, 0, new int[0], new float[0]);
    }

    /**
     * Scores a given token (a prompt token, for prompt logprobs) exactly as {@link #sample} reports a
     * chosen one: its raw log-probability and rank under {@code logits} and the {@code topK} most
     * likely alternatives. Pure.
     */
    public static SampledToken score(float[] logits, int tokenId, int topK) {
        return withLogprobs(tokenId, logSoftmax(logits), topK);
    }

    /** Records a token chosen elsewhere (e.g. accepted from a draft) so penalties see it. */
    public void recordOutput(int id) {
        outputCounts[id]++;
    }

    private void applyPenaltiesAndBias(float[] z) {
        if (p.repetitionPenalty() != 1f || p.presencePenalty() != 0f || p.frequencyPenalty() != 0f) {
            for (int i = 0; i < z.length; i++) {
                int count = outputCounts[i];
                if (p.repetitionPenalty() != 1f && (count > 0 || inPrompt[i])) {
                    z[i] = z[i] > 0 ? z[i] / p.repetitionPenalty() : z[i] * p.repetitionPenalty();
                }
                if (count > 0) {
                    z[i] -= p.frequencyPenalty() * count + p.presencePenalty();
                }
            }
        }
        for (Map.Entry<Integer, Float> e : p.logitBias().entrySet()) {
            z[e.getKey()] += e.getValue();
        }
    }

    private int draw(float[] z) {
        if ((p.topK() <= 0 || p.topK() >= z.length) && p.topP() >= 1f && p.minP() <= 0f) {
            return drawUnfiltered(z);
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
        double[] prob = new double[n];
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
        double total = 0;
        for (int r = 0; r < keep; r++) {
            total += prob[r];
        }
        double u = random.nextDouble() * total;
        for (int r = 0; r < keep; r++) {
            u -= prob[r];
            if (u < 0) {
                return index(order, z.length - 1 - r);
            }
        }
        return index(order, z.length - keep);
    }

    /**
     * The draw when no top-k / top-p / min-p cuts the distribution: the whole softmax, walked in
     * token order, so no sort (which costs O(V log V) per token on a 32K-152K vocabulary).
     */
    private int drawUnfiltered(float[] z) {
        double inv = 1.0 / p.temperature();
        double max = Double.NEGATIVE_INFINITY;
        for (float v : z) {
            max = Math.max(max, v * inv);
        }
        double[] prob = new double[z.length];
        double sum = 0;
        for (int i = 0; i < z.length; i++) {
            prob[i] = Math.exp(z[i] * inv - max);
            sum += prob[i];
        }
        double u = random.nextDouble() * sum;
        int last = 0;
        for (int i = 0; i < z.length; i++) {
            if (prob[i] > 0) {
                last = i;
                u -= prob[i];
                if (u < 0) {
                    return i;
                }
            }
        }
        return last;   // rounding left u >= 0: the last token with any probability
    }

    private static int index(long[] order, int k) {
        return (int) order[k];
    }

    /** Float bits mapped so that signed comparison of the int orders like the float. */
    private static int sortableBits(float f) {
        int bits = Float.floatToIntBits(f);
        return bits >= 0 ? bits : bits ^ 0x7fffffff;
    }

    private static int argmax(float[] z) {
        int best = 0;
        for (int i = 1; i < z.length; i++) {
            if (z[i] > z[best]) {
                best = i;
            }
        }
        return best;
    }

    static float[] logSoftmax(float[] logits) {
        float max = Float.NEGATIVE_INFINITY;
        for (float v : logits) {
            max = Math.max(max, v);
        }
        double sum = 0;
        for (float v : logits) {
            sum += Math.exp(v - max);
        }
        float logSum = (float) (max + Math.log(sum));
        float[] out = new float[logits.length];
        for (int i = 0; i < logits.length; i++) {
            out[i] = logits[i] - logSum;
        }
        return out;
    }

    private static SampledToken withLogprobs(int id, float[] raw, int topK) {
        int k = Math.min(topK, raw.length);
        int[] topIds = new int[k];
        float[] top = new float[k];
        if (k > 0) {
            // k <= 20: repeated selection is cheaper than sorting the vocabulary.
            boolean[] taken = new boolean[raw.length];
            for (int r = 0; r < k; r++) {
                int best = -1;
                for (int i = 0; i < raw.length; i++) {
                    if (!taken[i] && (best < 0 || raw[i] > raw[best])) {
                        best = i;
                    }
                }
                taken[best] = true;
                topIds[r] = best;
                top[r] = raw[best];
            }
        }
        int rank = 1;
        for (float v : raw) {
            if (v > raw[id]) {
                rank++;
            }
        }
        return new SampledToken(id, raw[id], rank, topIds, top);
    }
}
