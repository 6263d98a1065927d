package io.nereid.engine.backend;

/**
 * How a backend may choose a slice's next tokens itself, where its logits are, and return only their ids
 * ({@link StepOutput#chosen()}) instead of the logit rows: what the engine's sampling chain would do with
 * the rows when it needs nothing else of them (no prompt scoring; no penalty, bias, constraint or min_tokens
 * at work; no top-k above {@link #MAX_TOP_K}; the chosen tokens' logprobs may be asked for beside them). A
 * device backend spares copying a vocabulary of floats per row to the host and the host's pass over them; returning the rows is always allowed (a backend may decline a
 * draw it cannot settle cheaply, such as a top-p whose nucleus is thousands of tokens), and the engine then
 * chooses the same way on the host.
 *
 * <p>The sampling chain on the host is the definition ({@code Distribution.choose} computes it for one row,
 * the reference a device's kernels are tested against). Its {@code exp} is the engine's own
 * ({@code io.nereid.engine.sampling.Exp}: correctly rounded operations only, 0 below -708), which a device can
 * compute to the same bits; a device sums the weights in its own order, so a draw may come out otherwise when
 * the number lies within double rounding (about 1e-16 of the total) of the edge between two tokens, and a
 * top-p cut when a running share lies that close to top-p; the argmax is exact.
 *
 * <ul>
 *   <li>{@link #ARGMAX} (temperature 0), for every logit row of the slice: the id a scan from id 0 keeps
 *       when it moves on only to a strictly greater logit (the lowest id among equals; NaN is never
 *       greater, so a row whose id 0 is NaN gives 0).
 *   <li>a draw (temperature &gt; 0) from the whole softmax, for a slice of one logit row: weights
 *       {@code exp(z / temperature - m)} ({@code m} the row's largest {@code z / temperature}, in double);
 *       the token where {@code uniform x} (the weights' sum) falls when the weights are walked in id order,
 *       each subtracted in turn until the rest is negative; past the end, the last id of positive weight;
 *       no positive weight, id 0.
 *   <li>a draw from the top {@code topK} (1 to {@link #MAX_TOP_K}), or from the whole vocabulary ({@code topK}
 *       0 with a top-p below 1 or a min-p above 0), cut by top-p and min-p, as the engine's
 *       {@code Distribution} cuts: the candidates ranked by logit (equal logits: the higher id first),
 *       {@code inv = 1f / temperature} in float, weights {@code exp(z * inv - z0 * inv)} (the products in
 *       float), summed over the top k in rank order, or without a top-k over the whole vocabulary (the host
 *       sums in id order); top-p keeps the shortest prefix whose running share of that sum reaches
 *       {@code topP}, min-p then stops at the first weight below {@code minP} x the first; the token where
 *       {@code uniform x} (the kept weights' sum) falls walking the kept ones in rank order, else the last
 *       kept.
 * </ul>
 * The engine draws {@code uniform} from the sequence's seeded generator, so the draw is reproducible.
 *
 * <p>With {@code topLogprobs} 0 to {@link #MAX_TOP_LOGPROBS} the backend also reports each chosen token's raw
 * log-probability ({@link ChosenLogprobs}, {@link StepOutput#logprobs()}), as the engine's
 * {@code RawLogprobs.score} defines it: the log-softmax of the row in float ({@code z - (float) (max + log(sum))},
 * the sum of {@code Exp.exp(z - max)} in double), the token's rank (1 + the entries above it) and the
 * {@code topLogprobs} most likely entries (at most the vocabulary), largest first, equal ones in id order. A
 * device sums in its own order and its {@code log} may differ from {@code Math.log} in the last bit, so the
 * float {@code max + log(sum)} may, rarely, be one ulp off the host's. A backend that cannot (a row with a
 * NaN) returns the row instead.
 *
 * @param temperature 0 for the argmax, else the draw's temperature
 * @param uniform     the draw's number in [0, 1); 0 for the argmax
 * @param topK        0 for the whole vocabulary, else the candidates kept (at most {@link #MAX_TOP_K})
 * @param topP        the nucleus within the top k or the vocabulary (1: none)
 * @param minP        the share of the first candidate's weight a candidate needs (0: none)
 * @param topLogprobs -1 for no logprobs, else the alternatives to report with each token's logprob
 */
public record TokenChoice(float temperature, double uniform, int topK, float topP, float minP, int topLogprobs) {

    /** Most candidates a top-k draw may keep. */
    public static final int MAX_TOP_K = 1024;

    /** Most alternatives a choice reports with its logprob (the API's top_logprobs limit). */
    public static final int MAX_TOP_LOGPROBS = 20;

    /** Each row's argmax. */
    public static final TokenChoice ARGMAX = new TokenChoice(0f, 0, 0, 1f, 0f, -1);

    public TokenChoice {
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature " + temperature);
        }
        if (!(uniform >= 0 && uniform < 1) || (temperature == 0 && uniform != 0)) {
            throw new IllegalArgumentException("uniform " + uniform + " at temperature " + temperature);
        }
        if (topK < 0 || topK > MAX_TOP_K || !(topP > 0 && topP <= 1) || !(minP >= 0 && minP <= 1)
                || (temperature == 0 && (topK != 0 || topP < 1 || minP > 0))) {
            throw new IllegalArgumentException("top-k " + topK + ", top-p " + topP + ", min-p " + minP + " at temperature "
                    + temperature + ": a draw takes a top-k of 0 to " + MAX_TOP_K + ", top-p in (0, 1], min-p in [0, 1];"
                    + " the argmax none of them");
        }
        if (topLogprobs < -1 || topLogprobs > MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs " + topLogprobs + ": -1 (none) to " + MAX_TOP_LOGPROBS);
        }
    }

    /** This choice, each token reported with its logprob and {@code top} alternatives (0 to 20). */
    public TokenChoice withLogprobs(int top) {
        return new TokenChoice(temperature, uniform, topK, topP, minP, top);
    }

    /** Whether the tokens come with their logprobs ({@link StepOutput#logprobs()}). */
    public boolean logprobs() {
        return topLogprobs >= 0;
    }

    /** A draw from the whole softmax at {@code temperature} (&gt; 0) with {@code uniform} in [0, 1). */
    public static TokenChoice draw(float temperature, double uniform) {
        return draw(temperature, uniform, 0, 1f, 0f);
    }

    /** A draw from the top {@code topK} (0: the whole vocabulary), then top-p and min-p among them. */
    public static TokenChoice draw(float temperature, double uniform, int topK, float topP, float minP) {
        if (!(temperature > 0)) {
            throw new IllegalArgumentException("a draw needs a positive temperature, got " + temperature);
        }
        return new TokenChoice(temperature, uniform, topK, topP, minP, -1);
    }

    public boolean argmax() {
        return temperature == 0;
    }

    /**
     * The argmax of {@code row} as defined above: the scan the engine's greedy choice and the backends'
     * share.
     */
    public static int argmaxOf(float[] row) {
        int best = 0;
        for (int i = 1; i < row.length; i++) {
            if (row[i] > row[best]) {
                best = i;
            }
        }
        return best;
    }

    @Override
    public String toString() {
        String lp = logprobs() ? " with logprobs (" + topLogprobs + " alternatives)" : "";
        return (argmax() ? "argmax" : "draw(T " + temperature + ", u " + uniform
                + (topK > 0 || topP < 1 || minP > 0 ? ", top-k " + topK + ", top-p " + topP + ", min-p " + minP : "") + ")")
                + lp;
    }
}
