package io.nereid.gateway.http;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.gateway.grpc.proto.DataType;
import io.nereid.gateway.grpc.proto.InferParameter;
import io.nereid.gateway.grpc.proto.InferStatistics;
import io.nereid.gateway.grpc.proto.InferTensorContents;
import io.nereid.gateway.grpc.proto.ModelConfig;
import io.nereid.gateway.grpc.proto.ModelConfigRequest;
import io.nereid.gateway.grpc.proto.ModelConfigResponse;
import io.nereid.gateway.grpc.proto.ModelInferRequest;
import io.nereid.gateway.grpc.proto.ModelInferResponse;
import io.nereid.gateway.grpc.proto.ModelInput;
import io.nereid.gateway.grpc.proto.ModelMetadataRequest;
import io.nereid.gateway.grpc.proto.ModelMetadataResponse;
import io.nereid.gateway.grpc.proto.ModelOutput;
import io.nereid.gateway.grpc.proto.ModelParameter;
import io.nereid.gateway.grpc.proto.ModelReadyRequest;
import io.nereid.gateway.grpc.proto.ModelReadyResponse;
import io.nereid.gateway.grpc.proto.ModelStatistics;
import io.nereid.gateway.grpc.proto.ModelStatisticsRequest;
import io.nereid.gateway.grpc.proto.ModelStatisticsResponse;
import io.nereid.gateway.grpc.proto.ModelStreamInferResponse;
import io.nereid.gateway.grpc.proto.ModelTransactionPolicy;
import io.nereid.gateway.grpc.proto.RepositoryIndexRequest;
import io.nereid.gateway.grpc.proto.RepositoryIndexResponse;
import io.nereid.gateway.grpc.proto.RepositoryModelLoadRequest;
import io.nereid.gateway.grpc.proto.RepositoryModelLoadResponse;
import io.nereid.gateway.grpc.proto.RepositoryModelUnloadRequest;
import io.nereid.gateway.grpc.proto.RepositoryModelUnloadResponse;
import io.nereid.gateway.grpc.proto.ServerLiveRequest;
import io.nereid.gateway.grpc.proto.ServerLiveResponse;
import io.nereid.gateway.grpc.proto.ServerMetadataRequest;
import io.nereid.gateway.grpc.proto.ServerMetadataResponse;
import io.nereid.gateway.grpc.proto.ServerReadyRequest;
import io.nereid.gateway.grpc.proto.ServerReadyResponse;
import io.nereid.gateway.grpc.proto.StatisticDuration;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.GrpcServerResponse;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The KServe v2 / Triton protocol over gRPC ({@code inference.GRPCInferenceService}, messages from
 * {@code src/main/protobuf/grpc_service.proto}) on its own port, on Vert.x gRPC with the service
 * bound by hand (no generated stubs): ServerLive, ServerReady, ModelReady, ServerMetadata,
 * ModelMetadata, ModelConfig, ModelStatistics, ModelInfer, ModelStreamInfer (decoupled: one
 * response per engine step with the text it added, the last of each request carrying the parameter
 * {@code triton_final_response = true}; errors in-band as {@code error_message}), RepositoryIndex,
 * RepositoryModelLoad and RepositoryModelUnload (on the server's {@link ServedModels}; each call
 * goes to the model it names). Inputs and errors as on
 * HTTP ({@link KServeInputs}), the status mapped: 400 INVALID_ARGUMENT, 404 NOT_FOUND, 429
 * RESOURCE_EXHAUSTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED; the API key is checked on
 * {@code authorization: Bearer} metadata (UNAUTHENTICATED; the health RPCs are open). A client
 * deadline becomes the engine request's; a cancelled call cancels its engine requests.
 * Threads: handlers on the event loop, tokenizing on the worker pool.
 */
final class KServeGrpc implements AutoCloseable {

    private static final ServiceName SERVICE = ServiceName.create("inference", "GRPCInferenceService");

    private final Vertx vertx;
    private final GatewayOptions options;
    private final ServedModels models;
    private final BooleanSupplier live;
    private final BooleanSupplier ready;
    private final AccessControl access;
    private HttpServer server;

    /**
     * The gRPC front end over {@code models} (each call goes to the model it names, through that
     * model's {@link KServeRoutes}: its admission, engine-request building and statistics); keys
     * checked by {@code access}.
     *
     * @param live  whether every loaded model's engine runs
     * @param ready whether the server is ready
     */
    KServeGrpc(Vertx vertx, GatewayOptions options, ServedModels models, BooleanSupplier live, BooleanSupplier ready,
            AccessControl access) {
        this.vertx = vertx;
        this.options = options;
        this.models = models;
        this.live = live;
        this.ready = ready;
        this.access = access;
    }

    /** Binds {@code host:port} (0: any free port). */
    void start(String host, int port) throws Exception {
        GrpcServer grpc = GrpcServer.server(vertx);
        unary(grpc, "ServerLive", ServerLiveRequest.getDefaultInstance(), false,
                r -> ServerLiveResponse.newBuilder().setLive(live.getAsBoolean()).build());
        unary(grpc, "ServerReady", ServerReadyRequest.getDefaultInstance(), false,
                r -> ServerReadyResponse.newBuilder().setReady(ready.getAsBoolean()).build());
        unary(grpc, "ModelReady", ModelReadyRequest.getDefaultInstance(), true, r -> {
            KServeRoutes k = checkModel(r.getName(), r.getVersion());
            return ModelReadyResponse.newBuilder().setReady(k.ready.getAsBoolean()).build();
        });
        unary(grpc, "ServerMetadata", ServerMetadataRequest.getDefaultInstance(), true,
                r -> ServerMetadataResponse.newBuilder().setName("nereid").setVersion(KServeRoutes.serverVersion())
                        .addAllExtensions(KServeRoutes.EXTENSIONS).build());
        unary(grpc, "ModelMetadata", ModelMetadataRequest.getDefaultInstance(), true,
                r -> metadata(checkModel(r.getName(), r.getVersion())));
        unary(grpc, "ModelConfig", ModelConfigRequest.getDefaultInstance(), true,
                r -> ModelConfigResponse.newBuilder().setConfig(config(checkModel(r.getName(), r.getVersion()))).build());
        unary(grpc, "ModelStatistics", ModelStatisticsRequest.getDefaultInstance(), true, r -> {
            ModelStatisticsResponse.Builder b = ModelStatisticsResponse.newBuilder();
            if (!r.getName().isEmpty()) {
                b.addModelStats(statistics(checkModel(r.getName(), r.getVersion())));
            } else {
                models.ready().forEach(s -> b.addModelStats(statistics(s.kserve)));
            }
            return b.build();
        });
        later(grpc, "RepositoryIndex", RepositoryIndexRequest.getDefaultInstance(),   // reads the folder: off the loop
                r -> vertx.executeBlocking(() -> {
                    RepositoryIndexResponse.Builder b = RepositoryIndexResponse.newBuilder();
                    for (ServedModels.Entry e : models.index(r.getReady())) {
                        b.addModels(RepositoryIndexResponse.ModelIndex.newBuilder().setName(e.name())
                                .setVersion(KServeRoutes.VERSION).setState(e.state().name()).setReason(e.reason()));
                    }
                    return b.build();
                }, false));
        later(grpc, "RepositoryModelLoad", RepositoryModelLoadRequest.getDefaultInstance(), r -> {
            noParameters(r.getParametersMap().keySet());
            return done(models.load(r.getModelName()), RepositoryModelLoadResponse.getDefaultInstance());
        });
        later(grpc, "RepositoryModelUnload", RepositoryModelUnloadRequest.getDefaultInstance(), r -> {
            noParameters(r.getParametersMap().keySet());
            return done(models.unload(r.getModelName()), RepositoryModelUnloadResponse.getDefaultInstance());
        });
        grpc.callHandler(ServiceMethod.server(SERVICE, "ModelInfer", GrpcMessageEncoder.<ModelInferResponse>encoder(),
                GrpcMessageDecoder.<ModelInferRequest>decoder(ModelInferRequest.getDefaultInstance())), this::infer);
        grpc.callHandler(ServiceMethod.server(SERVICE, "ModelStreamInfer",
                GrpcMessageEncoder.<ModelStreamInferResponse>encoder(),
                GrpcMessageDecoder.<ModelInferRequest>decoder(ModelInferRequest.getDefaultInstance())), this::streamInfer);
        server = vertx.createHttpServer(new HttpServerOptions().setHttp2ClearTextEnabled(true))
                .requestHandler(grpc).listen(port, host).toCompletionStage().toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
    }

    int port() {
        return server.actualPort();
    }

    @Override
    public void close() {
        if (server != null) {
            try {
                server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A failure with its gRPC status, for handlers to throw. */
    static final class GrpcFailure extends RuntimeException {
        final GrpcStatus status;

        GrpcFailure(GrpcStatus status, String message) {
            super(message);
            this.status = status;
        }
    }

    interface Answer<Q, R> {
        R answer(Q request);
    }

    private <Q extends MessageLite, R extends MessageLite> void unary(GrpcServer grpc, String method, Q prototype,
            boolean guarded, Answer<Q, R> call) {
        grpc.callHandler(ServiceMethod.server(SERVICE, method, GrpcMessageEncoder.<R>encoder(),
                GrpcMessageDecoder.<Q>decoder((com.google.protobuf.MessageOrBuilder) prototype)), req -> req.handler(q -> {
                    try {
                        if (guarded) {
                            authorize(req);
                        }
                        req.response().end(call.answer(q));
                    } catch (RuntimeException e) {
                        fail(req.response(), e);
                    }
                }));
    }

    /** A guarded unary call answered once the future {@code call} gives completes (on the call's context). */
    private <Q extends MessageLite, R extends MessageLite> void later(GrpcServer grpc, String method, Q prototype,
            Answer<Q, Future<R>> call) {
        grpc.callHandler(ServiceMethod.server(SERVICE, method, GrpcMessageEncoder.<R>encoder(),
                GrpcMessageDecoder.<Q>decoder((com.google.protobuf.MessageOrBuilder) prototype)), req -> req.handler(q -> {
                    try {
                        authorize(req);
                        call.answer(q).onComplete(ar -> {
                            if (ar.succeeded()) {
                                req.response().end(ar.result());
                            } else {
                                fail(req.response(), KServeRoutes.unwrap(ar.cause()));
                            }
                        });
                    } catch (RuntimeException e) {
                        fail(req.response(), e);
                    }
                }));
    }

    /** A model-control action's future as the call's answer {@code done}, completed on the call's context. */
    private <R> Future<R> done(java.util.concurrent.CompletableFuture<Void> action, R done) {
        return Future.fromCompletionStage(action, vertx.getOrCreateContext()).map(v -> done);
    }

    private static void noParameters(java.util.Set<String> names) {
        if (!names.isEmpty()) {
            throw KServeInputs.bad("load and unload parameters (" + String.join(", ", names) + ") are not supported: a"
                    + " model's settings come from its folder's nereid.json");
        }
    }

    // ---- descriptions ----------------------------------------------------------------------------

    private static ModelMetadataResponse metadata(KServeRoutes k) {
        ModelMetadataResponse.Builder b = ModelMetadataResponse.newBuilder().setName(k.model.name())
                .addVersions(KServeRoutes.VERSION).setPlatform("nereid");
        for (KServeRoutes.Tensor t : KServeRoutes.INPUT_TENSORS) {
            b.addInputs(ModelMetadataResponse.TensorMetadata.newBuilder().setName(t.name()).setDatatype(t.datatype())
                    .addShape(-1));
        }
        for (KServeRoutes.Tensor t : KServeRoutes.OUTPUT_TENSORS) {
            b.addOutputs(ModelMetadataResponse.TensorMetadata.newBuilder().setName(t.name()).setDatatype(t.datatype())
                    .addShape(-1));
        }
        return b.build();
    }

    private static ModelConfig config(KServeRoutes k) {
        ModelConfig.Builder b = ModelConfig.newBuilder().setName(k.model.name()).setPlatform("nereid").setBackend("nereid")
                .setMaxBatchSize(0).setModelTransactionPolicy(ModelTransactionPolicy.newBuilder().setDecoupled(true))
                .putParameters("max_model_len", ModelParameter.newBuilder()
                        .setStringValue(Integer.toString(k.model.maxModelLen())).build());
        for (KServeRoutes.Tensor t : KServeRoutes.INPUT_TENSORS) {
            b.addInput(ModelInput.newBuilder().setName(t.name()).setDataType(DataType.valueOf(
                    KServeRoutes.configType(t.datatype()))).addDims(-1).setOptional(t.optional()));
        }
        for (KServeRoutes.Tensor t : KServeRoutes.OUTPUT_TENSORS) {
            b.addOutput(ModelOutput.newBuilder().setName(t.name()).setDataType(DataType.valueOf(
                    KServeRoutes.configType(t.datatype()))).addDims(-1));
        }
        return b.build();
    }

    private static ModelStatistics statistics(KServeRoutes k) {
        InferenceStats stats = k.stats;
        return ModelStatistics.newBuilder().setName(k.model.name()).setVersion(KServeRoutes.VERSION)
                .setInferenceCount(stats.inferenceCount()).setExecutionCount(k.model.engine().stats().iterations())
                .setInferenceStats(InferStatistics.newBuilder()
                        .setSuccess(duration(stats.successes(), stats.successNanos()))
                        .setFail(duration(stats.failures(), stats.failNanos()))
                        .setQueue(duration(stats.queueCount(), stats.queueNanos())))
                .setLastInference(stats.lastInference())
                .build();
    }

    private static StatisticDuration duration(long count, long ns) {
        return StatisticDuration.newBuilder().setCount(count).setNs(ns).build();
    }

    /** The handlers of model {@code name}, or NOT_FOUND for a model that is not served or a version it does not have. */
    private KServeRoutes checkModel(String name, String version) {
        ServedModel s = models.find(name);
        if (s == null) {
            throw new GrpcFailure(GrpcStatus.NOT_FOUND, "unknown model '" + name + "'");
        }
        if (!version.isEmpty() && !version.equals(KServeRoutes.VERSION)) {
            throw new GrpcFailure(GrpcStatus.NOT_FOUND, "unknown version '" + version + "' of model '" + name
                    + "' (it has version " + KServeRoutes.VERSION + ")");
        }
        return s.kserve;
    }

    /** @throws GrpcFailure UNAUTHENTICATED when keys are configured and the call carries none of them */
    private void authorize(GrpcServerRequest<?, ?> req) {
        if (!access.keyAccepted(req.headers().get("authorization"))) {
            throw new GrpcFailure(GrpcStatus.UNAUTHENTICATED, "missing or invalid API key: send metadata"
                    + " 'authorization: Bearer KEY'");
        }
    }

    /** The gRPC status of a failure before any response message. */
    static GrpcFailure status(Throwable t) {
        if (t instanceof GrpcFailure g) {
            return g;
        }
        ApiException e = GatewayServer.mapFailure(t);
        GrpcStatus s = switch (e.status()) {
            case 400, 413 -> GrpcStatus.INVALID_ARGUMENT;
            case 401 -> GrpcStatus.UNAUTHENTICATED;
            case 404 -> GrpcStatus.NOT_FOUND;
            case 429 -> GrpcStatus.RESOURCE_EXHAUSTED;
            case 503 -> GrpcStatus.UNAVAILABLE;
            case 504 -> GrpcStatus.DEADLINE_EXCEEDED;
            default -> GrpcStatus.INTERNAL;
        };
        return new GrpcFailure(s, e.getMessage());
    }

    static void fail(GrpcServerResponse<?, ?> resp, Throwable t) {
        GrpcFailure f = status(t);
        resp.status(f.status).statusMessage(f.getMessage()).end();
    }

    // ---- inference -------------------------------------------------------------------------------

    /** A request's tensors as named values (as {@link KServeInputs} takes them). */
    static Map<String, List<Object>> values(ModelInferRequest r) {
        Map<String, List<Object>> values = new LinkedHashMap<>();
        boolean raw = r.getRawInputContentsCount() > 0;
        if (raw && r.getRawInputContentsCount() != r.getInputsCount()) {
            throw KServeInputs.bad("raw_input_contents has " + r.getRawInputContentsCount() + " entries for "
                    + r.getInputsCount() + " inputs");
        }
        for (int i = 0; i < r.getInputsCount(); i++) {
            ModelInferRequest.InferInputTensor t = r.getInputs(i);
            KServeInputs.Kind kind = KServeInputs.INPUTS.get(t.getName());
            if (kind == null) {
                throw KServeInputs.bad("unexpected input '" + t.getName() + "'; this model takes "
                        + String.join(", ", KServeInputs.INPUTS.keySet()));
            }
            KServeRoutes.checkType(t.getName(), t.getDatatype(), kind);
            long count = 1;
            for (long d : t.getShapeList()) {
                if (d < 0) {
                    throw KServeInputs.bad("input '" + t.getName() + "': shape " + t.getShapeList() + " must hold integers >= 0");
                }
                try {
                    count = Math.multiplyExact(count, d);
                } catch (ArithmeticException e) {
                    throw KServeInputs.bad("input '" + t.getName() + "': shape " + t.getShapeList() + " is too large");
                }
            }
            List<Object> v = raw ? KServeRoutes.TensorData.decode(t.getName(), t.getDatatype(),
                    r.getRawInputContents(i).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN))
                    : contents(t.getDatatype(), t.getContents());
            if (v.size() != count) {
                throw KServeInputs.bad("input '" + t.getName() + "' has shape " + t.getShapeList() + " (" + count
                        + " elements) but " + v.size() + " values");
            }
            if (values.put(t.getName(), v) != null) {
                throw KServeInputs.bad("input '" + t.getName() + "' is given twice");
            }
        }
        for (Map.Entry<String, InferParameter> p : r.getParametersMap().entrySet()) {
            if (values.put(p.getKey(), List.of(parameter(p.getValue()))) != null) {
                throw KServeInputs.bad("'" + p.getKey() + "' is given as an input and as a parameter");
            }
        }
        return values;
    }

    /** @throws ApiException 400 for a requested output the model does not have or that needs return_log_probs */
    static void checkOutputs(ModelInferRequest r, KServeInputs in) {
        for (ModelInferRequest.InferRequestedOutputTensor o : r.getOutputsList()) {
            KServeRoutes.checkOutput(o.getName(), in);
        }
    }

    private static List<Object> contents(String datatype, InferTensorContents c) {
        List<Object> out = new ArrayList<>();
        switch (datatype) {
            case "BYTES" -> c.getBytesContentsList().forEach(b -> out.add(b.toStringUtf8()));
            case "BOOL" -> out.addAll(c.getBoolContentsList());
            case "INT8", "INT16", "INT32" -> c.getIntContentsList().forEach(x -> out.add((long) x));
            case "INT64" -> out.addAll(c.getInt64ContentsList());
            case "UINT8", "UINT16", "UINT32" -> c.getUintContentsList().forEach(x -> out.add(x & 0xFFFFFFFFL));
            case "UINT64" -> out.addAll(c.getUint64ContentsList());
            case "FP32" -> c.getFp32ContentsList().forEach(x -> out.add((double) x));
            case "FP64" -> out.addAll(c.getFp64ContentsList());
            default -> throw KServeInputs.bad("datatype " + datatype + " needs raw_input_contents");
        }
        return out;
    }

    private static Object parameter(InferParameter p) {
        return switch (p.getParameterChoiceCase()) {
            case BOOL_PARAM -> p.getBoolParam();
            case INT64_PARAM -> p.getInt64Param();
            case STRING_PARAM -> p.getStringParam();
            case DOUBLE_PARAM -> p.getDoubleParam();
            case UINT64_PARAM -> p.getUint64Param();
            case PARAMETERCHOICE_NOT_SET -> throw KServeInputs.bad("a parameter has no value");
        };
    }

    private void infer(GrpcServerRequest<ModelInferRequest, ModelInferResponse> req) {
        req.handler(r -> {
            KServeInputs in;
            KServeRoutes k;
            try {
                authorize(req);
                k = checkModel(r.getModelName(), r.getModelVersion());
                k.admission.checkAvailable();
                in = KServeInputs.parse(values(r));
                checkOutputs(r, in);
                if (Boolean.TRUE.equals(in.stream())) {
                    throw KServeInputs.bad("stream true needs ModelStreamInfer");
                }
            } catch (RuntimeException e) {
                fail(req.response(), e);
                return;
            }
            Call call = new Call(k, req, r, in, false);
            call.admit(null);
        });
    }

    /**
     * ModelStreamInfer: each request on the stream is admitted on its own; the stream ends (OK)
     * once the client half-closed and every request finished. A refused request is an in-band
     * error_message; a cancelled stream cancels every request in flight.
     */
    private void streamInfer(GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> req) {
        Stream stream = new Stream(req);
        try {
            authorize(req);
        } catch (RuntimeException e) {
            fail(req.response(), e);
            return;
        }
        req.handler(stream::request);
        req.endHandler(v -> stream.halfClosed());
        req.errorHandler(e -> stream.cancelled());
        req.exceptionHandler(e -> stream.cancelled());
    }

    /** One ModelStreamInfer call. Context only. */
    private final class Stream {
        final GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> req;
        final List<Call> open = new ArrayList<>();
        int pending;   // requests received and not finished
        boolean halfClosed;
        boolean ended;

        private final List<Handler<Void>> drains = new ArrayList<>();

        Stream(GrpcServerRequest<ModelInferRequest, ModelStreamInferResponse> req) {
            this.req = req;
            req.response().drainHandler(v -> {   // one handler for the stream: every waiting call's pump resumes
                List<Handler<Void>> waiting = List.copyOf(drains);
                drains.clear();
                waiting.forEach(h -> h.handle(null));
            });
        }

        /**
         * The write side a call's pump paces on: the stream's queue, with a drain handler of its own
         * (the stream's one handler wakes them all).
         */
        io.vertx.core.streams.WriteStream<Object> pacing() {
            return new io.vertx.core.streams.WriteStream<>() {
                @Override
                public boolean writeQueueFull() {
                    return req.response().writeQueueFull();
                }

                @Override
                public io.vertx.core.streams.WriteStream<Object> drainHandler(Handler<Void> h) {
                    if (h != null) {
                        drains.add(h);
                    }
                    return this;
                }

                @Override
                public io.vertx.core.streams.WriteStream<Object> exceptionHandler(Handler<Throwable> h) {
                    return this;
                }

                @Override
                public Future<Void> write(Object data) {
                    throw new UnsupportedOperationException("pacing only");
                }

                @Override
                public Future<Void> end() {
                    throw new UnsupportedOperationException("pacing only");
                }

                @Override
                public io.vertx.core.streams.WriteStream<Object> setWriteQueueMaxSize(int maxSize) {
                    return this;
                }
            };
        }

        void request(ModelInferRequest r) {
            KServeInputs in;
            KServeRoutes k;
            pending++;
            try {
                k = checkModel(r.getModelName(), r.getModelVersion());
                k.admission.checkAvailable();
                in = KServeInputs.parse(values(r));
                checkOutputs(r, in);
            } catch (RuntimeException e) {
                error(r.getModelName(), r.getId(), e);
                return;
            }
            Call call = new Call(k, req, r, in, true);
            open.add(call);
            call.admit(this);
        }

        void error(String model, String id, Throwable e) {
            GrpcFailure f = status(e);
            write(ModelStreamInferResponse.newBuilder().setErrorMessage(f.getMessage()).setInferResponse(
                    ModelInferResponse.newBuilder().setModelName(model).setModelVersion(KServeRoutes.VERSION)
                            .setId(id).putParameters("triton_final_response", bool(true))).build());
            finished(null);
        }

        void write(ModelStreamInferResponse m) {
            if (!ended) {
                try {
                    req.response().write(m);
                } catch (RuntimeException e) {   // cancelled by the client
                    cancelled();
                }
            }
        }

        void finished(Call c) {
            open.remove(c);
            pending--;
            maybeEnd();
        }

        void halfClosed() {
            halfClosed = true;
            maybeEnd();
        }

        private void maybeEnd() {
            if (halfClosed && pending == 0 && !ended) {
                ended = true;
                req.response().end();
            }
        }

        void cancelled() {
            if (!ended) {
                ended = true;
                for (Call c : List.copyOf(open)) {
                    c.cancel();
                }
            }
        }
    }

    static InferParameter bool(boolean b) {
        return InferParameter.newBuilder().setBoolParam(b).build();
    }

    /** One ModelInfer request (unary, or one of a stream's). Context only. */
    private final class Call implements StepEventPump.Receiver {
        final KServeRoutes k;   // the model's handlers
        final ModelService model;
        final InferenceStats stats;
        final GrpcServerRequest<?, ?> req;
        final ModelInferRequest request;
        final KServeInputs in;
        final boolean streaming;   // part of ModelStreamInfer
        final boolean deltas;      // one response per engine step (else one at the end)
        final long start = System.nanoTime();
        Stream stream;
        StepEventPump pump;
        final KServeOutput out;
        final java.util.Set<String> wanted;   // the requested outputs; empty: all
        int finished;
        boolean done;
        long deadlineTimer = -1;

        Call(KServeRoutes k, GrpcServerRequest<?, ?> req, ModelInferRequest request, KServeInputs in, boolean streaming) {
            this.k = k;
            this.model = k.model;
            this.stats = k.stats;
            this.req = req;
            this.request = request;
            this.in = in;
            this.streaming = streaming;
            this.deltas = streaming && !Boolean.FALSE.equals(in.stream());
            this.out = new KServeOutput(in);
            this.wanted = new java.util.LinkedHashSet<>();
            request.getOutputsList().forEach(o -> wanted.add(o.getName()));
        }

        void admit(Stream s) {
            this.stream = s;
            if (!streaming) {   // a call cancelled while it is prepared is noticed at start
                req.errorHandler(e -> cancel());
                req.exceptionHandler(e -> cancel());
            }
            String engineId = "grpc-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
            long timeoutMillis = req.timeout();
            Context context = vertx.getOrCreateContext();
            k.admission.admit(context, new AdmissionService.Plan<int[]>() {
                private Map<Integer, Float> bans = Map.of();

                @Override
                public List<int[]> prepare() {
                    bans = k.badWords(in.badWords());
                    return in.prompts().stream().map(p -> model.tokenize(p, true)).toList();
                }

                @Override
                public GenerationRequest request(int p, int[] tokens) {
                    KServeInputs timed = in;
                    if (timeoutMillis > 0 && (in.timeoutMicros() == 0 || in.timeoutMicros() > timeoutMillis * 1000)) {
                        timed = in.withTimeoutMicros(timeoutMillis * 1000);
                    }
                    return k.engineRequest(timed, bans, in.prompts().size() > 1 ? engineId + "-" + p : engineId, tokens);
                }

                @Override
                public ApiException refused(int k, RuntimeException e) {
                    return e instanceof RequestValidationException v ? KServeInputs.bad(v.getMessage())
                            : GatewayServer.mapFailure(e);
                }

                @Override
                public AdmissionService.Responder respond(List<int[]> prompts) {
                    pump = new StepEventPump(context, streaming ? stream.pacing() : null, prompts.size(), 1, k.metrics,
                            options.clientStallTimeout());
                    return AdmissionService.Responder.of(pump::sink, pump::abandon, admitted -> {
                        k.inflight.incrementAndGet();
                        Handler<Void>[] onClose = new Handler[1];
                        pump.start(admitted, Call.this, h -> onClose[0] = h);
                        cancelHook = () -> onClose[0].handle(null);
                        if (cancelled || (streaming && stream.ended)) {
                            cancelHook.run();   // the client went away while the request was prepared
                            return;
                        }
                        if (timeoutMillis > 0) {
                            deadlineTimer = vertx.setTimer(timeoutMillis + 50, t -> {
                                deadlineTimer = -1;
                                if (!done) {
                                    pump.cancelAll();
                                    end(GrpcStatus.DEADLINE_EXCEEDED, "the call's deadline of " + timeoutMillis
                                            + " ms passed before it finished");
                                }
                            });
                        }
                    });
                }
            }).onFailure(e -> {
                stats.failed(System.nanoTime() - start);
                if (streaming) {
                    stream.open.remove(this);
                    stream.error(model.name(), request.getId(), e);
                } else {
                    fail(req.response(), e);
                }
            });
        }

        Runnable cancelHook;
        boolean cancelled;

        void cancel() {
            cancelled = true;
            if (cancelHook != null) {
                Runnable r = cancelHook;
                cancelHook = null;
                r.run();
            }
        }

        @Override
        public void deliver(List<StepEventPump.Event> batch) {
            for (StepEventPump.Event e : batch) {
                switch (e) {
                    case StepEventPump.Delta d -> {
                        out.add(d);
                        if (deltas) {   // one response per engine step, as Triton's decoupled backends send them
                            stream.write(ModelStreamInferResponse.newBuilder().setInferResponse(
                                    response(d.choice(), false, false)).build());
                        }
                    }
                    case StepEventPump.PromptScored p -> {
                    }
                    case StepEventPump.Finished f when f.reason() == io.nereid.engine.api.FinishReason.DEADLINE -> {
                        end(GrpcStatus.DEADLINE_EXCEEDED, "the request's timeout expired before it finished");
                        return;
                    }
                    case StepEventPump.Finished f when f.reason() == io.nereid.engine.api.FinishReason.CANCELLED -> {
                        end(GrpcStatus.UNAVAILABLE, "the request was cancelled before it finished");
                        return;
                    }
                    case StepEventPump.Finished f -> {
                        finished++;
                        stats.queued(f.usage().queueNanos());
                    }
                    case StepEventPump.Failed x -> {
                        end(GrpcStatus.INTERNAL, "generation failed: " + x.error().getMessage());
                        return;
                    }
                }
            }
            if (finished == out.prompts() && !(streaming && pump.awaitWritable())) {
                complete();
            }
        }

        /** The response for prompt {@code k} (all prompts when {@code k < 0}): text not sent yet, or all of it. */
        private ModelInferResponse response(int k, boolean whole, boolean last) {
            ModelInferResponse.Builder b = ModelInferResponse.newBuilder().setModelName(model.name())
                    .setModelVersion(KServeRoutes.VERSION).setId(request.getId());
            List<String> texts = new ArrayList<>();
            int from = k < 0 ? 0 : k, to = k < 0 ? out.prompts() : k + 1;
            for (int i = from; i < to; i++) {
                texts.add(whole ? out.whole(i) : out.takeDelta(i));
            }
            List<Long> shape = new ArrayList<>();
            if (k < 0) {
                request.getInputsList().stream().filter(t -> t.getName().equals("text_input")).findFirst()
                        .ifPresentOrElse(t -> shape.addAll(t.getShapeList()), () -> shape.add((long) out.prompts()));
            } else {
                shape.add(1L);
            }
            if (wanted.isEmpty() || wanted.contains("text_output")) {
                b.addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("text_output").setDatatype("BYTES")
                        .addAllShape(shape));
                b.addRawOutputContents(ByteString.copyFrom(KServeRoutes.TensorData.bytes(texts)));
            }
            if (in.returnLogProbs() && (wanted.isEmpty() || wanted.contains("cum_log_probs")
                    || wanted.contains("output_log_probs"))) {
                // a delta response carries the log-probs it adds; a whole one, all of them
                KServeOutput.LogProbs lp = out.logProbs(from, to, !whole);
                if (wanted.isEmpty() || wanted.contains("cum_log_probs")) {
                    b.addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("cum_log_probs")
                            .setDatatype("FP32").addShape(to - from));
                    b.addRawOutputContents(ByteString.copyFrom(KServeRoutes.TensorData.fp32(lp.cum())));
                }
                if (wanted.isEmpty() || wanted.contains("output_log_probs")) {
                    b.addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("output_log_probs")
                            .setDatatype("FP32").addShape(to - from).addShape(lp.width()));
                    b.addRawOutputContents(ByteString.copyFrom(KServeRoutes.TensorData.fp32(lp.rows())));
                }
            }
            if (streaming) {
                b.putParameters("triton_final_response", bool(last));
            }
            return b.build();
        }

        private void complete() {
            if (done) {
                return;
            }
            done = true;
            pump.done();
            cancelTimer();
            stats.succeeded(out.prompts(), System.nanoTime() - start);
            if (streaming) {
                if (deltas) {
                    for (int k = 0; k < out.prompts(); k++) {
                        stream.write(ModelStreamInferResponse.newBuilder().setInferResponse(
                                response(k, false, k == out.prompts() - 1)).build());
                    }
                } else {
                    stream.write(ModelStreamInferResponse.newBuilder().setInferResponse(response(-1, true, true)).build());
                }
                release();
                stream.finished(this);
            } else {
                @SuppressWarnings("unchecked")
                GrpcServerResponse<ModelInferRequest, ModelInferResponse> resp =
                        (GrpcServerResponse<ModelInferRequest, ModelInferResponse>) req.response();
                try {
                    StepEventPump.whenWritten(resp.end(response(-1, true, false)), this::release);
                } catch (RuntimeException e) {   // the call was cancelled meanwhile
                    release();
                }
            }
        }

        /** Ends with an error: unary, the call's status; on a stream, an in-band error_message. */
        private void end(GrpcStatus status, String message) {
            if (done) {
                return;
            }
            done = true;
            pump.done();
            pump.cancelAll();
            cancelTimer();
            stats.failed(System.nanoTime() - start);
            if (streaming) {
                stream.write(ModelStreamInferResponse.newBuilder().setErrorMessage(message).setInferResponse(
                        ModelInferResponse.newBuilder().setModelName(model.name()).setModelVersion(KServeRoutes.VERSION)
                                .setId(request.getId()).putParameters("triton_final_response", bool(true))).build());
                release();
                stream.finished(this);
            } else {
                try {
                    req.response().status(status).statusMessage(message).end();
                } catch (RuntimeException e) {
                    // the call was cancelled meanwhile: nobody to tell
                } finally {
                    release();
                }
            }
        }

        private void cancelTimer() {
            if (deadlineTimer >= 0) {
                vertx.cancelTimer(deadlineTimer);
                deadlineTimer = -1;
            }
        }

        private boolean released;

        private void release() {
            if (!released) {
                released = true;
                k.inflight.decrementAndGet();
            }
        }

        @Override
        public void disconnected() {
            done = true;
            cancelTimer();
            stats.failed(System.nanoTime() - start);
            release();
            if (streaming) {
                stream.open.remove(this);
                stream.pending--;
            }
        }

        @Override
        public void stalled() {
            disconnected();
            if (streaming) {
                stream.cancelled();   // the stream's reader is gone: its other requests go too
            }
            req.response().cancel();
        }
    }

}
