package io.nereid.gateway.http;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.gateway.http.ParsedRequest.Kind;
import io.nereid.gateway.http.StepEventPump.Event;
import io.nereid.openapi.ChatCompletion;
import io.nereid.openapi.ErrorResponse;
import io.nereid.openapi.Logprobs;
import io.nereid.openapi.TextCompletion;
import io.nereid.openapi.UsageInfo;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One admitted OpenAI completion (chat or legacy): formats what its {@link StepEventPump} delivers
 * into the HTTP response, streamed (SSE chunks) or whole. A batch of prompts is one engine request
 * per prompt, all answered in this one response: prompt {@code k}'s choice {@code c} is choice
 * {@code k * n + c} (vLLM's order); usage counts each prompt once and every choice's tokens.
 *
 * <p>Each delivery holds whole engine steps, so a choice's last text and its {@code finish_reason}
 * share one chunk; consecutive deltas of a choice that arrive together are one chunk (a slow reader
 * gets bigger chunks). Prompt logprobs arrive once per prompt, in the step that completes it, and
 * are copied to each of its choices: as vLLM's {@code prompt_logprobs}, and with {@code echo} +
 * {@code logprobs} as the echoed prompt's legacy logprobs, sent with the echoed text (so a stream's
 * echo chunk waits for them). Per-choice state is a {@link ChoiceState}.
 *
 * <p>Threads: everything runs on the connection's context but {@link #sink}, which the engine
 * thread calls through the pump.
 */
final class Exchange implements StepEventPump.Receiver, AdmissionService.Responder {

    /**
     * What {@code echo} puts before each choice's output of one prompt.
     *
     * @param text    the echoed text, "" for none
     * @param tokens  with echo and logprobs: the prompt's token ids, else null
     * @param offsets with echo and logprobs: each prompt token's character offset in {@code text}, else null
     */
    record Echo(String text, int[] tokens, int[] offsets) {
    }

    private final HttpServerResponse response;
    private final ParsedRequest request;
    private final String id;
    private final long created;
    private final String model;
    private final SseChunks chunks;
    private final LogprobFormat logprobFormat;   // null unless the request asked for logprobs
    private final LogprobFormat promptFormat;    // for prompt logprobs
    private final Runnable onDone;
    private final String requestId;
    private final List<Echo> echoes;   // per prompt
    private final int n;   // choices per prompt
    private final java.util.function.Supplier<String> shuttingDown;   // non-null: a cancellation is the forced end of a drain, and why
    private final StepEventPump pump;
    private final ChoiceState[] choices;
    private final int[] promptTokens;   // per prompt
    private final int[] cachedTokens;   // per prompt
    private int finished;
    private int completionTokens;
    private boolean released;   // onDone has run

    /** {@code echoes}: per prompt, what goes before each of its choices' output (its first stream chunk). */
    Exchange(Context context, HttpServerResponse response, ParsedRequest request, List<Echo> echoes, String id,
            String model, ServingMetrics metrics, LogprobFormat logprobFormat, Runnable onDone, String requestId,
            java.time.Duration clientStallTimeout, java.util.function.Supplier<String> shuttingDown) {
        this.response = response;
        this.request = request;
        this.echoes = echoes;
        this.n = request.n();
        this.id = id;
        this.created = System.currentTimeMillis() / 1000;
        this.model = model;
        this.chunks = new SseChunks(request.kind(), id, created, model);
        this.logprobFormat = request.logprobs() ? logprobFormat : null;
        this.promptFormat = logprobFormat;
        this.onDone = onDone;
        this.requestId = requestId;
        this.shuttingDown = shuttingDown;
        this.pump = new StepEventPump(context, request.stream() ? response : null, echoes.size(), n, metrics,
                clientStallTimeout);
        this.choices = new ChoiceState[echoes.size() * n];
        for (int i = 0; i < choices.length; i++) {
            // An echo with logprobs waits for the prompt's scores (PromptScored) and is sent with them.
            choices[i] = new ChoiceState(request.echoLogprobs() ? "" : echoes.get(i / n).text());
            if (request.kind() == Kind.CHAT) {
                choices[i].split = ChatOutputSplit.of(request.reasoning(),
                        request.readsToolCalls() ? request.tools().format() : null,
                        request.tools() != null && request.tools().legacy());
            }
        }
        this.promptTokens = new int[echoes.size()];
        this.cachedTokens = new int[echoes.size()];
    }

    /** The engine-side sink of prompt {@code k} (submit its engine request with it). */
    @Override
    public TokenSink sink(int k) {
        return pump.sink(k);
    }

    /** Admitting a later prompt of the batch failed: see {@link StepEventPump#abandon}; nothing is written. */
    @Override
    public void abandon(List<RequestHandle> admitted) {
        pump.abandon(admitted);
    }

    /** On the context, right after the engine admitted every prompt: the 200 headers and role chunks. */
    @Override
    public void start(List<RequestHandle> admitted) {
        if (request.stream()) {
            response.setStatusCode(200).setChunked(true).putHeader("Content-Type", "text/event-stream")
                    .putHeader("Cache-Control", "no-cache");
            for (int i = 0; i < choices.length; i++) {
                if (request.kind() == Kind.CHAT) {
                    response.write(chunks.role(i));
                }
                String echo = echoes.get(i / n).text();
                if (!echo.isEmpty() && !request.echoLogprobs()) {
                    response.write(chunks.content(i, echo, null));
                }
                choices[i].markSent();
            }
        }
        pump.start(admitted, this, response);
    }

    @Override
    public void deliver(List<Event> batch) {
        for (Event e : batch) {
            switch (e) {
                case StepEventPump.Delta d -> choices[d.choice()].append(d.text(), d.logprobs());
                case StepEventPump.PromptScored p -> promptScored(p);
                case StepEventPump.Finished f when f.reason() == FinishReason.CANCELLED && shuttingDown.get() != null -> {
                    terminate(503, ErrorResponse.of(shuttingDown.get(), "service_unavailable", null, "shutdown"));
                    return;
                }
                case StepEventPump.Finished f -> {
                    ChoiceState c = choices[f.choice()];
                    c.finishReason = finishReason(f.reason());
                    c.stopReason = f.stopReason();
                    promptTokens[f.choice() / n] = f.usage().promptTokens();
                    cachedTokens[f.choice() / n] = f.usage().cachedTokens();
                    completionTokens += f.usage().completionTokens();
                    if (request.stream()) {
                        response.write(chunk(f.choice()));
                    }
                    finished++;
                }
                case StepEventPump.Failed x -> {
                    fail(x.error());
                    return;
                }
            }
        }
        if (request.stream()) {
            for (int i = 0; i < choices.length; i++) {
                if (!choices[i].finished() && choices[i].hasUnsent()) {
                    String chunk = chunk(i);
                    if (chunk != null) {
                        response.write(chunk);
                    }
                }
            }
        }
        // A finished stream ends (complete()) only once its queue drains, so a client that stops
        // reading at the very end is caught by the stall timeout too.
        if (!(request.stream() && pump.awaitWritable()) && finished == choices.length) {
            complete();
        }
    }

    @Override
    public void disconnected() {
        GatewayServer.LOG.log(System.Logger.Level.INFO, "request {0}: client disconnected; engine request {1} cancelled",
                requestId, id);
        release();
    }

    @Override
    public void stalled() {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: client read nothing for the stall timeout;"
                + " engine request {1} cancelled and connection closed", requestId, id);
        release();
        response.reset();
    }

    /** Every choice of the scored prompt gets its prompt logprobs, and with echo + logprobs its echo. */
    private void promptScored(StepEventPump.PromptScored p) {
        Echo echo = echoes.get(p.choice() / n);
        // Formatted once and shared (immutable) by the prompt's n choices.
        var prompt = request.promptLogprobs() >= 0 ? promptFormat.prompt(p.logprobs(), request.promptLogprobs()) : null;
        var echoed = request.echoLogprobs() ? promptFormat.echo(echo.tokens(), echo.offsets(), p.logprobs(),
                request.sampling().topLogprobs()) : null;
        for (int c = p.choice(); c < p.choice() + n; c++) {
            if (prompt != null) {
                choices[c].promptLogprobs = prompt;
            }
            if (echoed != null) {
                choices[c].append(echo.text(), List.of());
                choices[c].echoLogprobs = echoed;
                choices[c].logprobChars = echo.text().length();
            }
        }
    }

    /**
     * The next stream chunk of choice {@code i}: its text and logprobs not yet sent; with tools, the
     * text goes through the choice's {@link ToolCallParser} first (content, then tool-call deltas).
     * Null when there is nothing to send yet (text held back as a possible start of a call).
     */
    private String chunk(int i) {
        ChoiceState c = choices[i];
        String text = c.takeUnsentText();
        Object lp = logprobsJson(i, c.takeUnsentLogprobs());
        if (c.split == null) {
            return chunks.content(i, text, lp, c.finishReason, c.stopReason);
        }
        ChatOutputSplit.Piece p = c.split.push(text, c.finishReason != null);
        String finish = c.finishReason == null ? null : c.split.finishReason(c.finishReason);
        if (p.isEmpty() && finish == null && lp == null) {
            return null;
        }
        return chunks.content(i, p.content(), p.reasoning(), p.calls(), c.split.functionCall(), lp, finish, c.stopReason);
    }

    /** {@code choices[i].logprobs} for these tokens of choice {@code i} (null when not requested). */
    private Object logprobsJson(int i, List<TokenLogprob> tokens) {
        if (logprobFormat == null) {
            return null;
        }
        if (request.kind() == Kind.CHAT) {
            return logprobFormat.chat(tokens);
        }
        ChoiceState c = choices[i];
        Logprobs.Completion lp = logprobFormat.completion(tokens, c.logprobChars);
        c.logprobChars += logprobFormat.chars(tokens);
        if (c.echoLogprobs != null) {   // the echoed prompt's come first, once
            lp = LogprobFormat.concat(c.echoLogprobs, lp);
            c.echoLogprobs = null;
        }
        return lp;
    }

    private void complete() {
        pump.done();   // before end(): Vert.x may run the close handler from within it, which must not count a disconnect
        Future<Void> ended;
        UsageInfo usage = UsageInfo.of(Arrays.stream(promptTokens).sum(), completionTokens, Arrays.stream(cachedTokens).sum());
        if (request.stream()) {
            if (request.includeUsage()) {
                response.write(chunks.usage(usage));
            }
            ended = response.end(SseChunks.DONE);
        } else {
            Object body;
            if (request.kind() == Kind.CHAT) {
                List<ChatCompletion.Choice> out = new ArrayList<>();
                for (int i = 0; i < choices.length; i++) {
                    ChoiceState c = choices[i];
                    ChatCompletion.Message message = new ChatCompletion.Message("assistant", c.text(), null);
                    String finish = c.finishReason;
                    if (c.split != null) {
                        c.split.push(c.text(), true);
                        String content = c.split.content();
                        if (!c.split.calls().isEmpty()) {
                            content = content.strip().isEmpty() ? null : content.strip();
                        }
                        List<ChatCompletion.ToolCall> calls = c.split.calls().isEmpty() ? null : c.split.calls();
                        message = c.split.functionCall()
                                ? new ChatCompletion.Message("assistant", content, null, null, c.split.reasoning(),
                                        calls == null ? null : calls.get(0).function())
                                : new ChatCompletion.Message("assistant", content, null, calls, c.split.reasoning());
                        finish = c.split.finishReason(finish);
                    }
                    out.add(new ChatCompletion.Choice(i, message, logprobsJson(i, c.logprobs()), finish, c.stopReason));
                }
                body = new ChatCompletion.Response(id, created, model, out, usage, choices[0].promptLogprobs);
            } else {
                List<TextCompletion.Choice> out = new ArrayList<>();
                for (int i = 0; i < choices.length; i++) {
                    ChoiceState c = choices[i];
                    out.add(new TextCompletion.Choice(i, c.text(), logprobsJson(i, c.logprobs()), c.finishReason,
                            c.stopReason, c.promptLogprobs));
                }
                body = new TextCompletion(id, created, model, out, usage);
            }
            ended = response.setStatusCode(200).putHeader("Content-Type", "application/json").end(SseChunks.json(body));
        }
        StepEventPump.whenWritten(ended, this::release);
    }

    /** An engine failure: in-band after a streamed 200, else a 500. The other choices are cancelled. */
    private void fail(EngineException error) {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: engine request {1} failed: {2}", requestId, id,
                error.getMessage());
        terminate(500, ErrorResponse.of("generation failed: " + error.getMessage(), "server_error", null, null));
    }

    /** Ends with an error: in-band event then [DONE] after a streamed 200, else {@code status}. Cancels the rest. */
    private void terminate(int status, ErrorResponse body) {
        pump.done();   // before end(), as in complete()
        pump.cancelAll();
        Future<Void> ended;
        if (request.stream()) {
            response.write(SseChunks.error(body));
            ended = response.end(SseChunks.DONE);
        } else {
            ended = response.setStatusCode(status).putHeader("Content-Type", "application/json").end(SseChunks.json(body));
        }
        StepEventPump.whenWritten(ended, this::release);
    }

    /**
     * No more output: {@code onDone} (which the server's drain counts on) runs once, after the last
     * bytes were handed to the connection, so a shutdown does not close connections whose final
     * chunks are still queued.
     */
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
