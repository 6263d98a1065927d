package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenSink;
import io.nereid.gateway.http.StepEventPump.Event;
import io.nereid.openapi.ChatCompletion;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * One admitted {@code /v1/responses} request: turns what its {@link StepEventPump} delivers into
 * output items — a {@code reasoning} item (with {@code --reasoning-parser}), a {@code message}
 * with {@code output_text}, {@code function_call} items (the chat pipeline's tool-call parser) —
 * and writes them as OpenAI's typed SSE events in order ({@code response.created},
 * {@code response.in_progress}, {@code response.output_item.added}, {@code ...content_part.added},
 * {@code response.output_text.delta} ..., {@code ...done}, then {@code response.completed},
 * {@code response.incomplete} or {@code response.failed}; each with its {@code sequence_number};
 * no {@code [DONE]}), or as one response object, or — in the background — into the store only.
 * A stored response is written to the store before its last event, so a client that reads it
 * right after finds it.
 *
 * <p>Threads: everything runs on the request's context but {@link #sink} (the engine thread, through
 * the pump); storing runs on the worker pool.
 */
final class ResponsesExchange implements StepEventPump.Receiver, AdmissionService.Responder {

    /** Writes the stored form of a response (worker pool); the future completes once it is stored. */
    interface Persist {
        Future<Void> store(String status, ObjectNode response, ArrayNode conversation);
    }

    private enum Open { NONE, REASONING, MESSAGE, CALL }

    private final HttpServerResponse response;   // null in the background
    private final ResponsesRequest rq;
    private final String id;
    private final long created = System.currentTimeMillis() / 1000;
    private final String model;
    private final Runnable onDone;
    private final String requestId;
    private final Supplier<String> shuttingDown;
    private final Persist persist;
    private final StepEventPump pump;
    private final Context context;
    private final Duration stallTimeout;
    private volatile boolean discard;   // stored no more: deleted, or its queued row never stored
    private final ChatOutputSplit split;
    private final LogprobFormat logprobFormat;   // null unless include message.output_text.logprobs
    private final ArrayNode itemLogprobs = ResponsesRequest.NODES.arrayNode();
    private final ArrayNode output = ResponsesRequest.NODES.arrayNode();
    private int sequence;
    private Open open = Open.NONE;
    private ObjectNode item;                      // the item being written
    private final StringBuilder itemText = new StringBuilder();
    private final StringBuilder pendingSpace = new StringBuilder();   // whitespace not yet worth a message item
    private final StringBuilder content = new StringBuilder();        // the answer, for the conversation
    private final List<ObjectNode> calls = new ArrayList<>();
    private boolean finished;
    private boolean released;
    private boolean cancelRequested;
    private final io.vertx.core.Promise<Void> over = io.vertx.core.Promise.promise();
    private io.nereid.engine.api.Usage usage;
    private String finishReason;

    ResponsesExchange(Context context, HttpServerResponse response, ResponsesRequest rq, ParsedRequest chat, String id,
            String model, ServingMetrics metrics, Runnable onDone, String requestId, Duration stallTimeout,
            Supplier<String> shuttingDown, Persist persist, LogprobFormat logprobFormat) {
        this.response = response;
        this.rq = rq;
        this.id = id;
        this.model = model;
        this.onDone = onDone;
        this.requestId = requestId;
        this.shuttingDown = shuttingDown;
        this.persist = persist;
        this.pump = new StepEventPump(context, rq.stream ? response : null, 1, 1, metrics, stallTimeout);
        this.context = context;
        this.stallTimeout = stallTimeout;
        this.split = ChatOutputSplit.of(chat.reasoning(), chat.readsToolCalls() ? chat.tools().format() : null, false);
        this.logprobFormat = rq.logprobs ? logprobFormat : null;
    }

    String id() {
        return id;
    }

    @Override
    public TokenSink sink(int k) {
        return pump.sink(k);
    }

    @Override
    public void abandon(List<RequestHandle> admitted) {
        pump.abandon(admitted);
    }

    @Override
    public void start(List<RequestHandle> admitted) {
        if (response == null) {
            pump.start(admitted, this, h -> { });
            return;
        }
        if (rq.stream) {
            response.setStatusCode(200).setChunked(true).putHeader("Content-Type", "text/event-stream; charset=utf-8")
                    .putHeader("Cache-Control", "no-cache");
            ObjectNode r = object("in_progress", null);
            event("response.created", ResponsesRequest.NODES.objectNode().set("response", r));
            event("response.in_progress", ResponsesRequest.NODES.objectNode().set("response", r));
        }
        pump.start(admitted, this, response);
    }

    /** A background response's cancel, from any thread: the engine request stops; the response ends {@code cancelled}. */
    void cancel() {
        context.runOnContext(v -> {
            cancelRequested = true;
            pump.cancelAll();
        });
    }

    /** From any thread: the response is not to be stored again (it was deleted, or its first row failed). */
    void discard() {
        discard = true;
    }

    // ---- the response object ---------------------------------------------------------------------

    /** The response object with its output so far. */
    ObjectNode object(String status, ObjectNode error) {
        ObjectNode r = ResponsesRequest.NODES.objectNode();
        r.put("id", id).put("object", "response").put("created_at", created).put("status", status)
                .put("background", rq.background);
        r.set("error", error);
        if ("incomplete".equals(status)) {
            r.set("incomplete_details", ResponsesRequest.NODES.objectNode().put("reason", "max_output_tokens"));
        } else {
            r.putNull("incomplete_details");
        }
        r.put("instructions", rq.instructions);
        r.set("max_output_tokens", rq.body.has("max_output_tokens") ? rq.body.get("max_output_tokens")
                : ResponsesRequest.NODES.nullNode());
        r.putNull("max_tool_calls");
        r.put("model", model);
        r.set("output", output.deepCopy());
        r.put("parallel_tool_calls", rq.body.path("parallel_tool_calls").asBoolean(true));
        r.put("previous_response_id", rq.previousId);
        r.set("reasoning", rq.reasoning);
        r.put("service_tier", "default");
        r.put("store", rq.store);
        r.put("temperature", rq.body.path("temperature").asDouble(1.0));
        r.set("text", rq.text);
        r.set("tool_choice", rq.toolChoice);
        r.set("tools", rq.tools);
        r.put("top_logprobs", rq.topLogprobs);
        r.put("top_p", rq.body.path("top_p").asDouble(1.0));
        r.put("truncation", "disabled");
        if (usage != null) {
            ObjectNode u = r.putObject("usage");
            u.put("input_tokens", usage.promptTokens());
            // cached: read from the prefix cache; written: the rest of the prompt, now cached for the next request
            u.putObject("input_tokens_details").put("cached_tokens", usage.cachedTokens())
                    .put("cache_write_tokens", Math.max(0, usage.promptTokens() - usage.cachedTokens()));
            u.put("output_tokens", usage.completionTokens());
            u.putObject("output_tokens_details").put("reasoning_tokens", 0);
            u.put("total_tokens", usage.promptTokens() + usage.completionTokens());
        } else {
            r.putNull("usage");
        }
        r.set("user", rq.body.hasNonNull("user") ? rq.body.get("user") : ResponsesRequest.NODES.nullNode());
        r.set("metadata", rq.metadata);
        return r;
    }

    /** The conversation a later previous_response_id continues: this one's, then this output as the assistant's turn. */
    ArrayNode conversation() {
        ArrayNode c = rq.conversation.deepCopy();
        ObjectNode turn = c.addObject().put("role", "assistant").put("content", content.toString());
        if (!calls.isEmpty()) {
            ArrayNode tc = turn.putArray("tool_calls");
            for (ObjectNode call : calls) {
                tc.addObject().put("id", call.get("call_id").asText()).put("type", "function").set("function",
                        ResponsesRequest.NODES.objectNode().put("name", call.get("name").asText())
                                .put("arguments", call.get("arguments").asText()));
            }
        }
        return c;
    }

    // ---- events --------------------------------------------------------------------------------

    private void event(String type, ObjectNode data) {
        if (response == null || !rq.stream) {
            return;
        }
        ObjectNode e = ResponsesRequest.NODES.objectNode().put("type", type);
        e.setAll(data);
        e.put("sequence_number", sequence++);
        response.write("event: " + type + "\ndata: " + SseChunks.json(e) + "\n\n");
    }

    private ObjectNode at() {
        return ResponsesRequest.NODES.objectNode().put("item_id", item.get("id").asText()).put("output_index",
                output.size());
    }

    private void added() {
        event("response.output_item.added", ResponsesRequest.NODES.objectNode().put("output_index", output.size())
                .set("item", item.deepCopy()));
    }

    private void openReasoning() {
        close();
        open = Open.REASONING;
        item = ResponsesRequest.NODES.objectNode().put("type", "reasoning").put("id", ResponsesRequest.id("rs_"));
        item.putArray("summary");
        item.putArray("content");
        item.put("status", "in_progress");
        added();
        if (rq.summary) {
            event("response.reasoning_summary_part.added", at().put("summary_index", 0).set("part",
                    ResponsesRequest.NODES.objectNode().put("type", "summary_text").put("text", "")));
        }
    }

    private void openMessage() {
        close();
        open = Open.MESSAGE;
        item = ResponsesRequest.NODES.objectNode().put("type", "message").put("id", ResponsesRequest.id("msg_"))
                .put("status", "in_progress").put("role", "assistant");
        item.putArray("content");
        added();
        event("response.content_part.added", at().put("content_index", 0).set("part", textPart("")));
    }

    private static ObjectNode textPart(String text) {
        return textPart(text, ResponsesRequest.NODES.arrayNode());
    }

    private static ObjectNode textPart(String text, ArrayNode logprobs) {
        ObjectNode p = ResponsesRequest.NODES.objectNode().put("type", "output_text").put("text", text);
        p.putArray("annotations");
        p.set("logprobs", logprobs.deepCopy());
        return p;
    }

    private void openCall(ChatCompletion.ToolCallDelta d) {
        close();
        open = Open.CALL;
        item = ResponsesRequest.NODES.objectNode().put("type", "function_call").put("id", ResponsesRequest.id("fc_"))
                .put("call_id", d.id()).put("name", d.function().name()).put("arguments", "").put("status", "in_progress");
        added();
    }

    /** Ends the item being written: its done events, then it joins the output. */
    private void close() {
        close("completed");
    }

    /** As {@link #close()}, the item's status {@code status} (incomplete: the output was cut by max_output_tokens). */
    private void close(String status) {
        String text = itemText.toString();
        switch (open) {
            case NONE -> {
                return;
            }
            case REASONING -> {
                if (rq.summary) {
                    event("response.reasoning_summary_text.done", at().put("summary_index", 0).put("text", text));
                    event("response.reasoning_summary_part.done", at().put("summary_index", 0).set("part",
                            ResponsesRequest.NODES.objectNode().put("type", "summary_text").put("text", text)));
                    ((ArrayNode) item.get("summary")).addObject().put("type", "summary_text").put("text", text);
                } else {
                    event("response.reasoning_text.done", at().put("content_index", 0).put("text", text));
                }
                ((ArrayNode) item.get("content")).addObject().put("type", "reasoning_text").put("text", text);
            }
            case MESSAGE -> {
                event("response.output_text.done", at().put("content_index", 0).put("text", text)
                        .set("logprobs", itemLogprobs.deepCopy()));
                event("response.content_part.done", at().put("content_index", 0).set("part", textPart(text, itemLogprobs)));
                ((ArrayNode) item.get("content")).add(textPart(text, itemLogprobs));
                itemLogprobs.removeAll();
            }
            case CALL -> {
                event("response.function_call_arguments.done", at().put("arguments", text));
                item.put("arguments", text);
                calls.add(item);
            }
        }
        item.put("status", status);
        event("response.output_item.done", ResponsesRequest.NODES.objectNode().put("output_index", output.size())
                .set("item", item.deepCopy()));
        output.add(item);
        itemText.setLength(0);
        open = Open.NONE;
        item = null;
    }

    private void reasoning(String text) {
        if (text.isEmpty()) {
            return;
        }
        if (open != Open.REASONING) {
            openReasoning();
        }
        itemText.append(text);
        if (rq.summary) {
            event("response.reasoning_summary_text.delta", at().put("summary_index", 0).put("delta", text));
        } else {
            event("response.reasoning_text.delta", at().put("content_index", 0).put("delta", text));
        }
    }

    private void content(String text) {
        content(text, null);
    }

    /** The answer's next text, with its tokens' log-probabilities when they were asked for (no split then). */
    private void content(String text, ArrayNode logprobs) {
        if (text.isEmpty() && (logprobs == null || logprobs.isEmpty())) {
            return;
        }
        if (open != Open.MESSAGE) {
            if (text.isBlank() && logprobs == null) {   // whitespace between a thought and a call is no message
                pendingSpace.append(text);
                return;
            }
            text = pendingSpace + text;
            pendingSpace.setLength(0);
            openMessage();
        }
        itemText.append(text);
        content.append(text);
        ArrayNode lp = logprobs == null ? ResponsesRequest.NODES.arrayNode() : logprobs;
        itemLogprobs.addAll(lp);
        event("response.output_text.delta", at().put("content_index", 0).put("delta", text).set("logprobs", lp));
    }

    private void call(ChatCompletion.ToolCallDelta d) {
        if (d.id() != null) {
            pendingSpace.setLength(0);
            openCall(d);
        }
        String args = d.function() == null ? null : d.function().arguments();
        if (args != null && !args.isEmpty() && open == Open.CALL) {
            itemText.append(args);
            event("response.function_call_arguments.delta", at().put("delta", args));
        }
    }

    private void push(String text, boolean last) {
        push(text, last, java.util.List.of());
    }

    private void push(String text, boolean last, java.util.List<io.nereid.engine.api.TokenLogprob> lps) {
        if (split == null) {
            content(text, logprobFormat == null ? null
                    : (ArrayNode) SseChunks.JSON.valueToTree(logprobFormat.chat(lps).content()));
            return;
        }
        ChatOutputSplit.Piece p = split.push(text, last);
        reasoning(p.reasoning());
        content(p.content());
        p.calls().forEach(this::call);
    }

    // ---- delivery --------------------------------------------------------------------------------

    @Override
    public void deliver(List<Event> batch) {
        for (Event e : batch) {
            switch (e) {
                case StepEventPump.Delta d -> push(d.text(), false, d.logprobs());
                case StepEventPump.PromptScored p -> {
                }
                case StepEventPump.Finished f when f.reason() == FinishReason.CANCELLED && cancelRequested -> {
                    usage = f.usage();
                    end("cancelled", null);
                    return;
                }
                case StepEventPump.Finished f when f.reason() == FinishReason.CANCELLED -> {
                    String why = shuttingDown.get();
                    usage = f.usage();
                    unavailable = why != null;   // a shutdown or an unload: 503, as on chat
                    end("failed", error("server_error", why != null ? why : "the request was cancelled before it finished"));
                    return;
                }
                case StepEventPump.Finished f -> {
                    usage = f.usage();
                    finishReason = split == null ? Exchange.finishReason(f.reason())
                            : split.finishReason(Exchange.finishReason(f.reason()));
                    finished = true;
                }
                case StepEventPump.Failed x -> {
                    GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: failed: {1}", requestId,
                            x.error().getMessage());
                    end("failed", error("server_error", "generation failed: " + x.error().getMessage()));
                    return;
                }
            }
        }
        if (finished && !(rq.stream && pump.awaitWritable())) {
            push("", true);
            end("length".equals(finishReason) ? "incomplete" : "completed", null);
        }
    }

    private static ObjectNode error(String code, String message) {
        return ResponsesRequest.NODES.objectNode().put("code", code).put("message", message);
    }

    private boolean ended;
    private boolean unavailable;   // the failure is the server's or model's going away (503), not a fault (500)

    /** Closes the output, stores the response when asked to, then writes the last event or the object. */
    private void end(String status, ObjectNode error) {
        if (ended) {
            return;
        }
        ended = true;
        pump.done();
        if (error != null) {
            pump.cancelAll();
        }
        close("completed".equals(status) ? "completed" : "incomplete");
        if (output.isEmpty() && error == null && !"cancelled".equals(status)) {   // always one message, as OpenAI's
            content(pendingSpace.isEmpty() ? "" : pendingSpace.toString());
            if (open == Open.NONE) {
                openMessage();
            }
            close();
        }
        ObjectNode r = object(status, error);
        Future<Void> stored = rq.store && !discard ? persist.store(status, r, conversation()) : Future.succeededFuture();
        stored.onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: the response was not stored: {1}",
                        requestId, ar.cause().getMessage());
            }
            if (response == null) {
                release();
                return;
            }
            Future<Void> written;
            if (rq.stream) {
                String type = switch (status) {
                    case "completed" -> "response.completed";
                    case "incomplete" -> "response.incomplete";
                    default -> "response.failed";
                };
                event(type, ResponsesRequest.NODES.objectNode().set("response", r));
                written = response.end();
                // the pump's stall timer is off now: a client that stops reading at the very end is dropped
                long timer = context.owner().setTimer(stallTimeout.toMillis(), t -> response.reset());
                written = written.andThen(done -> context.owner().cancelTimer(timer));
            } else if (error != null) {
                int code = unavailable ? 503 : 500;
                written = response.setStatusCode(code).putHeader("Content-Type", "application/json").end(SseChunks.json(
                        io.nereid.openapi.ErrorResponse.of(error.get("message").asText(), "server_error", null,
                                code == 503 ? "shutdown" : null)));
            } else {
                written = response.setStatusCode(200).putHeader("Content-Type", "application/json").end(SseChunks.json(r));
            }
            StepEventPump.whenWritten(written, this::release);
        });
    }

    @Override
    public void disconnected() {
        GatewayServer.LOG.log(System.Logger.Level.INFO, "request {0}: client disconnected; cancelled", requestId);
        ended = true;
        release();
    }

    @Override
    public void stalled() {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: client read nothing for the stall timeout;"
                + " cancelled and connection closed", requestId);
        ended = true;
        release();
        response.reset();
    }

    private void release() {
        if (!released) {
            released = true;
            onDone.run();
            over.tryComplete();
        }
    }

    /** Completes once the response ended (stored, when it is stored) and its in-flight count was released. */
    Future<Void> over() {
        return over.future();
    }
}
