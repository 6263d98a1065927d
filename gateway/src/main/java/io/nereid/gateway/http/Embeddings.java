package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.nereid.engine.api.EmbeddingSpec;
import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.vertx.core.Context;
import io.vertx.core.http.HttpServerResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code POST /v1/embeddings}: the request read ({@link #parse}) and its answer ({@link Exchange}).
 * Each input is one engine request that computes its prompt only and pools its final hidden states
 * as the model defines ({@link EmbeddingSpec}); the vectors are normalised when the model says so,
 * cut to {@code dimensions} (Matryoshka models only) and written as floats or base64.
 */
final class Embeddings {

    /** OpenAI's limit on inputs per request. */
    static final int MAX_INPUTS = 2048;
    static final Set<String> FIELDS = Set.of("model", "input", "encoding_format", "dimensions", "user");

    /**
     * A parsed request: either texts (tokenized on the worker pool) or token-id prompts.
     *
     * @param base64     {@code encoding_format: base64}
     * @param dimensions the entries wanted, or 0 for all
     */
    record Request(String model, List<String> texts, List<int[]> tokens, boolean base64, int dimensions,
            List<String> ignored) {
        int count() {
            return texts != null ? texts.size() : tokens.size();
        }
    }

    private Embeddings() {
    }

    /** @throws ApiException 400 naming the field */
    static Request parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiException.invalid(null, "the request body must be a JSON object");
        }
        List<String> ignored = new ArrayList<>();
        body.fieldNames().forEachRemaining(f -> {
            if (!FIELDS.contains(f)) {
                ignored.add(f);
            }
        });
        JsonNode m = body.get("model");
        if (m == null || !m.isTextual()) {
            throw ApiException.invalid("model", "'model' is required and must be a string");
        }
        JsonNode fmt = body.get("encoding_format");
        boolean base64 = false;
        if (fmt != null && !fmt.isNull()) {
            if (!fmt.isTextual() || !Set.of("float", "base64").contains(fmt.asText())) {
                throw ApiException.invalid("encoding_format", "encoding_format must be float or base64");
            }
            base64 = fmt.asText().equals("base64");
        }
        int dimensions = 0;
        JsonNode dims = body.get("dimensions");
        if (dims != null && !dims.isNull()) {
            if (!dims.canConvertToInt() || !dims.isIntegralNumber() || dims.asInt() < 1) {
                throw ApiException.invalid("dimensions", "dimensions must be a positive integer");
            }
            dimensions = dims.asInt();
        }
        JsonNode u = body.get("user");
        if (u != null && !u.isNull() && !u.isTextual()) {
            throw ApiException.invalid("user", "'user' must be a string");
        }
        JsonNode in = body.get("input");
        String shapes = "'input' must be a string, an array of strings, an array of token ids, or an array of"
                + " token-id arrays (at most " + MAX_INPUTS + " inputs)";
        if (in == null || in.isNull()) {
            throw ApiException.invalid("input", "'input' is required");
        }
        if (in.isTextual()) {
            return new Request(m.asText(), List.of(text(in, -1)), null, base64, dimensions, ignored);
        }
        if (!in.isArray() || in.isEmpty() || in.size() > MAX_INPUTS && !in.get(0).isIntegralNumber()) {
            throw ApiException.invalid("input", shapes);
        }
        JsonNode first = in.get(0);
        if (first.isIntegralNumber()) {
            return new Request(m.asText(), null, List.of(ids(in, -1)), base64, dimensions, ignored);
        }
        List<String> texts = new ArrayList<>();
        List<int[]> tokens = new ArrayList<>();
        for (int k = 0; k < in.size(); k++) {
            JsonNode x = in.get(k);
            if (first.isTextual() && x.isTextual()) {
                texts.add(text(x, k));
            } else if (first.isArray() && x.isArray()) {
                tokens.add(ids(x, k));
            } else {
                throw ApiException.invalid("input[" + k + "]", shapes + "; input[" + k + "] differs from input[0]");
            }
        }
        return first.isTextual() ? new Request(m.asText(), texts, null, base64, dimensions, ignored)
                : new Request(m.asText(), null, tokens, base64, dimensions, ignored);
    }

    private static String text(JsonNode x, int k) {
        if (x.asText().isEmpty()) {
            throw ApiException.invalid(k < 0 ? "input" : "input[" + k + "]", (k < 0 ? "input" : "input[" + k + "]")
                    + " is empty");
        }
        return x.asText();
    }

    private static int[] ids(JsonNode arr, int k) {
        String at = k < 0 ? "input" : "input[" + k + "]";
        if (arr.isEmpty()) {
            throw ApiException.invalid(at, at + " is an empty token array");
        }
        int[] out = new int[arr.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode t = arr.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0) {
                throw ApiException.invalid(at, at + "[" + i + "] is not a token id");
            }
            out[i] = t.asInt();
        }
        return out;
    }

    /** The model's vector as served: normalised (when the model says so), cut to {@code dimensions} (re-normalised). */
    static float[] finish(float[] v, EmbeddingSpec spec, int dimensions) {
        float[] out = dimensions > 0 && dimensions < v.length ? java.util.Arrays.copyOf(v, dimensions) : v.clone();
        if (spec.normalize()) {
            double sum = 0;
            for (float x : out) {
                sum += (double) x * x;
            }
            double norm = Math.max(Math.sqrt(sum), 1e-12);
            for (int i = 0; i < out.length; i++) {
                out[i] = (float) (out[i] / norm);
            }
        }
        return out;
    }

    /** OpenAI's base64 form: the float32 values little-endian. */
    static String base64(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return Base64.getEncoder().encodeToString(b.array());
    }

    /**
     * The response of one admitted embeddings request: collects each input's vector (engine thread,
     * handed to the context), then writes the list once every input finished. Context only but
     * {@link #sink}'s callbacks.
     */
    static final class Exchange implements AdmissionService.Responder {
        private final Context context;
        private final HttpServerResponse response;
        private final Request request;
        private final EmbeddingSpec spec;
        private final String model;
        private final Runnable onDone;
        private final ServingMetrics metrics;
        private final float[][] vectors;
        private final int[] promptTokens;
        private List<RequestHandle> handles = List.of();
        private int finished;
        private boolean ended;

        Exchange(Context context, HttpServerResponse response, Request request, EmbeddingSpec spec, String model,
                ServingMetrics metrics, Runnable onDone) {
            this.metrics = metrics;
            this.context = context;
            this.response = response;
            this.request = request;
            this.spec = spec;
            this.model = model;
            this.onDone = onDone;
            this.vectors = new float[request.count()][];
            this.promptTokens = new int[request.count()];
        }

        @Override
        public TokenSink sink(int k) {
            return new TokenSink() {
                private float[] vector;

                @Override
                public void onDelta(int choice, String text, int[] tokenIds, List<TokenLogprob> logprobs) {
                }

                @Override
                public void onEmbedding(float[] v) {
                    vector = v;
                }

                @Override
                public void onFinish(int choice, FinishReason reason, Object stopReason, Usage usage) {
                    metrics.finished(reason, usage);   // the request counters and latency histograms, as for completions
                    float[] v = vector;
                    context.runOnContext(x -> finished(k, v, reason, usage));
                }

                @Override
                public void onError(int choice, EngineException error) {
                    context.runOnContext(x -> fail(500, "server_error", "embedding failed: " + error.getMessage()));
                }
            };
        }

        @Override
        public void abandon(List<RequestHandle> admitted) {
            ended = true;
            admitted.forEach(RequestHandle::cancel);
        }

        @Override
        public void start(List<RequestHandle> admitted) {
            handles = List.copyOf(admitted);
            response.closeHandler(v -> gone());
            if (response.closed()) {   // gone while the inputs were tokenized: no close event will come
                gone();
            }
        }

        private void gone() {
            if (!ended) {
                ended = true;
                handles.forEach(RequestHandle::cancel);
                onDone.run();
            }
        }

        private void finished(int k, float[] v, FinishReason reason, Usage usage) {
            if (ended) {
                return;
            }
            if (v == null) {
                fail(503, "service_unavailable", reason == FinishReason.CANCELLED
                        ? "the request was cancelled before it finished (the server is shutting down, or the model"
                                + " is being unloaded)"
                        : "input " + k + " ended (" + reason + ") before its embedding was computed");
                return;
            }
            vectors[k] = finish(v, spec, request.dimensions());
            promptTokens[k] = usage.promptTokens();
            if (++finished == vectors.length) {
                write();
            }
        }

        private void write() {
            ended = true;
            List<Map<String, Object>> data = new ArrayList<>();
            int tokens = 0;
            for (int k = 0; k < vectors.length; k++) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("object", "embedding");
                e.put("embedding", request.base64() ? base64(vectors[k]) : vectors[k]);
                e.put("index", k);
                data.add(e);
                tokens += promptTokens[k];
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("object", "list");
            body.put("data", data);
            body.put("model", model);
            body.put("usage", Map.of("prompt_tokens", tokens, "total_tokens", tokens));
            StepEventPump.whenWritten(response.setStatusCode(200).putHeader("Content-Type", "application/json")
                    .end(SseChunks.json(body)), onDone);
        }

        private void fail(int status, String type, String message) {
            if (ended) {
                return;
            }
            ended = true;
            handles.forEach(RequestHandle::cancel);
            GatewayServer.error(response, new ApiException(status, type, null, null, message, 0));
            onDone.run();
        }
    }
}
