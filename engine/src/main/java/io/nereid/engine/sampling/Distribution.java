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
 * argmax (ties to the lowest id) with probability 1. The weights are {@link Exp}'s (the same bits on the
 * Vector API's lanes, in scalar code and on a CUDA device), and no cut sorts the vocabulary ({@link #topKeys},
 * {@link #ranked}; {@link #sorted} is the definition they keep to, bit for bit). Immutable and pure; engine
 * thread.
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
     * softmax, from a top-k of at most {@link TokenChoice#MAX_TOP_K} or from the whole vocabulary, cut by top-p
     * and min-p, with the number {@code uniform} gives (asked only then); null for a top-k above
     * {@link TokenChoice#MAX_TOP_K} (short of the vocabulary).
     */
    TokenChoice draw(int vocabSize, DoubleSupplier uniform) {
        if (unfiltered(vocabSize)) {
            return TokenChoice.draw(p.temperature(), uniform.getAsDouble());
        }
        boolean topK = p.topK() > 0 && p.topK() < vocabSize;
        if (topK && p.topK() > TokenChoice.MAX_TOP_K) {
            return null;
        }
        return TokenChoice.draw(p.temperature(), uniform.getAsDouble(), topK ? p.topK() : 0, p.topP(), p.minP());
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
        if (p.topK() > 0 && p.topK() < z.length) {
            return cut(z, topKeys(z, p.topK()));
        }
        Probabilities cut = ranked(z);
        return cut != null ? cut : sorted(z);
    }

    /**
     * The cut distribution by sorting the whole vocabulary: the definition, which {@link #of} computes
     * without that sort ({@link #topKeys} for a top-k, else {@link #ranked}).
     */
    Probabilities sorted(float[] z) {
        long[] order = new long[z.length];
        for (int i = 0; i < z.length; i++) {
            order[i] = key(z[i], i);
        }
        Arrays.sort(order);
        return cut(z, order);
    }

    /**
     * The cut over a ranking: {@code order} (ascending {@link #key}s) ends with the first ranks of {@code z}, at
     * least the top k when a top-k is set, else every token. The candidates ranked by logit (float bits, then
     * the higher id first), weights {@code exp(z * inv - max)} ({@code inv = 1f / T}, the product in float,
     * {@code max} the first's), the top k of them (when a top-k is set; their sum in rank order) or every
     * weight (summed in id order); top-p's running share of that sum, then min-p against the first weight.
     */
    private Probabilities cut(float[] z, long[] order) {
        float inv = 1f / p.temperature();
        int n = z.length;
        if (p.topK() > 0 && p.topK() < n) {
            n = p.topK();
        }
        double[] prob = new double[n];   // (n) by rank, most likely first
        double max = z[rank(order, 0)] * inv;
        for (int r = 0; r < n; r++) {
            prob[r] = Exp.exp(z[rank(order, r)] * inv - max);
        }
        // a top-k's weights summed in rank order; every weight summed in id order, as ranked() sums them
        double sum = n == z.length ? sum(weights(z, inv, max)) : sum(prob);
        int nucleus = p.topP() < 1f ? nucleus(prob, n, sum, p.topP()) : 0;
        int keep = nucleus > 0 ? nucleus : n;
        if (p.minP() > 0f) {
            double threshold = p.minP() * prob[0];
            int r = 1;
            while (r < keep && prob[r] >= threshold) {
                r++;
            }
            keep = r;
        }
        return candidates(order, prob, keep);
    }

    /**
     * Top-p's cut: how many of the first {@code n} ranks (weights {@code prob}) it takes for their running share
     * of {@code sum} to reach {@code topP}; 0 when they do not.
     */
    private static int nucleus(double[] prob, int n, double sum, float topP) {
        double cumulative = 0;
        for (int r = 0; r < n; r++) {
            cumulative += prob[r] / sum;
            if (cumulative >= topP) {
                return r + 1;
            }
        }
        return 0;
    }

    /** The first {@code keep} ranks of {@code order} with their weights {@code prob} (by rank). */
    private static Probabilities candidates(long[] order, double[] prob, int keep) {
        int[] ids = new int[keep];
        double total = 0;
        for (int r = 0; r < keep; r++) {
            ids[r] = rank(order, r);
            total += prob[r];
        }
        return new Probabilities(ids, Arrays.copyOf(prob, keep), total);
    }

    /**
     * The keys of the top {@code k} (1 to vocab - 1) of {@code z}, ascending, in one pass: tokens at or above
     * the k-th key seen so far gather in a buffer of 4k; a full buffer is sorted down to its top k, whose
     * last sets the bar. On a row in no particular order few tokens pass the bar once it is set, so this
     * costs a pass and a few small sorts instead of a sort of the vocabulary (a row ascending in id order
     * brings every token in: as costly as that sort, never wrong).
     */
    static long[] topKeys(float[] z, int k) {
        long[] buffer = new long[Math.max(4 * k, 64)];
        int size = 0;
        int bar = Integer.MIN_VALUE;   // the sortable bits the k-th key had at the last trim
        for (int i = 0; i < z.length; i++) {
            int raw = Float.floatToIntBits(z[i]);
            int bits = raw ^ ((raw >> 31) & 0x7fffffff);   // sortableBits, written out (see gather)
            if (bits >= bar) {   // equal bits pass: a later id ranks above an equal logit's earlier one
                buffer[size++] = ((long) bits << 32) | (i & 0xffffffffL);
                if (size == buffer.length) {
                    Arrays.sort(buffer, 0, size);
                    System.arraycopy(buffer, size - k, buffer, 0, k);
                    size = k;
                    bar = (int) (buffer[0] >> 32);
                }
            }
        }
        Arrays.sort(buffer, 0, size);
        return Arrays.copyOfRange(buffer, size - k, size);
    }

    /** Buckets per nat of {@code (top - z) / T} in {@link #ranked}, and how many: 32 nats, then one for the rest. */
    private static final int BUCKETS_PER_NAT = 8;
    private static final int BUCKETS = 32 * BUCKETS_PER_NAT;

    /**
     * Top-p and / or min-p without a top-k, from the first ranks only: the same result as {@link #sorted}, bit
     * for bit, or null where that cannot be had this way (a NaN or an infinite {@code z / T} at the top;
     * ranks not enough to settle the cut: then {@link #sorted} answers).
     *
     * <p>One pass finds the largest logit; a second puts each token in a bucket by how far below it lies
     * ({@code (top - z) / T}, in float, 1/8 nat wide; ranks never cross buckets), counting each bucket and,
     * for top-p, summing the weights in id order as {@link #cut} does. The first buckets that surely hold the
     * cut (for top-p, a share 1e-7 beyond {@code topP}; for min-p, up to the first bucket past which every
     * weight lies below {@code minP}) are gathered and sorted alone, and the cuts run over them as over the
     * whole ranking, which they begin. Costs two passes (plus one exp per token for top-p) and a sort of the
     * few gathered, instead of a sort of the vocabulary.
     */
    Probabilities ranked(float[] z) {
        float inv = 1f / p.temperature();
        float top = top(z);
        double max = top * inv;
        float scale = inv * BUCKETS_PER_NAT;    // a token's bucket: (top - z) * scale, which never decreases down the ranks
        if (top != top || Double.isInfinite(max) || Float.isInfinite(scale)) {
            return null;   // a NaN ranks by its bits (above +infinity); a temperature below 1e-37: sorted() orders them
        }
        int vocab = z.length;
        boolean topP = p.topP() < 1f;
        int[] count = new int[BUCKETS + 1];
        double[] mass = topP ? new double[BUCKETS + 1] : null;
        double sum = topP ? weighBuckets(z, top, scale, weights(z, inv, max), count, mass) : 0;
        if (!topP) {
            countBuckets(z, top, scale, count);
        }
        // the first buckets that hold the cut: a prefix of the ranking
        // how far a bucket's edge may lie from its weights' nats: the two float products z * inv (half an ulp each,
        // of up to |max| + 33) and the bucket's own float arithmetic
        double slack = 1e-5 + 2.5e-7 * (Math.abs(max) + 33);
        int last = BUCKETS;
        boolean belowMinP = false;   // no token past the gathered ones reaches min-p's threshold
        int gathered = 0;
        double share = 0;
        for (int b = 0; b <= BUCKETS; b++) {
            gathered += count[b];
            if (topP) {
                share += mass[b];
            }
            // every weight past bucket b lies below exp(-(b + 1) / 8): below min-p's threshold (minP x 1)?
            belowMinP = p.minP() > 0f && b < BUCKETS && Math.exp(-(b + 1.0) / BUCKETS_PER_NAT + slack) < p.minP();
            if ((topP && share >= (p.topP() + 1e-7) * sum) || belowMinP) {
                last = b;
                break;
            }
        }
        if (gathered == 0) {
            return null;
        }
        long[] order = gather(z, top, scale, last, gathered);
        Arrays.sort(order);
        int n = gathered;
        double[] prob = new double[n];   // (n) by rank
        for (int r = 0; r < n; r++) {
            prob[r] = Exp.exp(z[rank(order, r)] * inv - max);
        }
        int nucleus = topP ? nucleus(prob, n, sum, p.topP()) : 0;
        int keep = nucleus > 0 ? nucleus : vocab;   // as cut(): every rank unless a cut says otherwise
        if (p.minP() > 0f) {
            double threshold = p.minP() * prob[0];
            int bound = Math.min(keep, n);
            int r = 1;
            while (r < bound && prob[r] >= threshold) {
                r++;
            }
            if (r == bound && bound < keep && !belowMinP) {
                return null;   // min-p's cut lies past the gathered ranks
            }
            keep = r;
        }
        if (keep > n) {
            return null;   // top-p's cut lies past the gathered ranks (rounding at the margin)
        }
        return candidates(order, prob, keep);
    }

    /** The largest of {@code z}; NaN when it holds one. */
    static float top(float[] z) {
        float top = Float.NEGATIVE_INFINITY;
        boolean nan = false;
        for (float v : z) {
            top = v > top ? v : top;
            nan |= v != v;
        }
        return nan ? Float.NaN : top;
    }

    /** Counts the tokens of each bucket. */
    private static void countBuckets(float[] z, float top, float scale, int[] count) {
        for (float v : z) {
            count[bucket((top - v) * scale)]++;
        }
    }

    /** Counts the tokens of each bucket and sums their weights {@code e}, per bucket and in all (in id order). */
    private static double weighBuckets(float[] z, float top, float scale, double[] e, int[] count, double[] mass) {
        double sum = 0;
        for (int i = 0; i < z.length; i++) {
            int b = bucket((top - z[i]) * scale);
            count[b]++;
            mass[b] += e[i];
            sum += e[i];
        }
        return sum;
    }

    /** Every token's weight {@code exp(z * inv - max)} (the product in float), in id order. */
    private static double[] weights(float[] z, float inv, double max) {
        double[] e = new double[z.length];
        Exp.ofFloatProducts(z, inv, max, e);
        return e;
    }

    /** The sum of {@code e} in index order. */
    private static double sum(double[] e) {
        double sum = 0;
        for (double v : e) {
            sum += v;
        }
        return sum;
    }

    /** The keys of the {@code gathered} tokens in buckets 0 to {@code last}, in id order. */
    private static long[] gather(float[] z, float top, float scale, int last, int gathered) {
        long[] order = new long[gathered];
        float edge = last + 1;   // bucket(x) <= last exactly when x < last + 1
        for (int i = 0, j = 0; i < z.length && j < gathered; i++) {
            float v = z[i];
            if (last == BUCKETS || (top - v) * scale < edge) {
                int bits = Float.floatToIntBits(v);   // key(v, i), written out: C2 left the call in this loop 7x slower
                order[j++] = ((long) (bits ^ ((bits >> 31) & 0x7fffffff)) << 32) | (i & 0xffffffffL);
            }
        }
        return order;
    }

    /** The bucket of {@code x = (top - z) * scale} (>= 0, or +infinity): 1/8 nat of {@code z / T} each, then the rest. */
    private static int bucket(float x) {
        return x < BUCKETS ? (int) x : BUCKETS;
    }

    /**
     * No top-k / top-p / min-p cut: the whole softmax in token order, so no sort (which costs
     * O(V log V) per token on a 32K-152K vocabulary). Tokens of weight 0 are no candidates; when no
     * token has a positive weight (every logit -infinity) all the probability falls on token 0.
     */
    private Probabilities unfiltered(float[] z) {
        double inv = 1.0 / p.temperature();
        double max = top(z) * inv;   // the largest v * inv (the product never decreases with v), NaN if any is
        double[] prob = new double[z.length];   // (vocab)
        Exp.ofDoubleProducts(z, inv, max, prob);
        double sum = 0;
        int positive = 0;
        for (double w : prob) {
            sum += w;
            positive += w > 0 ? 1 : 0;
        }
        if (positive == 0) {
            return Probabilities.certain(0);
        }
        if (positive == z.length) {
            return Probabilities.everyId(prob, sum);
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

    /** The id at rank {@code r} (0: the most likely) of ascending keys. */
    private static int rank(long[] order, int r) {
        return (int) order[order.length - 1 - r];
    }

    /** Token {@code id}'s place in the ranking: its logit's sortable bits, then its id (the higher id above). */
    private static long key(float logit, int id) {
        return ((long) sortableBits(logit) << 32) | (id & 0xffffffffL);
    }

    /** Float bits mapped so that signed comparison of the int orders like the float. */
    private static int sortableBits(float f) {
        int bits = Float.floatToIntBits(f);
        return bits ^ ((bits >> 31) & 0x7fffffff);   // negative: the magnitude's bits flipped (no branch to mispredict)
    }

    /** The index of the largest of {@code z}, the lowest among equals (greedy decoding's choice). */
    public static int argmax(float[] z) {
        return TokenChoice.argmaxOf(z);   // one definition, the one a backend that chooses on a device meets
    }
}
