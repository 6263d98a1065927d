package io.nereid.gateway.http;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.streams.WriteStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Carries the engine's output for one response to the connection's context, protocol-neutral:
 * the OpenAI routes (and later KServe v2 / gRPC) only format what it delivers.
 *
 * <pre>
 *   engine thread                                  connection's context
 *   sink(k).onDelta / onFinish / onError ...  ─┐
 *   sink(k).onStepEnd()  → one whole step ─────┴─► Receiver.deliver(events of every step so far)
 *                                                   (unless the output's write queue is full:
 *                                                    then on drain, or dropped after the stall timeout)
 * </pre>
 *
 * <p>A response is one engine request per prompt (a batch of prompts is one response): prompt
 * {@code k}'s sink places its choice {@code c} at index {@code k * n + c}. Events are buffered per
 * engine step and handed over whole, so a receiver never sees part of a step (a choice's last text
 * and its finish arrive together). While the output's write queue is full, steps stay queued and
 * are delivered together later (a slow reader gets bigger batches, not an unbounded queue of
 * frames); if it stays full for the stall timeout the response is dropped: every engine request is
 * cancelled and {@link Receiver#stalled()} runs. A connection that closes first cancels every
 * engine request ({@link Receiver#disconnected()}).
 *
 * <p>Threads: the sinks run on the engine thread; everything else, receiver callbacks included, on
 * the connection's context. Lifecycle: created before admission, then {@link #start} once every
 * prompt is admitted (or {@link #abandon} if one is refused), then {@link #done} when the receiver
 * has written its last byte.
 */
final class StepEventPump {

    /** One engine event of a response, with the response-wide choice index. */
    sealed interface Event permits Delta, Finished, Failed, PromptScored {
        int choice();
    }

    /** The prompt of choices {@code [choice, choice + n)} was scored (prompt logprobs). */
    record PromptScored(int choice, List<TokenLogprob> logprobs) implements Event {
    }

    /** New text (possibly empty while tokens are held back) and logprobs of a choice. */
    record Delta(int choice, String text, List<TokenLogprob> logprobs) implements Event {
    }

    record Finished(int choice, FinishReason reason, Object stopReason, Usage usage) implements Event {
    }

    record Failed(int choice, EngineException error) implements Event {
    }

    /** What formats the response; called on the connection's context. */
    interface Receiver {
        /**
         * Every event of the steps since the last delivery, in order; empty when the write queue
         * drained and nothing new came (the receiver may end a response it held back).
         */
        void deliver(List<Event> events);

        /** The client went away before the response ended; the engine requests are cancelled. */
        void disconnected();

        /** The client read nothing for the stall timeout; the engine requests are cancelled, the connection is reset. */
        void stalled();
    }

    private final Context context;
    private final WriteStream<?> output;   // null: a whole response, no backpressure before it is written
    private final int n;                   // choices per prompt
    private final ServingMetrics metrics;
    private final long stallMillis;
    private Receiver receiver;
    private final long[] lastTokenNanos;   // engine thread only: per choice, 0 before the first token
    private final ConcurrentLinkedQueue<List<Event>> steps = new ConcurrentLinkedQueue<>();   // whole steps
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private volatile boolean abandoned;    // set on the context by abandon(), read by the sinks
    private List<RequestHandle> handles = List.of();
    private boolean done;
    private long stallTimer = -1;          // armed while the write queue is full

    /**
     * @param output  the stream the receiver writes to, whose write queue paces delivery; null for a
     *                whole response (delivered as it comes, written at the end)
     * @param prompts prompts (engine requests) of the response
     * @param n       choices per prompt
     */
    StepEventPump(Context context, WriteStream<?> output, int prompts, int n, ServingMetrics metrics, Duration stallTimeout) {
        this.context = context;
        this.output = output;
        this.n = n;
        this.metrics = metrics;
        this.stallMillis = Math.max(1, stallTimeout.toMillis());
        this.lastTokenNanos = new long[prompts * n];
    }

    /** The engine-side sink of prompt {@code k} (submit its engine request with it). */
    TokenSink sink(int k) {
        return new PromptSink(k * n);
    }

    /**
     * Admitting a later prompt failed: cancels the prompts already admitted and drops their output;
     * nothing is delivered. Context only, instead of {@link #start}.
     */
    void abandon(List<RequestHandle> admitted) {
        abandoned = true;   // before the cancels: their CANCELLED finishes are not requests that ran
        done = true;
        admitted.forEach(RequestHandle::cancel);
        steps.clear();
    }

    /**
     * Every prompt is admitted: events flow to {@code receiver} from now on; a close of the
     * connection ({@code closeHandler} of the response) before {@link #done} is a disconnect.
     */
    void start(List<RequestHandle> admitted, Receiver receiver, io.vertx.core.http.HttpServerResponse response) {
        start(admitted, receiver, h -> {
            response.closeHandler(h);
            if (response.closed()) {   // gone while the request was prepared: no close event will come
                context.runOnContext(v -> h.handle(null));
            }
        });
    }

    /**
     * As {@link #start(List, Receiver, io.vertx.core.http.HttpServerResponse)}, for a response whose
     * going away (a closed connection, a cancelled gRPC call) is reported to the handler that
     * {@code onClose} registers.
     */
    void start(List<RequestHandle> admitted, Receiver receiver,
            java.util.function.Consumer<io.vertx.core.Handler<Void>> onClose) {
        this.handles = List.copyOf(admitted);
        this.receiver = receiver;
        onClose.accept(v -> {
            if (!done) {
                done = true;
                cancelStallTimer();
                metrics.clientDisconnected();
                cancelAll();
                receiver.disconnected();
            }
        });
        if (!steps.isEmpty()) {
            context.runOnContext(v -> drain());
        }
    }

    /** Cancels every engine request of the response (idempotent). */
    void cancelAll() {
        handles.forEach(RequestHandle::cancel);
    }

    /** The receiver ended the response: nothing more is delivered. */
    void done() {
        done = true;
        cancelStallTimer();
        steps.clear();
    }

    boolean isDone() {
        return done;
    }

    /**
     * The receiver wrote a batch and the write queue is still full: hold further delivery until it
     * drains (or the stall timeout drops the client); returns whether it had to wait.
     */
    boolean awaitWritable() {
        if (output == null || !output.writeQueueFull()) {
            return false;
        }
        output.drainHandler(v -> {
            cancelStallTimer();
            drain();
        });
        if (stallTimer < 0) {
            stallTimer = context.owner().setTimer(stallMillis, t -> {
                stallTimer = -1;
                if (!done && output.writeQueueFull()) {
                    done = true;
                    metrics.streamStalled();
                    cancelAll();
                    receiver.stalled();
                }
            });
        }
        return true;
    }

    private void drain() {
        scheduled.set(false);
        if (done) {
            steps.clear();
            return;
        }
        if (receiver == null || awaitWritable()) {
            return;
        }
        List<Event> batch = new ArrayList<>();
        for (List<Event> step; (step = steps.poll()) != null; ) {
            batch.addAll(step);
        }
        receiver.deliver(batch);   // also empty, when the queue drained: the receiver may complete now
    }

    private void cancelStallTimer() {
        if (stallTimer >= 0) {
            context.owner().cancelTimer(stallTimer);
            stallTimer = -1;
        }
    }

    /** {@code ended} completes when the last bytes were handed to the connection; then {@code then} runs. */
    static void whenWritten(Future<Void> ended, Runnable then) {
        if (ended == null) {
            then.run();
        } else {
            ended.onComplete(ar -> then.run());
        }
    }

    /** One prompt's engine output: its choices shifted by {@code offset}, buffered per engine step. */
    private final class PromptSink implements TokenSink {

        private final int offset;
        private List<Event> stepEvents = new ArrayList<>();   // engine thread only: the current step's events

        PromptSink(int offset) {
            this.offset = offset;
        }

        @Override
        public void onDelta(int choice, String text, int[] tokenIds, List<TokenLogprob> logprobs) {
            int c = offset + choice;
            long now = System.nanoTime();
            if (tokenIds.length > 0) {
                if (lastTokenNanos[c] != 0) {
                    metrics.tokenGap(now - lastTokenNanos[c], tokenIds.length);
                }
                lastTokenNanos[c] = now;
            }
            if (!text.isEmpty() || !logprobs.isEmpty()) {
                stepEvents.add(new Delta(c, text, logprobs));
            }
        }

        @Override
        public void onPromptLogprobs(List<TokenLogprob> scored) {
            stepEvents.add(new PromptScored(offset, scored));
        }

        @Override
        public void onFinish(int choice, FinishReason reason, Object stopReason, Usage usage) {
            if (!abandoned) {
                metrics.finished(reason, usage);
            }
            stepEvents.add(new Finished(offset + choice, reason, stopReason, usage));
        }

        @Override
        public void onError(int choice, EngineException error) {
            stepEvents.add(new Failed(offset + choice, error));
        }

        @Override
        public void onStepEnd() {
            if (stepEvents.isEmpty()) {
                return;
            }
            steps.add(stepEvents);
            stepEvents = new ArrayList<>();
            if (scheduled.compareAndSet(false, true)) {
                context.runOnContext(v -> drain());
            }
        }
    }
}
