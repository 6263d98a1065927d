package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.SamplingParams;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The KServe v2 (Open Inference Protocol) front end over HTTP, with Triton's extensions, on the
 * same port as the OpenAI routes:
 *
 * <pre>
 *   GET  /v2                                   server metadata (name, version, extensions)
 *   GET  /v2/health/live | /v2/health/ready    200 or 503, no body (open without an API key)
 *   GET  /v2/models/{m}[/versions/{v}]         model metadata: inputs and outputs, datatypes, shapes
 *   GET  /v2/models/{m}[/versions/{v}]/ready   200, 503 while not ready, 404 for another model
 *   GET  /v2/models/{m}[/versions/{v}]/config  Triton's model configuration (decoupled)
 *   GET  /v2/models[/{m}[/versions/{v}]]/stats Triton's statistics extension
 *   POST /v2/models/{m}[/versions/{v}]/infer   tensors in, tensors out (JSON or binary tensor data)
 *   POST /v2/models/{m}[/versions/{v}]/generate         Triton's generate extension: one JSON object
 *   POST /v2/models/{m}[/versions/{v}]/generate_stream  the same as server-sent events, text deltas
 * </pre>
 *
 * Requests take the inputs Triton's TensorRT-LLM ensemble takes ({@link KServeInputs}); errors are
 * {@code {"error": "message"}} before the first byte (400 for a bad request, 404 for an unknown
 * model or version, 429 for a full queue, 503 while draining), and a {@code data: {"error": ...}}
 * event after a stream started. The model has one version, "1". Admission is the protocol-neutral
 * {@link AdmissionService}; streaming is paced by a {@link StepEventPump} as on the OpenAI routes.
 * Threads: handlers run on the event loop; tokenizing runs on the worker pool.
 */
final class KServeRoutes {

    static final String VERSION = "1";
    static final List<String> EXTENSIONS = List.of("binary_tensor_data", "parameters", "statistics",
            "model_configuration", "model_repository", "generate");

    final Vertx vertx;
    final ModelService model;
    final GatewayOptions options;
    final ServingMetrics metrics;
    final AdmissionService admission;
    final AtomicInteger inflight;
    final BooleanSupplier ready;
    final InferenceStats stats = new InferenceStats();

    /**
     * @param ready whether the server is ready (not draining, engine making progress)
     */
    KServeRoutes(Vertx vertx, ModelService model, GatewayOptions options, ServingMetrics metrics,
            AdmissionService admission, AtomicInteger inflight, BooleanSupplier ready) {
        this.vertx = vertx;
        this.model = model;
        this.options = options;
        this.metrics = metrics;
        this.admission = admission;
        this.inflight = inflight;
        this.ready = ready;
    }

    /**
     * Adds the routes (after the body handler); a {@code /v2/models/{m}/...} request goes to model
     * {@code m}'s handlers, the repository extension acts on {@code models}.
     *
     * @param live  whether every loaded model's engine runs
     * @param ready whether the server is ready (not draining, every loaded model ready)
     */
    static void register(Router r, ServedModels models, BooleanSupplier live, BooleanSupplier ready) {
        r.get("/v2").handler(ctx -> json(ctx.response(), 200, serverMetadata()));
        r.get("/v2/health/live").handler(ctx -> status(ctx, live.getAsBoolean()));
        r.get("/v2/health/ready").handler(ctx -> status(ctx, ready.getAsBoolean()));
        r.get("/v2/models/stats").handler(ctx -> json(ctx.response(), 200, Map.of("model_stats",
                models.ready().stream().map(s -> s.kserve.statisticsEntry()).toList())));
        for (String base : List.of("/v2/models/:model", "/v2/models/:model/versions/:version")) {
            r.get(base).handler(ctx -> on(ctx, models, k -> json(ctx.response(), 200, k.modelMetadata())));
            r.get(base + "/ready").handler(ctx -> on(ctx, models, k -> status(ctx, k.ready.getAsBoolean())));
            r.get(base + "/config").handler(ctx -> on(ctx, models, k -> json(ctx.response(), 200, k.config())));
            r.get(base + "/stats").handler(ctx -> on(ctx, models, k -> json(ctx.response(), 200, k.statistics())));
            r.post(base + "/infer").handler(ctx -> on(ctx, models, k -> k.infer(ctx)));
            r.post(base + "/generate").handler(ctx -> on(ctx, models, k -> k.generate(ctx, false)));
            r.post(base + "/generate_stream").handler(ctx -> on(ctx, models, k -> k.generate(ctx, true)));
        }
        r.post("/v2/repository/index").handler(ctx -> {
            boolean readyOnly;
            try {
                readyOnly = repositoryRequest(ctx, "ready");
            } catch (RuntimeException e) {
                fail(ctx, e);
                return;
            }
            ctx.vertx().executeBlocking(() -> models.index(readyOnly), false).onComplete(ar -> {   // reads the folder
                if (ar.failed()) {
                    fail(ctx, ar.cause());
                } else {
                    json(ctx.response(), 200, ar.result().stream().map(KServeRoutes::indexEntry).toList());
                }
            });
        });
        r.post("/v2/repository/models/:model/load").handler(ctx -> control(ctx, () -> models.load(ctx.pathParam("model"))));
        r.post("/v2/repository/models/:model/unload").handler(ctx -> control(ctx,
                () -> models.unload(ctx.pathParam("model"))));
    }

    /** Triton's index entry: name, version, state and (when there is one) reason. */
    static Map<String, Object> indexEntry(ServedModels.Entry e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", e.name());
        m.put("version", VERSION);
        m.put("state", e.state().name());
        m.put("reason", e.reason());
        return m;
    }

    /**
     * A repository request's body (none, or an object): {@code flag}'s value for the index, and no
     * {@code parameters} (Triton's load-time config and file overrides, which Nereid does not take).
     */
    private static boolean repositoryRequest(RoutingContext ctx, String flag) {
        Buffer b = ctx.body().buffer();
        if (b == null || b.length() == 0) {
            return false;
        }
        JsonNode body = body(b);
        if (!body.isObject()) {
            throw KServeInputs.bad("the request body must be a JSON object");
        }
        boolean value = false;
        for (var it = body.properties().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (flag != null && e.getKey().equals(flag)) {
                if (!e.getValue().isBoolean()) {
                    throw KServeInputs.bad("'" + flag + "' must be a boolean");
                }
                value = e.getValue().booleanValue();
            } else if (e.getKey().equals("parameters") && e.getValue().isObject() && e.getValue().isEmpty()) {
                continue;
            } else if (e.getKey().equals("parameters")) {
                throw KServeInputs.bad("load and unload parameters (" + String.join(", ", names(e.getValue()))
                        + ") are not supported: a model's settings come from its folder's nereid.json");
            } else {
                throw KServeInputs.bad("unknown field '" + e.getKey() + "'");
            }
        }
        return value;
    }

    private static List<String> names(JsonNode object) {
        List<String> out = new ArrayList<>();
        object.fieldNames().forEachRemaining(out::add);
        return out;
    }

    /** A load or unload: 200 with an empty body once it is done (a load) or under way (an unload), else the error. */
    private static void control(RoutingContext ctx, java.util.function.Supplier<java.util.concurrent.CompletableFuture<Void>> action) {
        try {
            repositoryRequest(ctx, null);
        } catch (RuntimeException e) {
            fail(ctx, e);
            return;
        }
        io.vertx.core.Future.fromCompletionStage(action.get(), ctx.vertx().getOrCreateContext()).onComplete(ar -> {
            if (ar.succeeded()) {
                ctx.response().setStatusCode(200).end();
            } else {
                fail(ctx, unwrap(ar.cause()));
            }
        });
    }

    static Throwable unwrap(Throwable t) {
        return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    /** Runs {@code then} with model {@code m}'s handlers, or answers 404 for a model that is not served. */
    private static void on(RoutingContext ctx, ServedModels models, java.util.function.Consumer<KServeRoutes> then) {
        ServedModel s = models.find(ctx.pathParam("model"));
        if (s == null) {
            fail(ctx, unknownModel(ctx.pathParam("model")));
        } else {
            s.kserve.withModel(ctx, () -> then.accept(s.kserve));
        }
    }

    static ApiException unknownModel(String name) {
        return new ApiException(404, "not_found", "model", null, "unknown model '" + name + "'", 0);
    }

    // ---- metadata ----------------------------------------------------------------------------

    static Map<String, Object> serverMetadata() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", "nereid");
        m.put("version", serverVersion());
        m.put("extensions", EXTENSIONS);
        return m;
    }

    static String serverVersion() {
        String v = KServeRoutes.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    /** One tensor's description: its datatype and shape ([-1]: any number of elements). */
    record Tensor(String name, String datatype, boolean optional) {
    }

    static final List<Tensor> INPUT_TENSORS = List.of(new Tensor("text_input", "BYTES", false),
            new Tensor("max_tokens", "INT32", true), new Tensor("temperature", "FP32", true),
            new Tensor("top_k", "INT32", true), new Tensor("top_p", "FP32", true), new Tensor("min_p", "FP32", true),
            new Tensor("repetition_penalty", "FP32", true), new Tensor("presence_penalty", "FP32", true),
            new Tensor("frequency_penalty", "FP32", true), new Tensor("random_seed", "UINT64", true),
            new Tensor("min_length", "INT32", true), new Tensor("stop_words", "BYTES", true),
            new Tensor("bad_words", "BYTES", true), new Tensor("end_id", "INT32", true),
            new Tensor("pad_id", "INT32", true), new Tensor("beam_width", "INT32", true),
            new Tensor("length_penalty", "FP32", true), new Tensor("ignore_eos", "BOOL", true),
            new Tensor("stream", "BOOL", true), new Tensor("exclude_input_in_output", "BOOL", true),
            new Tensor("return_log_probs", "BOOL", true), new Tensor("return_context_logits", "BOOL", true),
            new Tensor("return_generation_logits", "BOOL", true));
    static final List<Tensor> OUTPUT_TENSORS = List.of(new Tensor("text_output", "BYTES", false),
            new Tensor("cum_log_probs", "FP32", true), new Tensor("output_log_probs", "FP32", true));

    Map<String, Object> modelMetadata() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", model.name());
        m.put("versions", List.of(VERSION));
        m.put("platform", "nereid");
        m.put("inputs", INPUT_TENSORS.stream().map(t -> Map.of("name", t.name(), "datatype", t.datatype(),
                "shape", List.of(-1))).toList());
        m.put("outputs", OUTPUT_TENSORS.stream().map(t -> Map.of("name", t.name(), "datatype", t.datatype(),
                "shape", List.of(-1))).toList());
        return m;
    }

    /** Triton's model configuration, in its JSON form (model_config.proto). */
    Map<String, Object> config() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", model.name());
        m.put("platform", "nereid");
        m.put("backend", "nereid");
        m.put("max_batch_size", 0);
        m.put("input", INPUT_TENSORS.stream().map(t -> Map.of("name", t.name(), "data_type", configType(t.datatype()),
                "dims", List.of(-1), "optional", t.optional())).toList());
        m.put("output", OUTPUT_TENSORS.stream().map(t -> Map.of("name", t.name(), "data_type", configType(t.datatype()),
                "dims", List.of(-1))).toList());
        m.put("model_transaction_policy", Map.of("decoupled", true));
        m.put("parameters", Map.of("max_model_len", Map.of("string_value", Integer.toString(model.maxModelLen()))));
        return m;
    }

    static String configType(String datatype) {
        return "TYPE_" + (datatype.equals("BYTES") ? "STRING" : datatype);
    }

    Map<String, Object> statistics() {
        return Map.of("model_stats", List.of(statisticsEntry()));
    }

    Map<String, Object> statisticsEntry() {
        return stats.json(model.name(), VERSION, model.engine().stats().iterations());
    }

    // ---- infer ---------------------------------------------------------------------------------

    /** {@code POST /infer}: tensors (JSON data, or binary tensor data after a JSON header) in and out. */
    void infer(RoutingContext ctx) {
        TensorRequest t;
        KServeInputs in;
        try {
            admission.checkAvailable();
            t = TensorRequest.read(ctx);
            in = KServeInputs.parse(t.values());
            if (Boolean.TRUE.equals(in.stream())) {
                throw KServeInputs.bad("stream true needs a streaming endpoint: /generate_stream, or gRPC ModelStreamInfer");
            }
            for (String name : t.outputs().keySet()) {
                checkOutput(name, in);
            }
        } catch (RuntimeException e) {
            fail(ctx, e);
            return;
        }
        admit(ctx, in, new Shape.Infer(t.id(), t.textShape(), t.outputs(), t.binaryOutput()));
    }

    /** {@code POST /generate} and {@code /generate_stream}: a JSON object whose keys are inputs, and parameters. */
    void generate(RoutingContext ctx, boolean streamEndpoint) {
        KServeInputs in;
        String id;
        try {
            admission.checkAvailable();
            JsonNode body = body(ctx.body().buffer());
            if (!body.isObject()) {
                throw KServeInputs.bad("the request body must be a JSON object");
            }
            Map<String, List<Object>> values = new LinkedHashMap<>();
            id = body.hasNonNull("id") ? body.get("id").asText() : null;
            for (var it = body.properties().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (e.getKey().equals("id")) {
                    continue;
                }
                if (e.getKey().equals("parameters")) {
                    if (!e.getValue().isObject()) {
                        throw KServeInputs.bad("'parameters' must be a JSON object");
                    }
                    for (var p = e.getValue().properties().iterator(); p.hasNext(); ) {
                        var q = p.next();
                        put(values, q.getKey(), flatten(q.getKey(), q.getValue()));
                    }
                } else {
                    put(values, e.getKey(), flatten(e.getKey(), e.getValue()));
                }
            }
            in = KServeInputs.parse(values);
            if (in.prompts().size() != 1) {
                throw KServeInputs.bad("text_input: the generate endpoints take one prompt, got " + in.prompts().size()
                        + " (use /infer for a batch)");
            }
            if (!streamEndpoint && Boolean.TRUE.equals(in.stream())) {
                throw KServeInputs.bad("stream true needs /generate_stream");
            }
        } catch (RuntimeException e) {
            fail(ctx, e);
            return;
        }
        boolean deltas = streamEndpoint && !Boolean.FALSE.equals(in.stream());
        admit(ctx, in, streamEndpoint ? new Shape.GenerateStream(id, deltas) : new Shape.Generate(id));
    }

    private static void put(Map<String, List<Object>> values, String name, List<Object> v) {
        if (values.put(name, v) != null) {
            throw KServeInputs.bad("input '" + name + "' is given twice (as a key and in parameters)");
        }
    }

    /** A JSON value as a flat list of Strings, Numbers and Booleans (arrays in row-major order). */
    static List<Object> flatten(String name, JsonNode v) {
        List<Object> out = new ArrayList<>();
        flatten(name, v, out);
        return out;
    }

    private static void flatten(String name, JsonNode v, List<Object> out) {
        if (v.isArray()) {
            for (JsonNode x : v) {
                flatten(name, x, out);
            }
        } else if (v.isTextual()) {
            out.add(v.asText());
        } else if (v.isBoolean()) {
            out.add(v.booleanValue());
        } else if (v.isIntegralNumber()) {
            out.add(v.longValue());
        } else if (v.isNumber()) {
            out.add(v.doubleValue());
        } else {
            throw KServeInputs.bad("input '" + name + "' has a value that is not a string, number or boolean: " + v);
        }
    }

    static JsonNode body(Buffer buffer) {
        try {
            return SseChunks.REQUEST_READER.readTree(buffer == null ? new byte[0] : buffer.getBytes());
        } catch (java.io.IOException e) {
            throw KServeInputs.bad("the request body is not valid JSON: " + e.getMessage());
        }
    }

    // ---- admission and response ------------------------------------------------------------------

    /** How the response is written. */
    sealed interface Shape {
        /** {@code /infer}: text_output shaped as text_input was; binary outputs named in {@code binary}. */
        record Infer(String id, List<Long> shape, Map<String, Boolean> outputs, boolean binaryByDefault) implements Shape {
        }

        record Generate(String id) implements Shape {
        }

        /** @param deltas one event per engine step (false: one event at the end, as a non-streaming model answers) */
        record GenerateStream(String id, boolean deltas) implements Shape {
        }
    }

    private record Prompt(String text, int[] tokens) {
    }

    private void admit(RoutingContext ctx, KServeInputs in, Shape shape) {
        HttpServerResponse resp = ctx.response();
        String requestId = ctx.get(GatewayServer.REQUEST_ID);
        String engineId = "kserve-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        long start = System.nanoTime();
        admission.admit(vertx.getOrCreateContext(), new AdmissionService.Plan<Prompt>() {
            private Map<Integer, Float> bans = Map.of();

            @Override
            public List<Prompt> prepare() {
                bans = badWords(in.badWords());
                return in.prompts().stream().map(p -> new Prompt(p, model.tokenize(p, true))).toList();
            }

            @Override
            public GenerationRequest request(int k, Prompt p) {
                return engineRequest(in, bans, in.prompts().size() > 1 ? engineId + "-" + k : engineId, p.tokens());
            }

            @Override
            public ApiException refused(int k, RuntimeException e) {
                return e instanceof RequestValidationException v ? KServeInputs.bad(v.getMessage())
                        : GatewayServer.mapFailure(e);
            }

            @Override
            public AdmissionService.Responder respond(List<Prompt> prompts) {
                KServeExchange x = new KServeExchange(vertx.getOrCreateContext(), resp, shape, in,
                        prompts.stream().map(Prompt::text).toList(), model.name(), metrics, stats, start,
                        inflight::decrementAndGet, requestId, options.clientStallTimeout());
                return AdmissionService.Responder.of(x::sink, x::abandon, admitted -> {
                    inflight.incrementAndGet();
                    x.start(admitted);
                });
            }
        }).onFailure(e -> {
            stats.failed(System.nanoTime() - start);
            fail(ctx, e);
        });
    }

    /** Worker pool: {@code bad_words} as logit biases that ban each word's one token. */
    Map<Integer, Float> badWords(List<String> words) {
        Map<Integer, Float> bans = new HashMap<>();
        for (String w : words) {
            int[] ids = model.tokenize(w, false);
            if (ids.length != 1) {
                throw KServeInputs.bad("bad_words: '" + w + "' is " + ids.length + " tokens; only words of one token"
                        + " can be banned");
            }
            bans.put(ids[0], -100f);
        }
        return bans;
    }

    /** The engine request for one prompt of {@code in}. */
    GenerationRequest engineRequest(KServeInputs in, Map<Integer, Float> bans, String id, int[] tokens) {
        SamplingParams s = in.sampling();
        if (!bans.isEmpty()) {
            s = new SamplingParams(s.temperature(), s.topK(), s.topP(), s.minP(), s.repetitionPenalty(),
                    s.presencePenalty(), s.frequencyPenalty(), bans, s.seed(), s.topLogprobs());
        }
        int ctxLen = model.maxModelLen();
        if ((long) tokens.length + in.maxTokens() > ctxLen) {
            throw KServeInputs.bad("this model's maximum context length is " + ctxLen + " tokens; the prompt has "
                    + tokens.length + " tokens and max_tokens asks for " + in.maxTokens() + " more");
        }
        try {
            GenerationRequest.Builder b = GenerationRequest.builder(id, tokens);
            if (in.timeoutMicros() > 0) {
                b.deadline(java.time.Instant.now().plusNanos(Math.min(in.timeoutMicros(), Long.MAX_VALUE / 1000) * 1000));
            }
            return b.sampling(s).stop(in.stop())
                    .stopTokenIds(in.endId() >= 0 ? new int[] {in.endId()} : new int[0]).maxTokens(in.maxTokens())
                    .minTokens(in.minTokens()).ignoreEos(in.ignoreEos()).logprobs(in.returnLogProbs()).build();
        } catch (RequestValidationException e) {
            throw KServeInputs.bad(e.getMessage());
        }
    }

    // ---- helpers -------------------------------------------------------------------------------

    void withModel(RoutingContext ctx, Runnable then) {
        String name = ctx.pathParam("model");
        String version = ctx.pathParam("version");
        if (!model.name().equals(name)) {
            fail(ctx, unknownModel(name));
        } else if (version != null && !version.equals(VERSION)) {
            fail(ctx, new ApiException(404, "not_found", "version", null, "unknown version '" + version + "' of model '"
                    + name + "' (it has version " + VERSION + ")", 0));
        } else {
            then.run();
        }
    }

    private static void status(RoutingContext ctx, boolean ok) {
        ctx.response().setStatusCode(ok ? 200 : 503).end();
    }

    static void json(HttpServerResponse resp, int status, Object body) {
        GatewayServer.json(resp, status, body);
    }

    /** KServe's error envelope: {@code {"error": "message"}} with the status (and Retry-After) of the failure. */
    static void fail(RoutingContext ctx, Throwable t) {
        ApiException e = GatewayServer.mapFailure(t);
        HttpServerResponse resp = ctx.response();
        if (resp.headWritten()) {
            resp.reset();
            return;
        }
        if (e.retryAfterSeconds() > 0) {
            resp.putHeader("Retry-After", Long.toString(e.retryAfterSeconds()));
        }
        json(resp, e.status(), Map.of("error", e.getMessage()));
    }

    /**
     * A parsed {@code /infer} request.
     *
     * @param values       input name to its elements
     * @param textShape    the shape text_input came with (text_output gets it)
     * @param outputs      the requested outputs and whether each is binary (empty: text_output, as JSON
     *                     unless {@code binaryOutput})
     * @param binaryOutput the request's {@code binary_data_output} parameter
     */
    record TensorRequest(String id, Map<String, List<Object>> values, List<Long> textShape, Map<String, Boolean> outputs,
            boolean binaryOutput) {

        static TensorRequest read(RoutingContext ctx) {
            Buffer body = ctx.body().buffer() == null ? Buffer.buffer() : ctx.body().buffer();
            String header = ctx.request().getHeader("Inference-Header-Content-Length");
            int jsonLength = body.length();
            if (header != null) {
                try {
                    jsonLength = Integer.parseInt(header.trim());
                } catch (NumberFormatException e) {
                    throw KServeInputs.bad("Inference-Header-Content-Length is not a number: " + header);
                }
                if (jsonLength < 0 || jsonLength > body.length()) {
                    throw KServeInputs.bad("Inference-Header-Content-Length " + jsonLength + " is outside the body of "
                            + body.length() + " bytes");
                }
            }
            JsonNode json = body(body.getBuffer(0, jsonLength));
            ByteBuffer binary = ByteBuffer.wrap(body.getBytes(jsonLength, body.length())).order(ByteOrder.LITTLE_ENDIAN);
            if (!json.isObject()) {
                throw KServeInputs.bad("the request body must be a JSON object");
            }
            JsonNode inputs = json.get("inputs");
            if (inputs == null || !inputs.isArray()) {
                throw KServeInputs.bad("'inputs' must be an array of tensors");
            }
            Map<String, List<Object>> values = new LinkedHashMap<>();
            List<Long> textShape = List.of(1L);
            for (JsonNode t : inputs) {
                Decoded d = tensor(t, binary);
                if (values.put(d.name(), d.values()) != null) {
                    throw KServeInputs.bad("input '" + d.name() + "' is given twice");
                }
                if (d.name().equals("text_input")) {
                    textShape = d.shape();
                }
            }
            if (binary.hasRemaining()) {
                throw KServeInputs.bad(binary.remaining() + " bytes of binary tensor data belong to no input");
            }
            JsonNode params = json.get("parameters");
            boolean binaryOutput = false;
            if (params != null) {
                if (!params.isObject()) {
                    throw KServeInputs.bad("'parameters' must be a JSON object");
                }
                for (var it = params.properties().iterator(); it.hasNext(); ) {
                    var e = it.next();
                    if (e.getKey().equals("binary_data_output")) {
                        binaryOutput = e.getValue().asBoolean();
                    } else if (values.put(e.getKey(), flatten(e.getKey(), e.getValue())) != null) {
                        throw KServeInputs.bad("'" + e.getKey() + "' is given as an input and as a parameter");
                    }
                }
            }
            Map<String, Boolean> outputs = new LinkedHashMap<>();
            JsonNode out = json.get("outputs");
            if (out != null) {
                if (!out.isArray()) {
                    throw KServeInputs.bad("'outputs' must be an array");
                }
                for (JsonNode o : out) {
                    if (!o.hasNonNull("name")) {
                        throw KServeInputs.bad("every requested output needs a 'name'");
                    }
                    JsonNode p = o.get("parameters");
                    outputs.put(o.get("name").asText(), p != null && p.has("binary_data") ? p.get("binary_data").asBoolean()
                            : binaryOutput);
                }
            }
            return new TensorRequest(json.hasNonNull("id") ? json.get("id").asText() : null, values, textShape, outputs,
                    binaryOutput);
        }

        private record Decoded(String name, List<Long> shape, List<Object> values) {
        }

        private static Decoded tensor(JsonNode t, ByteBuffer binary) {
            if (!t.isObject() || !t.hasNonNull("name") || !t.hasNonNull("datatype") || !t.has("shape")) {
                throw KServeInputs.bad("every input tensor needs 'name', 'datatype' and 'shape'");
            }
            String name = t.get("name").asText();
            String datatype = t.get("datatype").asText();
            List<Long> shape = new ArrayList<>();
            if (!t.get("shape").isArray()) {
                throw KServeInputs.bad("input '" + name + "': 'shape' must be an array of integers");
            }
            long count = 1;
            for (JsonNode d : t.get("shape")) {
                if (!d.isIntegralNumber() || d.longValue() < 0) {
                    throw KServeInputs.bad("input '" + name + "': shape " + t.get("shape") + " must hold integers >= 0");
                }
                shape.add(d.longValue());
                try {
                    count = Math.multiplyExact(count, d.longValue());
                } catch (ArithmeticException e) {
                    throw KServeInputs.bad("input '" + name + "': shape " + t.get("shape") + " is too large");
                }
            }
            KServeInputs.Kind kind = KServeInputs.INPUTS.get(name);
            if (kind == null) {
                throw KServeInputs.bad("unexpected input '" + name + "'; this model takes "
                        + String.join(", ", KServeInputs.INPUTS.keySet()));
            }
            checkType(name, datatype, kind);
            List<Object> values;
            JsonNode p = t.get("parameters");
            if (p != null && p.has("binary_data_size")) {
                long size = p.get("binary_data_size").asLong(-1);
                if (size < 0 || size > binary.remaining()) {
                    throw KServeInputs.bad("input '" + name + "': binary_data_size " + p.get("binary_data_size")
                            + " is more than the " + binary.remaining() + " bytes of binary data left");
                }
                ByteBuffer slice = binary.slice(binary.position(), (int) size).order(ByteOrder.LITTLE_ENDIAN);
                binary.position(binary.position() + (int) size);
                values = TensorData.decode(name, datatype, slice);
            } else if (t.has("data")) {
                values = flatten(name, t.get("data"));
            } else {
                throw KServeInputs.bad("input '" + name + "' has neither 'data' nor binary_data_size");
            }
            if (values.size() != count) {
                throw KServeInputs.bad("input '" + name + "' has shape " + shape + " (" + count + " elements) but "
                        + values.size() + " values");
            }
            if (datatype.equals("BOOL") && values.stream().anyMatch(v -> !(v instanceof Boolean))) {
                throw KServeInputs.bad("input '" + name + "' is BOOL but holds values that are not booleans");
            }
            return new Decoded(name, shape, values);
        }
    }

    /** @throws ApiException 400 for an output the model does not have, or a log-prob one without return_log_probs */
    static void checkOutput(String name, KServeInputs in) {
        if (OUTPUT_TENSORS.stream().noneMatch(o -> o.name().equals(name))) {
            throw KServeInputs.bad("unknown output '" + name + "'; this model has text_output, cum_log_probs"
                    + " and output_log_probs");
        }
        if (!name.equals("text_output") && !in.returnLogProbs()) {
            throw KServeInputs.bad("output '" + name + "' needs the input return_log_probs true");
        }
    }

    /** Whether {@code datatype} can carry what input {@code name} takes. */
    static void checkType(String name, String datatype, KServeInputs.Kind kind) {
        boolean ok = switch (kind) {
            case TEXT -> datatype.equals("BYTES");
            case BOOL -> datatype.equals("BOOL");
            case INT -> datatype.matches("U?INT(8|16|32|64)");
            case FLOAT -> datatype.matches("FP(16|32|64)|BF16|U?INT(8|16|32|64)");
        };
        if (!ok) {
            String expected = switch (kind) {
                case TEXT -> "BYTES";
                case BOOL -> "BOOL";
                case INT -> "an integer type (INT32, INT64, ...)";
                case FLOAT -> "a number type (FP32, ...)";
            };
            throw KServeInputs.bad("input '" + name + "' has datatype " + datatype + "; it takes " + expected);
        }
    }

    /** Binary tensor data (Triton's binary_tensor_data extension): little-endian, BYTES length-prefixed. */
    static final class TensorData {
        private TensorData() {
        }

        static List<Object> decode(String name, String datatype, ByteBuffer b) {
            List<Object> out = new ArrayList<>();
            try {
                while (b.hasRemaining()) {
                    out.add(switch (datatype) {
                        case "BYTES" -> {
                            int n = b.getInt();
                            if (n < 0 || n > b.remaining()) {
                                throw KServeInputs.bad("input '" + name + "': a BYTES element of " + Integer.toUnsignedString(n)
                                        + " bytes is longer than the data left");
                            }
                            byte[] s = new byte[n];
                            b.get(s);
                            yield new String(s, StandardCharsets.UTF_8);
                        }
                        case "BOOL" -> b.get() != 0;
                        case "INT8" -> (long) b.get();
                        case "UINT8" -> (long) (b.get() & 0xFF);
                        case "INT16" -> (long) b.getShort();
                        case "UINT16" -> (long) (b.getShort() & 0xFFFF);
                        case "INT32" -> (long) b.getInt();
                        case "UINT32" -> b.getInt() & 0xFFFFFFFFL;
                        case "INT64", "UINT64" -> b.getLong();
                        case "FP16" -> (double) Float.float16ToFloat(b.getShort());
                        case "BF16" -> (double) Float.intBitsToFloat((b.getShort() & 0xFFFF) << 16);
                        case "FP32" -> (double) b.getFloat();
                        case "FP64" -> b.getDouble();
                        default -> throw KServeInputs.bad("input '" + name + "': datatype " + datatype + " is not supported");
                    });
                }
            } catch (java.nio.BufferUnderflowException e) {
                throw KServeInputs.bad("input '" + name + "': its binary data ends inside an element");
            }
            return out;
        }

        /** BYTES elements as binary tensor data. */
        static byte[] bytes(List<String> elements) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            for (String s : elements) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(b.length).array());
                out.writeBytes(b);
            }
            return out.toByteArray();
        }

        static byte[] fp32(float[] values) {
            ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
            for (float v : values) {
                b.putFloat(v);
            }
            return b.array();
        }
    }

}
