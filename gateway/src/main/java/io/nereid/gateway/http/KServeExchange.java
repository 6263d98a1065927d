package io.nereid.gateway.http;

import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenSink;
import io.nereid.gateway.http.KServeRoutes.Shape;
import io.nereid.gateway.http.StepEventPump.Event;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One admitted KServe v2 request over HTTP: {@code /infer} (output tensors, JSON or binary),
 * {@code /generate} (one JSON object) or {@code /generate_stream} (server-sent events, one per
 * engine step with the text it added: Triton's decoupled responses). Without
 * {@code exclude_input_in_output} a whole text_output starts with the prompt, as Triton's
 * TensorRT-LLM and vLLM backends answer; streamed deltas never repeat it. Threads: the
 * connection's context, but {@link #sink}, which the engine thread calls through the pump.
 */
final class KServeExchange implements StepEventPump.Receiver {

    private final HttpServerResponse response;
    private final Shape shape;
    private final KServeInputs in;
    private final List<String> prompts;
    private final String model;
    private final InferenceStats stats;
    private final long start;
    private final Runnable onDone;
    private final String requestId;
    private final StepEventPump pump;
    private final KServeOutput out;
    private int finished;
    private int events;
    private boolean released;

    KServeExchange(Context context, HttpServerResponse response, Shape shape, KServeInputs in, List<String> prompts,
            String model, ServingMetrics metrics, InferenceStats stats, long start, Runnable onDone, String requestId,
            Duration stallTimeout) {
        this.response = response;
        this.shape = shape;
        this.in = in;
        this.prompts = prompts;
        this.model = model;
        this.stats = stats;
        this.start = start;
        this.onDone = onDone;
        this.requestId = requestId;
        this.pump = new StepEventPump(context, streaming() ? response : null, prompts.size(), 1, metrics, stallTimeout);
        this.out = new KServeOutput(in);
    }

    private boolean streaming() {
        return shape instanceof Shape.GenerateStream;
    }

    TokenSink sink(int k) {
        return pump.sink(k);
    }

    void abandon(List<RequestHandle> admitted) {
        pump.abandon(admitted);
    }

    void start(List<RequestHandle> admitted) {
        if (streaming()) {
            response.setStatusCode(200).setChunked(true).putHeader("Content-Type", "text/event-stream; charset=utf-8")
                    .putHeader("Cache-Control", "no-cache");
        }
        pump.start(admitted, this, response);
    }

    @Override
    public void deliver(List<Event> batch) {
        for (Event e : batch) {
            switch (e) {
                case StepEventPump.Delta d -> {
                    out.add(d);
                    if (shape instanceof Shape.GenerateStream s && s.deltas()) {
                        // one response per engine step, as Triton's decoupled backends send them
                        write(event(out.takeDelta(d.choice()), d.choice(), true));
                    }
                }
                case StepEventPump.PromptScored p -> {
                }
                case StepEventPump.Finished f when f.reason() == FinishReason.DEADLINE -> {
                    terminate(504, "the request's timeout expired before it finished");
                    return;
                }
                case StepEventPump.Finished f when f.reason() == FinishReason.CANCELLED -> {
                    terminate(503, "the request was cancelled before it finished (the server is shutting down)");
                    return;
                }
                case StepEventPump.Finished f -> {
                    finished++;
                    stats.queued(f.usage().queueNanos());
                }
                case StepEventPump.Failed x -> {
                    fail(x.error());
                    return;
                }
            }
        }
        if (!(streaming() && pump.awaitWritable()) && finished == prompts.size()) {
            complete();
        }
    }

    private void write(Map<String, Object> event) {
        events++;
        response.write("data: " + SseChunks.json(event) + "\n\n");
    }

    /**
     * One generate response object: {@code delta}, prompt {@code k}'s text, with its log-probs (those
     * not sent yet when {@code deltaLogprobs}, else all) and their running sum.
     */
    private Map<String, Object> event(String delta, int k, boolean deltaLogprobs) {
        Map<String, Object> m = new LinkedHashMap<>();
        String id = switch (shape) {
            case Shape.Generate g -> g.id();
            case Shape.GenerateStream g -> g.id();
            case Shape.Infer i -> i.id();
        };
        if (id != null) {
            m.put("id", id);
        }
        m.put("model_name", model);
        m.put("model_version", KServeRoutes.VERSION);
        m.put("text_output", delta);
        if (in.returnLogProbs()) {
            KServeOutput.LogProbs lp = out.logProbs(k, k + 1, deltaLogprobs);
            m.put("cum_log_probs", lp.cum()[0]);
            m.put("output_log_probs", lp.rows());
        }
        return m;
    }

    private void complete() {
        pump.done();
        stats.succeeded(prompts.size(), System.nanoTime() - start);
        Future<Void> ended = switch (shape) {
            case Shape.GenerateStream s -> {
                if (!s.deltas()) {
                    write(event(out.whole(0), 0, false));
                } else if (events == 0) {
                    write(event("", 0, true));   // nothing was generated: still one response
                }
                yield response.end();
            }
            case Shape.Generate g -> response.setStatusCode(200).putHeader("Content-Type", "application/json")
                    .end(SseChunks.json(event(out.whole(0), 0, false)));
            case Shape.Infer i -> inferResponse(i);
        };
        StepEventPump.whenWritten(ended, this::release);
    }

    /** The output tensors: text_output shaped as text_input was, log-probs with return_log_probs. */
    private Future<Void> inferResponse(Shape.Infer shape) {
        List<String> texts = new ArrayList<>();
        for (int k = 0; k < out.prompts(); k++) {
            texts.add(out.whole(k));
        }
        KServeOutput.LogProbs lp = out.logProbs(0, out.prompts(), false);
        Map<String, Boolean> wanted = new LinkedHashMap<>(shape.outputs());
        if (wanted.isEmpty()) {
            wanted.put("text_output", shape.binaryByDefault());
            if (in.returnLogProbs()) {
                wanted.put("cum_log_probs", shape.binaryByDefault());
                wanted.put("output_log_probs", shape.binaryByDefault());
            }
        }
        List<Map<String, Object>> outputs = new ArrayList<>();
        java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();
        for (Map.Entry<String, Boolean> o : wanted.entrySet()) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("name", o.getKey());
            Object data;
            byte[] bytes;
            switch (o.getKey()) {
                case "text_output" -> {
                    t.put("datatype", "BYTES");
                    t.put("shape", shape.shape());
                    data = texts;
                    bytes = o.getValue() ? KServeRoutes.TensorData.bytes(texts) : null;
                }
                case "cum_log_probs" -> {
                    t.put("datatype", "FP32");
                    t.put("shape", List.of((long) out.prompts()));
                    data = lp.cum();
                    bytes = o.getValue() ? KServeRoutes.TensorData.fp32(lp.cum()) : null;
                }
                default -> {   // output_log_probs: [prompts, longest output], shorter rows padded with 0
                    t.put("datatype", "FP32");
                    t.put("shape", List.of((long) out.prompts(), (long) lp.width()));
                    data = lp.rows();
                    bytes = o.getValue() ? KServeRoutes.TensorData.fp32(lp.rows()) : null;
                }
            }
            if (bytes != null) {
                t.put("parameters", Map.of("binary_data_size", bytes.length));
                binary.writeBytes(bytes);
            } else {
                t.put("data", data);
            }
            outputs.add(t);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", model);
        body.put("model_version", KServeRoutes.VERSION);
        if (shape.id() != null) {
            body.put("id", shape.id());
        }
        body.put("outputs", outputs);
        byte[] json = SseChunks.json(body).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        response.setStatusCode(200);
        if (binary.size() == 0) {
            return response.putHeader("Content-Type", "application/json").end(Buffer.buffer(json));
        }
        return response.putHeader("Content-Type", "application/octet-stream")
                .putHeader("Inference-Header-Content-Length", Integer.toString(json.length))
                .end(Buffer.buffer(json).appendBytes(binary.toByteArray()));
    }

    private void fail(EngineException error) {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: failed: {1}", requestId, error.getMessage());
        terminate(500, "generation failed: " + error.getMessage());
    }

    /** Ends with an error: an in-band event after a stream started, else {@code status}. Cancels the rest. */
    private void terminate(int status, String message) {
        pump.done();
        pump.cancelAll();
        stats.failed(System.nanoTime() - start);
        Future<Void> ended;
        if (streaming()) {
            ended = response.end("data: " + SseChunks.json(Map.of("error", message)) + "\n\n");
        } else {
            ended = response.setStatusCode(status).putHeader("Content-Type", "application/json")
                    .end(SseChunks.json(Map.of("error", message)));
        }
        StepEventPump.whenWritten(ended, this::release);
    }

    @Override
    public void disconnected() {
        GatewayServer.LOG.log(System.Logger.Level.INFO, "request {0}: client disconnected; cancelled", requestId);
        stats.failed(System.nanoTime() - start);
        release();
    }

    @Override
    public void stalled() {
        GatewayServer.LOG.log(System.Logger.Level.WARNING, "request {0}: client read nothing for the stall timeout;"
                + " cancelled and connection closed", requestId);
        stats.failed(System.nanoTime() - start);
        release();
        response.reset();
    }

    private void release() {
        if (!released) {
            released = true;
            onDone.run();
        }
    }
}
