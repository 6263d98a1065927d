package io.nereid.engine.sampling;

import java.util.Map;

/**
 * OpenAI's {@code logit_bias}: adds each token's bias to its logit. Stateless, so accept and
 * rollback do nothing; the ids are checked against the vocabulary by {@link SamplingChain}.
 * Immutable; engine thread.
 */
public final class LogitBiasProcessor implements LogitsProcessor {

    private final int[] ids;
    private final float[] biases;

    public LogitBiasProcessor(Map<Integer, Float> bias) {
        this.ids = new int[bias.size()];
        this.biases = new float[bias.size()];
        int k = 0;
        for (Map.Entry<Integer, Float> e : bias.entrySet()) {
            ids[k] = e.getKey();
            biases[k++] = e.getValue();
        }
    }

    @Override
    public void apply(float[] logits) {
        for (int k = 0; k < ids.length; k++) {
            logits[ids[k]] += biases[k];
        }
    }

    @Override
    public void accept(int token) {
    }

    @Override
    public void rollback(int n) {
    }
}
