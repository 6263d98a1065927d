package io.nereid.engine.sampling;

/**
 * The processed distribution of one position: the candidate tokens (every token that can be
 * chosen; any other has probability 0), in the order a draw walks them, with unnormalised weights
 * and the total a draw scales by. {@link #probability(int)} answers the normalised p(id) for any
 * token, which is what speculative decoding's rejection sampling needs (min(1, p(x) / q(x)) for a
 * draft x, then the residual max(0, p - q)): {@link TokenSelector#verify}.
 *
 * <p>Shapes: {@code ids} and {@code weights} are (candidates). Order: for a temperature draw without
 * a top-k / top-p / min-p cut, vocabulary order with zero weights left out; with a cut, most likely
 * first; greedy is one candidate with weight 1. The weights are {@code exp(z / T - max)}, so
 * {@code weight / total} is the probability. Immutable once built (the arrays are owned, never
 * exposed); any thread may read it.
 */
public final class Probabilities {

    private final int[] ids;           // null: the candidates are ids 0..size-1 in order
    private final double[] weights;
    private final double total;

    /** Takes ownership of the arrays. {@code total} is the sum of the weights as the draw scales by it. */
    Probabilities(int[] ids, double[] weights, double total) {
        if (ids.length == 0 || ids.length != weights.length) {
            throw new IllegalArgumentException(ids.length + " candidate ids for " + weights.length + " weights");
        }
        this.ids = ids;
        this.weights = weights;
        this.total = total;
    }

    /**
     * Every id of a vocabulary of {@code weights.length} in id order, each with its weight (all positive):
     * takes ownership of {@code weights} and spares an id array of the vocabulary's size.
     */
    static Probabilities everyId(double[] weights, double total) {
        return new Probabilities(weights, total);
    }

    private Probabilities(double[] weights, double total) {
        if (weights.length == 0) {
            throw new IllegalArgumentException("no candidates");
        }
        this.ids = null;
        this.weights = weights;
        this.total = total;
    }

    /** All the probability on one token (greedy). */
    static Probabilities certain(int id) {
        return new Probabilities(new int[] {id}, new double[] {1.0}, 1.0);
    }

    /** How many tokens can be chosen (at least 1). */
    public int size() {
        return weights.length;
    }

    /** The {@code k}-th candidate in walk order. */
    public int id(int k) {
        return ids == null ? k : ids[k];
    }

    /** The {@code k}-th candidate's unnormalised weight. */
    public double weight(int k) {
        return weights[k];
    }

    /** The sum of the weights. */
    public double total() {
        return total;
    }

    /** The normalised probability of {@code tokenId}: 0 when it is no candidate. O(candidates). */
    public double probability(int tokenId) {
        if (ids == null) {
            return tokenId >= 0 && tokenId < weights.length ? weights[tokenId] / total : 0;
        }
        for (int k = 0; k < ids.length; k++) {
            if (ids[k] == tokenId) {
                return weights[k] / total;
            }
        }
        return 0;
    }
}
