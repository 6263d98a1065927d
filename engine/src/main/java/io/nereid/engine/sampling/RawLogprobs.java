package io.nereid.engine.sampling;

/**
 * Log-probabilities under the model's raw distribution (log-softmax of the logits before any
 * processor, temperature or cut — vLLM's default {@code raw_logprobs}): what a sampled token and
 * a scored prompt token report. Pure functions; any thread.
 */
public final class RawLogprobs {

    private RawLogprobs() {
    }

    /**
     * Scores {@code tokenId} under {@code logits} (vocab, left unchanged): its raw log-probability,
     * its rank and the {@code topK} most likely alternatives, exactly as a sampled token is reported.
     * Used for prompt logprobs.
     */
    public static SampledToken score(float[] logits, int tokenId, int topK) {
        return report(logSoftmax(logits), tokenId, topK);
    }

    /** As {@link #score(float[], int, int)} on log-probabilities already computed ({@code raw}, vocab). */
    static SampledToken report(float[] raw, int id, int topK) {
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

    /** {@code log softmax(logits)} (vocab), in float as the logits, summed in double. */
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
}
