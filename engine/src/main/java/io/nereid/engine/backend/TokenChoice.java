package io.nereid.engine.backend;

/**
 * How a backend may choose a slice's next tokens itself, where its logits are, and return only their ids
 * ({@link StepOutput#chosen()}) instead of the logit rows: what the engine's sampling chain would do with
 * the rows when it needs nothing else of them (no logprobs, no penalty, bias, constraint or min_tokens at
 * work, no top-k / top-p / min-p cut). A device backend spares copying a vocabulary of floats per row to
 * the host and the host's pass over them; returning the rows is always allowed, and the engine then
 * chooses the same way on the host.
 *
 * <p>{@link #choose} is the definition, on the host. A device computes it in its own order and with its own
 * {@code exp}, so a draw may come out otherwise when the number lies within double rounding (about 1e-16
 * of the total) of the edge between two tokens; the argmax is exact.
 *
 * <ul>
 *   <li>{@link #ARGMAX} (temperature 0), for every logit row of the slice: the id a scan from id 0 keeps
 *       when it moves on only to a strictly greater logit (the lowest id among equals; NaN is never
 *       greater, so a row whose id 0 is NaN gives 0).
 *   <li>a draw (temperature &gt; 0), for a slice of one logit row: weights {@code exp(z / temperature - m)}
 *       ({@code m} the row's largest {@code z / temperature}, in double); the token where
 *       {@code uniform x} (the weights' sum) falls when the weights are walked in id order, each
 *       subtracted in turn until the rest is negative; past the end, the last id of positive weight; no
 *       positive weight, id 0. The engine draws {@code uniform} from the sequence's seeded generator, so
 *       the draw is reproducible.
 * </ul>
 *
 * @param temperature 0 for the argmax, else the draw's temperature
 * @param uniform     the draw's number in [0, 1); 0 for the argmax
 */
public record TokenChoice(float temperature, double uniform) {

    /** Each row's argmax. */
    public static final TokenChoice ARGMAX = new TokenChoice(0f, 0);

    public TokenChoice {
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature " + temperature);
        }
        if (!(uniform >= 0 && uniform < 1) || (temperature == 0 && uniform != 0)) {
            throw new IllegalArgumentException("uniform " + uniform + " at temperature " + temperature);
        }
    }

    /** A draw at {@code temperature} (&gt; 0) with {@code uniform} in [0, 1). */
    public static TokenChoice draw(float temperature, double uniform) {
        if (!(temperature > 0)) {
            throw new IllegalArgumentException("a draw needs a positive temperature, got " + temperature);
        }
        return new TokenChoice(temperature, uniform);
    }

    public boolean argmax() {
        return temperature == 0;
    }

    /**
     * The choice made on the host, exactly as defined above: what a backend computes that has the row on
     * the host anyway, and the reference a device backend's kernels are tested against.
     */
    public int choose(float[] row) {
        if (argmax()) {
            int best = 0;
            for (int i = 1; i < row.length; i++) {
                if (row[i] > row[best]) {
                    best = i;
                }
            }
            return best;
        }
        double inv = 1.0 / temperature;
        double max = Double.NEGATIVE_INFINITY;
        for (float v : row) {
            max = Math.max(max, v * inv);
        }
        double total = 0;
        for (float v : row) {
            total += Math.exp(v * inv - max);
        }
        double rest = uniform * total;
        int last = -1;
        for (int i = 0; i < row.length; i++) {
            double w = Math.exp(row[i] * inv - max);
            if (w > 0) {
                last = i;
                rest -= w;
                if (rest < 0) {
                    return i;
                }
            }
        }
        return Math.max(last, 0);
    }

    @Override
    public String toString() {
        return argmax() ? "argmax" : "draw(T " + temperature + ", u " + uniform + ")";
    }
}
