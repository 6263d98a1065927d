package io.nereid.engine.core;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import java.util.ArrayList;
import java.util.List;

/**
 * Delivers requests' events to their {@link TokenSink}s: at most one terminal event per choice
 * ({@link RequestState#end}), every callback guarded (a sink that throws, which it must not,
 * cancels its own request instead of reaching the engine loop), and after each engine iteration
 * one {@link TokenSink#onStepEnd()} for every sink that got events in it. Between
 * {@link #beginMerge} and {@link #endMerge} (a speculative run of tokens) consecutive deltas of one
 * choice go out as one, their texts, ids and logprobs concatenated, as vLLM streams them. Engine
 * thread only.
 */
final class Events {

    private static final System.Logger LOG = System.getLogger(InflightEngine.class.getName());

    private final List<RequestState> notified = new ArrayList<>();   // sinks given events since the last step end

    private boolean merging;
    private RequestState pendingRequest;   // the merged delta being built, or null
    private int pendingChoice;
    private final StringBuilder pendingText = new StringBuilder();
    private int[] pendingIds = new int[0];
    private final List<TokenLogprob> pendingLogprobs = new ArrayList<>();

    void delta(RequestState r, int choice, String text, int[] ids, List<TokenLogprob> logprobs) {
        if (!merging) {
            send(r, choice, text, ids, logprobs);
            return;
        }
        if (pendingRequest != null && (pendingRequest != r || pendingChoice != choice)) {
            flush();
        }
        pendingRequest = r;
        pendingChoice = choice;
        pendingText.append(text);
        int[] all = java.util.Arrays.copyOf(pendingIds, pendingIds.length + ids.length);
        System.arraycopy(ids, 0, all, pendingIds.length, ids.length);
        pendingIds = all;
        pendingLogprobs.addAll(logprobs);
    }

    private void send(RequestState r, int choice, String text, int[] ids, List<TokenLogprob> logprobs) {
        notified(r);
        call(r, "onDelta", () -> r.sink.onDelta(choice, text, ids, logprobs));
    }

    /** From now until {@link #endMerge}, a choice's consecutive deltas are sent as one. */
    void beginMerge() {
        merging = true;
    }

    /** Sends the merged delta, if any, and stops merging. */
    void endMerge() {
        flush();
        merging = false;
    }

    private void flush() {
        if (pendingRequest != null) {
            RequestState r = pendingRequest;
            pendingRequest = null;
            send(r, pendingChoice, pendingText.toString(), pendingIds, List.copyOf(pendingLogprobs));
            pendingText.setLength(0);
            pendingIds = new int[0];
            pendingLogprobs.clear();
        }
    }

    /** The prompt is complete: its logprobs (when asked for) go out before any of its output. */
    void promptLogprobs(RequestState r) {
        r.promptLogprobsSent = true;
        notified(r);
        call(r, "onPromptLogprobs", () -> r.sink.onPromptLogprobs(List.of(r.promptLogprobs)));
    }

    /** An embedding request's vector, before its finish. */
    void embedding(RequestState r, float[] vector) {
        notified(r);
        call(r, "onEmbedding", () -> r.sink.onEmbedding(vector));
    }

    /** Choice {@code choice}'s onFinish, unless it already ended. */
    void finish(RequestState r, int choice, FinishReason reason, Object stopReason) {
        flush();   // a merged delta goes before the finish it led to
        if (r.end(choice)) {
            Usage usage = usage(r, choice);
            notified(r);
            call(r, "onFinish", () -> r.sink.onFinish(choice, reason, stopReason, usage));
        }
    }

    /** Choice {@code choice}'s onError, unless it already ended. */
    void error(RequestState r, int choice, EngineException error) {
        flush();
        if (r.end(choice)) {
            notified(r);
            call(r, "onError", () -> r.sink.onError(choice, error));
        }
    }

    /** {@link TokenSink#onStepEnd()} for every sink that got events in this iteration. */
    void endStep() {
        for (RequestState r : notified) {
            r.notifiedThisStep = false;
            call(r, "onStepEnd", r.sink::onStepEnd);
        }
        notified.clear();
    }

    private void notified(RequestState r) {
        if (!r.notifiedThisStep) {
            r.notifiedThisStep = true;
            notified.add(r);
        }
    }

    private static void call(RequestState r, String callback, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "token sink of " + r.id() + " threw in " + callback + "; cancelling it", e);
            r.cancel();
        }
    }

    /**
     * Token counts and timings of choice {@code c}: its output so far; cached prompt tokens as its
     * sequence (a fork: as the sequence it was forked from; a choice that never started: none).
     */
    static Usage usage(RequestState r, int c) {
        Sequence s = r.choices[c];
        ChoiceOutput out = r.outputs[c];
        int cached = s != null ? s.cachedTokens() : out != null && r.choices[0] != null ? r.choices[0].cachedTokens() : 0;
        long now = System.nanoTime();
        long first = out == null ? 0 : out.firstTokenNanos();
        return new Usage(r.request.promptTokens().length, out == null ? 0 : out.generated(), cached,
                r.scheduledNanos == 0 ? now - r.arrivalNanos : r.scheduledNanos - r.arrivalNanos,
                first == 0 ? 0 : first - r.arrivalNanos, now - r.arrivalNanos);
    }
}
