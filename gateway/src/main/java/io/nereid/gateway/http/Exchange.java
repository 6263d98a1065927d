package io.nereid.gateway.http;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.gateway.http.ParsedRequest.Kind;
import io.nereid.openapi.ChatCompletion;
import io.nereid.openapi.ErrorResponse;
import io.nereid.openapi.Logprobs;
import io.nereid.openapi.TextCompletion;
import io.nereid.openapi.UsageInfo;
import io.vertx.core.Context;
import io.vertx.core.http.HttpServerResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One admitted completion request: receives the engine's output and writes the HTTP response,
 * streamed (SSE) or whole. A batch of prompts is one engine request per prompt, all answered in
 * this one response: prompt {@code k}'s {@link #sink(int) sink} places its choice {@code c} at
 * index {@code k * n + c} (vLLM's order); usage counts each prompt once and every choice's tokens.
 *
 * <p>Threads: the {@link TokenSink} methods run on the engine thread and only collect the events
 * of the current engine step; {@code onStepEnd()} hands them over as one batch and schedules
 * {@link #drain} on the connection's context, so a drain never sees part of a step (a choice's last
 * text and its {@code finish_reason} share one chunk). Everything else runs on that context. While
 * the connection's write queue is full, events stay queued and consecutive deltas of a choice are
 * later sent as one chunk (a slow reader gets bigger chunks, not an unbounded queue of frames).
 * A client that disconnects cancels every engine request of the response.
 *
 * <p>Prompt logprobs arrive once per prompt, in the step that completes it, and are copied to each
 * of its choices: as vLLM's {@code prompt_logprobs}, and with {@code echo} + {@code logprobs} as the
 * echoed prompt's legacy logprobs, sent with the echoed text (so a stream's echo chunk waits for them).
 */
final class Exchange {

    /**
     * What {@code echo} puts before each choice's output of one prompt.
     *
     * @param text    the echoed text, "" for none
     * @param tokens  with echo and logprobs: the prompt's token ids, else null
     * @param offsets with echo and logprobs: each prompt token's character offset in {@code text}, else null
     */
    record Echo(String text, int[] tokens, int[] offsets) {
    }

    private sealed interface Event permits Delta, Finished, Failed, PromptScored {
        int choice();
    }

    /** The prompt of choices {@code [choice, choice + n)} was scored. */
    private record PromptScored(int choice, List<TokenLogprob> logprobs) implements Event {
    }

    private record Delta(int choice, String text, List<TokenLogprob> logprobs) implements Event {
    }

    private record Finished(int choice, FinishReason reason, Object stopReason, Usage usage) implements Event {
    }

    private record Failed(int choice, EngineException error) implements Event {
    }

    private final Context context;
    private final HttpServerResponse response;
    private final ParsedRequest request;
    private final String id;
    private final long created;
    private final String model;
    private final SseChunks chunks;
    private final ServingMetrics metrics;
    private final LogprobFormat logprobFormat;   // null unless the request asked for logprobs
    private final LogprobFormat promptFormat;    // for prompt logprobs
    private final Runnable onDone;
    private final String requestId;
    private final List<Echo> echoes;   // per prompt
    private final int n;   // choices per prompt
    private final java.util.function.BooleanSupplier shuttingDown;   // true: a cancellation is the forced end of a drain
    private final long stallMillis;
    private long stallTimer = -1;   // context only: armed while the write queue is full
    private final long[] lastTokenNanos;   // engine thread only: per choice, 0 before the first token
    private final ConcurrentLinkedQueue<List<Event>> steps = new ConcurrentLinkedQueue<>();   // whole steps, for drain()
    private final AtomicBoolean scheduled = new AtomicBoolean();

    // Context-only state.
    private final StringBuilder[] texts;
    private final List<List<TokenLogprob>> logprobs = new ArrayList<>();   // per choice, every token so far
    private final int[] logprobChars;   // per choice: characters of the tokens already sent (legacy text_offset)
    private final List<List<Map<String, Logprobs.PromptToken>>> promptLogprobs;   // per choice: vLLM's, or null
    private final Logprobs.Completion[] echoLogprobs;   // per choice: the echoed prompt's, until sent
    private final String[] finishReasons;
    private final Object[] stopReasons;
    private List<RequestHandle> handles;   // one per prompt
    private int finished;
    private int completionTokens;
    private final int[] promptTokens;   // per prompt
    private final int[] cachedTokens;   // per prompt
    private boolean done;
    private volatile boolean abandoned;   // set on the context by abandon(), read by the sinks on the engine thread
    private boolean released;   // onDone has run

    /** {@code echoes}: per prompt, what goes before each of its choices' output (its first stream chunk). */
    Exchange(Context context, HttpServerResponse response, ParsedRequest request, List<Echo> echoes, String id,
            String model,
            ServingMetrics metrics, LogprobFormat logprobFormat, Runnable onDone, String requestId,
            java.time.Duration clientStallTimeout, java.util.function.BooleanSupplier shuttingDown) {
        this.shuttingDown = shuttingDown;
        this.requestId = requestId;
        this.echoes = echoes;
        this.n = request.n();
        this.stallMillis = Math.max(1, clientStallTimeout.toMillis());
        this.context = context;
        this.response = response;
        this.request = request;
        this.id = id;
        this.created = System.currentTimeMillis() / 1000;
        this.model = model;
        this.chunks = new SseChunks(request.kind(), id, created, model);
        this.metrics = metrics;
        this.logprobFormat = request.logprobs() ? logprobFormat : null;
        this.promptFormat = logprobFormat;
        int choices = echoes.size() * n;
        this.logprobChars = new int[choices];
        this.onDone = onDone;
        this.lastTokenNanos = new long[choices];
        this.texts = new StringBuilder[choices];
        this.finishReasons = new String[choices];
        this.stopReasons = new Object[choices];
        this.promptTokens = new int[echoes.size()];
        this.cachedTokens = new int[echoes.size()];
        this.promptLogprobs = new ArrayList<>(java.util.Collections.nCopies(choices, null));
        this.echoLogprobs = new Logprobs.Completion[choices];
        for (int i = 0; i < choices; i++) {
            // An echo with logprobs waits for the prompt's scores (PromptScored) and is sent with them.
            texts[i] = new StringBuilder(request.echoLogprobs() ? "" : echoes.get(i / n).text());
            logprobs.add(new ArrayList<>());
        }
    }

    /** The engine-side sink of prompt {@code k} (submit its engine request with it). */
    TokenSink sink(int k) {
        return new PromptSink(k * n);
    }

    /**
     * Admitting a later prompt of the batch failed: cancels the prompts already admitted and drops
     * their output; nothing is written (the caller answers the error). Context only, instead of {@link #start}.
     */
    void abandon(List<RequestHandle> admitted) {
        abandoned = true;   // before the cancels: their CANCELLED finishes are not requests that ran
        done = true;
        admitted.forEach(RequestHandle::cancel);
        steps.clear();
    }

    /** On the context, right after the engine admitted every prompt: the 200 headers and role chunks. */
    void start(List<RequestHandle> admitted) {
        this.handles = List.copyOf(admitted);
        response.closeHandler(v -> {
            if (!done) {
                done = true;
                cancelStallTimer();
                GatewayServer.LOG.log(System.Logger.Level.INFO, "request {0}: client disconnected; engine request {1}"
                        + " cancelled", requestId, id);
                metrics.clientDisconnected();
                cancelAll();
                release();
            }
        });
        if (request.stream()) {
            response.setStatusCode(200).setChunked(true).putHeader("Content-Type", "text/event-stream")
                    .putHeader("Cache-Control", "no-cache");
            for (int i = 0; i < texts.length; i++) {
                if (request.kind() == Kind.CHAT) {
                    response.write(chunks.role(i));
                }
                String echo = echoes.get(i / n).text();
                if (!echo.isEmpty() && !request.echoLogprobs()) {
                    response.write(chunks.content(i, echo, null));
                }
            }
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

    private void drain() {
        scheduled.set(false);
        if (done) {
            steps.clear();
            return;
        }
        if (request.stream() && response.writeQueueFull()) {
            awaitWritable();
            return;
        }
        List<Event> batch = new ArrayList<>();
        for (List<Event> step; (step = steps.poll()) != null; ) {
            batch.addAll(step);
        }
        int[] pendingFrom = new int[texts.length]; // chars of texts[i] not yet streamed
        int[] logprobsFrom = new int[texts.length]; // entries of logprobs[i] not yet streamed
        for (int i = 0; i < pendingFrom.length; i++) {
            pendingFrom[i] = texts[i].length();
            logprobsFrom[i] = logprobs.get(i).size();
        }
        for (Event e : batch) {
            switch (e) {
                case Delta d -> {
                    texts[d.choice()].append(d.text());
                    logprobs.get(d.choice()).addAll(d.logprobs());
                }
                case PromptScored p -> promptScored(p);
                case Finished f when f.reason() == FinishReason.CANCELLED && shuttingDown.getAsBoolean() -> {
                    terminate(503, ErrorResponse.of("the server shut down before the request finished",
                            "service_unavailable", null, "shutdown"));
                    return;
                }
                case Finished f -> {
                    finishReasons[f.choice()] = finishReason(f.reason());
                    stopReasons[f.choice()] = f.stopReason();
                    promptTokens[f.choice() / n] = f.usage().promptTokens();
                    cachedTokens[f.choice() / n] = f.usage().cachedTokens();
                    completionTokens += f.usage().completionTokens();
                    if (request.stream()) {
                        response.write(chunk(f.choice(), pendingFrom, logprobsFrom));
                    }
                    finished++;
                }
                case Failed x -> {
                    fail(x.error());
                    return;
                }
            }
        }
        if (request.stream()) {
            for (int i = 0; i < pendingFrom.length; i++) {
                if (finishReasons[i] == null && (pendingFrom[i] < texts[i].length()
                        || logprobsFrom[i] < logprobs.get(i).size())) {
                    response.write(chunk(i, pendingFrom, logprobsFrom));
                }
            }
        }
        if (request.stream() && response.writeQueueFull()) {
            // Arm the stall timer even if no further event arrives; a finished stream ends (complete())
            // only once the queue drains, so a client that stops reading at the very end is caught too.
            awaitWritable();
        } else if (finished == texts.length) {
            complete();
        }
    }

    /** Every choice of the scored prompt gets its prompt logprobs, and with echo + logprobs its echo. */
    private void promptScored(PromptScored p) {
        Echo echo = echoes.get(p.choice() / n);
        // Formatted once and shared (immutable) by the prompt's n choices.
        var prompt = request.promptLogprobs() >= 0 ? promptFormat.prompt(p.logprobs(), request.promptLogprobs()) : null;
        var echoed = request.echoLogprobs() ? promptFormat.echo(echo.tokens(), echo.offsets(), p.logprobs(),
                request.sampling().topLogprobs()) : null;
        for (int c = p.choice(); c < p.choice() + n; c++) {
            if (prompt != null) {
                promptLogprobs.set(c, prompt);
            }
            if (echoed != null) {
                texts[c].append(echo.text());
                echoLogprobs[c] = echoed;
                logprobChars[c] = echo.text().length();
            }
        }
    }

    /** Write queue full: resume on drain; if it stays full for the client stall timeout, drop the client. */
    private void awaitWritable() {
        response.drainHandler(v -> {
            cancelStallTimer();
            drain();
        });
        if (stallTimer < 0) {
            stallTimer = context.owner().setTimer(stallMillis, t -> {
                stallTimer = -1;
                if (!done && response.writeQueueFull()) {
                    stalled();
                }
            });
        }
    }

    /** The next stream chunk of choice {@code i}: its text and logprobs not yet sent; advances both marks. */
    private String chunk(int i, int[] pendingFrom, int[] logprobsFrom) {
        String text = texts[i].substring(pendingFrom[i]);
        List<TokenLogprob> lps = logprobs.get(i).subList(logprobsFrom[i], logprobs.get(i).size());
        Object lp = logprobsJson(i, lps);
        pendingFrom[i] = texts[i].length();
        logprobsFrom[i] = logprobs.get(i).size();
        return chunks.content(i, text, lp, finishReasons[i], stopReasons[i]);
    }

    /** {@code choices[i].logprobs} for these tokens of choice {@code i} (null when not requested). */
    private Object logprobsJson(int i, List<TokenLogprob> tokens) {
        if (logprobFormat == null) {
            return null;
        }
        if (request.kind() == Kind.CHAT) {
            return logprobFormat.chat(tokens);
        }
        Logprobs.Completion lp = logprobFormat.completion(tokens, logprobChars[i]);
        logprobChars[i] += logprobFormat.chars(tokens);
        if (echoLogprobs[i] != null) {   // the echoed prompt's come first, once
            lp = LogprobFormat.concat(echoLogprobs[i], lp);
            echoLogprobs[i] = null;
        }
        return lp;
    }

    private void complete() {
        done = true;   // before end(): Vert.x may run the close handler from within it, which must not count a disconnect
        io.vertx.core.Future<Void> ended;
        UsageInfo usage = UsageInfo.of(java.util.Arrays.stream(promptTokens).sum(), completionTokens,
                java.util.Arrays.stream(cachedTokens).sum());
        if (request.stream()) {
            if (request.includeUsage()) {
                response.write(chunks.usage(usage));
            }
            ended = response.end(SseChunks.DONE);
        } else {
            Object body;
            if (request.kind() == Kind.CHAT) {
                List<ChatCompletion.Choice> choices = new ArrayList<>();
                for (int i = 0; i < texts.length; i++) {
                    choices.add(new ChatCompletion.Choice(i, new ChatCompletion.Message("assistant", texts[i].toString(), null),
                            logprobsJson(i, logprobs.get(i)), finishReasons[i], stopReasons[i]));
                }
                body = new ChatCompletion.Response(id, created, model, choices, usage, promptLogprobs.getFirst());
            } else {
                List<TextCompletion.Choice> choices = new ArrayList<>();
                for (int i = 0; i < texts.length; i++) {
                    choices.add(new TextCompletion.Choice(i, texts[i].toString(), logprobsJson(i, logprobs.get(i)),
                            finishReasons[i], stopReasons[i], promptLogprobs.get(i)));
                }
                body = new TextCompletion(id, created, model, choices, usage);
            }
            ended = response.setStatusCode(200).putHeader("Content-Type", "application/json").end(SseChunks.json(body));
        }
        finish(ended);
    }

    /** An engine failure: in-band after a streamed 200, else a 500. The other choices are cancelled. */
    private void fail(EngineException error) {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: engine request {1} failed: {2}", requestId, id,
                error.getMessage());
        terminate(500, ErrorResponse.of("generation failed: " + error.getMessage(), "server_error", null, null));
    }

    /** Ends with an error: in-band event then [DONE] after a streamed 200, else {@code status}. Cancels the rest. */
    private void terminate(int status, ErrorResponse body) {
        done = true;   // before end(), as in complete()
        io.vertx.core.Future<Void> ended;
        cancelAll();
        if (request.stream()) {
            response.write(SseChunks.error(body));
            ended = response.end(SseChunks.DONE);
        } else {
            ended = response.setStatusCode(status).putHeader("Content-Type", "application/json").end(SseChunks.json(body));
        }
        finish(ended);
    }

    /** The client read nothing for the client stall timeout: cancel the engine request and drop the connection. */
    private void stalled() {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: client read nothing for {1} ms; engine request"
                + " {2} cancelled and connection closed", requestId, stallMillis, id);
        metrics.streamStalled();
        cancelAll();
        finish();
        response.reset();
    }

    private void cancelAll() {
        handles.forEach(RequestHandle::cancel);
    }

    private void cancelStallTimer() {
        if (stallTimer >= 0) {
            context.owner().cancelTimer(stallTimer);
            stallTimer = -1;
        }
    }

    private void finish() {
        finish(null);
    }

    /**
     * Done: no more output. {@code onDone} (which {@code drain()} counts on) runs once the last bytes
     * were handed to the connection ({@code ended}: the end() future; null: now), so a shutdown
     * does not close connections whose final chunks are still queued.
     */
    private void finish(io.vertx.core.Future<Void> ended) {
        cancelStallTimer();
        done = true;
        steps.clear();
        if (ended == null) {
            release();
        } else {
            ended.onComplete(ar -> release());
        }
    }

    private void release() {
        if (!released) {
            released = true;
            onDone.run();
        }
    }

    static String finishReason(FinishReason r) {
        return switch (r) {
            case STOP -> "stop";
            case LENGTH -> "length";
            case CANCELLED, DEADLINE -> "abort";
        };
    }

}
