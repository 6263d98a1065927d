package io.nereid.engine.core;

import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.structured.CompiledConstraint;

/**
 * A submitted request: its sink, its choices (choice 0 prefills the prompt; the others are forked
 * from it when the prompt is done), arrival order and cancellation flag. The flag is the only
 * field written from other threads.
 */
final class RequestState implements RequestHandle {

    final GenerationRequest request;
    final TokenSink sink;
    final CompiledConstraint constraint;   // the request's compiled constraint, or null
    final long arrivalNanos;
    final long order;                 // submission order, for FIFO and "latest arrival" preemption
    final Sequence[] choices;         // null until the choice exists (choice 0 on admission, the others at the fork)
    final ChoiceOutput[] outputs;     // null until the choice exists (the others: when the prompt is computed)
    private final boolean[] ended;    // per choice: its one terminal event was delivered
    private int endedCount;
    long scheduledNanos;
    boolean forked;
    boolean notifiedThisStep;         // in the engine's list of sinks owed an onStepEnd
    final TokenLogprob[] promptLogprobs;   // (prompt length - 1) by position - 1; null unless requested
    boolean promptLogprobsSent;
    float[] pooled;                   // an embedding request's pooled hidden state so far (from its first slice); else null
    int pooledUpTo;                   // positions pooled (a position computed again after a preemption is not)
    private final Runnable wakeUp;
    private volatile boolean cancelled;

    RequestState(GenerationRequest request, TokenSink sink, long order, Runnable wakeUp) {
        this(request, sink, order, wakeUp, null);
    }

    RequestState(GenerationRequest request, TokenSink sink, long order, Runnable wakeUp, CompiledConstraint constraint) {
        this.request = request;
        this.constraint = constraint;
        this.sink = sink;
        this.order = order;
        this.wakeUp = wakeUp;
        this.arrivalNanos = System.nanoTime();
        this.choices = new Sequence[request.n()];
        this.outputs = new ChoiceOutput[request.n()];
        this.ended = new boolean[request.n()];
        this.promptLogprobs = request.promptLogprobs() >= 0 ? new TokenLogprob[request.promptTokens().length - 1] : null;
    }

    /** Whether this is an embedding request: its prompt is computed in full, its hidden states pooled. */
    boolean pools() {
        return request.pooling() != null;
    }

    @Override
    public String id() {
        return request.id();
    }

    @Override
    public void cancel() {
        if (!cancelled) {
            cancelled = true;
            wakeUp.run();
        }
    }

    boolean cancelled() {
        return cancelled;
    }

    /** The prompt's logprobs are wanted and not delivered yet: its prompt must be computed in full. */
    boolean needsPromptLogprobs() {
        return promptLogprobs != null && !promptLogprobsSent;
    }

    /**
     * Marks choice {@code c} ended, once: true the first time (the caller then delivers its terminal
     * event), false after that, so no choice gets two terminal events whatever path ends it.
     */
    boolean end(int c) {
        if (ended[c]) {
            return false;
        }
        ended[c] = true;
        endedCount++;
        return true;
    }

    boolean ended(int c) {
        return ended[c];
    }

    boolean allFinished() {
        return endedCount == ended.length;
    }
}
