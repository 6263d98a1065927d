package io.nereid.engine.sampling;

/**
 * {@code min_tokens}: while fewer than {@code minTokens} tokens were accepted, the suppressed ids
 * (the model's EOS ids unless {@code ignore_eos}, and the request's stop token ids) get
 * {@code -infinity}, so the sequence cannot end early. Ids outside the logits are ignored. State:
 * the number of accepted tokens. Not thread-safe; engine thread.
 */
public final class MinTokensProcessor implements LogitsProcessor {

    private final int minTokens;
    private final int[] suppressedIds;
    private int accepted;

    public MinTokensProcessor(int minTokens, int[] suppressedIds) {
        this.minTokens = minTokens;
        this.suppressedIds = suppressedIds.clone();
    }

    @Override
    public void apply(float[] logits) {
        if (accepted >= minTokens) {
            return;
        }
        for (int id : suppressedIds) {
            if (id >= 0 && id < logits.length) {
                logits[id] = Float.NEGATIVE_INFINITY;
            }
        }
    }

    @Override
    public boolean active() {
        return accepted < minTokens;
    }

    @Override
    public void accept(int token) {
        accepted++;
    }

    @Override
    public void rollback(int n) {
        accepted -= n;
    }
}
