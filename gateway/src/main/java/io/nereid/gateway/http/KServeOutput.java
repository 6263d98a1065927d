package io.nereid.gateway.http;

import io.nereid.engine.api.TokenLogprob;
import java.util.ArrayList;
import java.util.List;

/**
 * What the prompts of one KServe v2 request have generated so far, and how much of it a stream
 * has sent: the text, and with {@code return_log_probs} each token's log-probability. HTTP
 * ({@link KServeExchange}) and gRPC ({@link KServeGrpc}) format it their own way. Context only.
 */
final class KServeOutput {

    /**
     * Log-probabilities of prompts {@code [from, to)}: each one's sum over its whole output, and
     * the tokens asked for as rows of {@code width} (shorter rows padded with 0).
     */
    record LogProbs(float[] cum, float[] rows, int width) {
    }

    private final KServeInputs in;
    private final StringBuilder[] text;
    private final int[] sent;           // chars of text already streamed, per prompt
    private final List<List<Float>> logprobs = new ArrayList<>();
    private final int[] logprobsSent;   // log-probs already streamed, per prompt

    KServeOutput(KServeInputs in) {
        this.in = in;
        int n = in.prompts().size();
        this.text = new StringBuilder[n];
        this.sent = new int[n];
        this.logprobsSent = new int[n];
        for (int k = 0; k < n; k++) {
            text[k] = new StringBuilder();
            logprobs.add(new ArrayList<>());
        }
    }

    int prompts() {
        return text.length;
    }

    void add(StepEventPump.Delta d) {
        text[d.choice()].append(d.text());
        for (TokenLogprob lp : d.logprobs()) {
            logprobs.get(d.choice()).add(lp.logprob());
        }
    }

    /** Prompt {@code k}'s text not streamed yet, now counted as streamed. */
    String takeDelta(int k) {
        String s = text[k].substring(sent[k]);
        sent[k] = text[k].length();
        return s;
    }

    /** Prompt {@code k}'s whole text_output: the prompt first unless exclude_input_in_output, as Triton's backends. */
    String whole(int k) {
        return in.excludeInput() ? text[k].toString() : in.prompts().get(k) + text[k];
    }

    /**
     * The log-probs of prompts {@code [from, to)}: those not streamed yet when {@code delta}, else
     * all; either way now counted as streamed.
     */
    LogProbs logProbs(int from, int to, boolean delta) {
        float[] cum = new float[to - from];
        int[] first = new int[to - from];
        int width = 0;
        for (int i = from; i < to; i++) {
            first[i - from] = delta ? logprobsSent[i] : 0;
            width = Math.max(width, logprobs.get(i).size() - first[i - from]);
        }
        float[] rows = new float[(to - from) * width];
        for (int i = from; i < to; i++) {
            List<Float> l = logprobs.get(i);
            for (int j = 0; j < l.size(); j++) {
                cum[i - from] += l.get(j);
                if (j >= first[i - from]) {
                    rows[(i - from) * width + j - first[i - from]] = l.get(j);
                }
            }
            logprobsSent[i] = l.size();
        }
        return new LogProbs(cum, rows, width);
    }
}
