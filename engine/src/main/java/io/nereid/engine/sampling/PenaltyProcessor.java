package io.nereid.engine.sampling;

import java.util.Arrays;

/**
 * Repetition (HF / vLLM: on prompt and output tokens, positive logits divided by the penalty,
 * negative ones multiplied), frequency (per occurrence in the output) and presence (once per token
 * that appeared in the output) penalties. State: the output count of every token, advanced by
 * {@link #accept} and undone by {@link #rollback} from the accepted history. When all three are
 * neutral (1, 0, 0) {@link #apply} does not touch the vocabulary. Not thread-safe; engine thread.
 */
public final class PenaltyProcessor implements LogitsProcessor {

    private final float repetition;
    private final float presence;
    private final float frequency;
    private final boolean[] inPrompt;     // (vocab) for the repetition penalty
    private final int[] outputCounts;     // (vocab) for all three
    private int[] history = new int[16];  // (accepted) output tokens, oldest first, for rollback
    private int accepted;

    /**
     * @param repetition   1 disables
     * @param presence     0 disables
     * @param frequency    0 disables
     * @param promptTokens the prompt, for the repetition penalty (ids in the vocabulary)
     */
    public PenaltyProcessor(float repetition, float presence, float frequency, int vocabSize, int[] promptTokens) {
        this.repetition = repetition;
        this.presence = presence;
        this.frequency = frequency;
        this.inPrompt = new boolean[vocabSize];
        for (int t : promptTokens) {
            inPrompt[t] = true;
        }
        this.outputCounts = new int[vocabSize];
    }

    /** Whether these penalties change any logit at all (the chain leaves a neutral one out). */
    public static boolean isNeutral(float repetition, float presence, float frequency) {
        return repetition == 1f && presence == 0f && frequency == 0f;
    }

    @Override
    public void apply(float[] z) {
        if (isNeutral(repetition, presence, frequency)) {
            return;
        }
        for (int i = 0; i < z.length; i++) {
            int count = outputCounts[i];
            if (repetition != 1f && (count > 0 || inPrompt[i])) {
                z[i] = z[i] > 0 ? z[i] / repetition : z[i] * repetition;
            }
            if (count > 0) {
                z[i] -= frequency * count + presence;
            }
        }
    }

    @Override
    public void accept(int token) {
        outputCounts[token]++;
        if (accepted == history.length) {
            history = Arrays.copyOf(history, accepted * 2);
        }
        history[accepted++] = token;
    }

    @Override
    public void rollback(int n) {
        for (int k = 0; k < n; k++) {
            outputCounts[history[--accepted]]--;
        }
    }
}
