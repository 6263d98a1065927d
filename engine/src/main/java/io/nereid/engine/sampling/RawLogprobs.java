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
        if (k > 0 && !topInOnePass(raw, topIds, top)) {
            bySelection(raw, topIds, top);
        }
        int rank = 1;
        float own = raw[id];
        for (float v : raw) {
            rank += v > own ? 1 : 0;
        }
        return new SampledToken(id, own, rank, topIds, top);
    }

    /**
     * The {@code ids.length} most likely tokens of {@code raw}, largest first, equal values in id order (what
     * {@link #bySelection} picks), in one pass: a token enters the list only above its last value. False, and
     * nothing meant, when {@code raw} holds a NaN (selection has its own rule for those).
     */
    static boolean topInOnePass(float[] raw, int[] ids, float[] values) {
        int k = ids.length;
        int size = 0;
        float bar = Float.NEGATIVE_INFINITY;   // the k-th value once the list is full
        for (int i = 0; i < raw.length; i++) {
            float v = raw[i];
            if (v != v) {
                return false;
            }
            if (size == k && !(v > bar)) {
                continue;
            }
            int at = size == k ? k - 1 : size++;   // the last slot, free or given up
            while (at > 0 && values[at - 1] < v) {   // after every value not below v: equal ones keep their order
                values[at] = values[at - 1];
                ids[at] = ids[at - 1];
                at--;
            }
            values[at] = v;
            ids[at] = i;
            bar = values[k - 1];
        }
        return true;
    }

    /** The most likely tokens by repeated selection: each pass takes the largest not yet taken, the lowest id among equals. */
    static void bySelection(float[] raw, int[] ids, float[] values) {
        boolean[] taken = new boolean[raw.length];
        for (int r = 0; r < ids.length; r++) {
            int best = -1;
            for (int i = 0; i < raw.length; i++) {
                if (!taken[i] && (best < 0 || raw[i] > raw[best])) {
                    best = i;
                }
            }
            taken[best] = true;
            ids[r] = best;
            values[r] = raw[best];
        }
    }

    /**
     * {@code log softmax(logits)} (vocab), in float as the logits: {@code logit - (float) (max + log(sum))}, the
     * sum in double in id order of {@link Exp#exp}{@code (logit - max)} (the difference in float).
     */
    static float[] logSoftmax(float[] logits) {
        float max = Distribution.top(logits);
        double[] e = new double[logits.length];
        Exp.ofDifferences(logits, max, e);
        double sum = 0;
        for (double w : e) {
            sum += w;
        }
        float logSum = (float) (max + Math.log(sum));
        float[] out = new float[logits.length];
        for (int i = 0; i < logits.length; i++) {
            out[i] = logits[i] - logSum;
        }
        return out;
    }
}
