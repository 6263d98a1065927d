package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.nereid.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.nereid.gateway.grpc.proto.InferParameter;
import io.nereid.gateway.grpc.proto.InferTensorContents;
import io.nereid.gateway.grpc.proto.ModelConfigRequest;
import io.nereid.gateway.grpc.proto.ModelConfigResponse;
import io.nereid.gateway.grpc.proto.ModelInferRequest;
import io.nereid.gateway.grpc.proto.ModelInferResponse;
import io.nereid.gateway.grpc.proto.ModelMetadataRequest;
import io.nereid.gateway.grpc.proto.ModelMetadataResponse;
import io.nereid.gateway.grpc.proto.ModelReadyRequest;
import io.nereid.gateway.grpc.proto.ModelReadyResponse;
import io.nereid.gateway.grpc.proto.ModelStatisticsRequest;
import io.nereid.gateway.grpc.proto.ModelStatisticsResponse;
import io.nereid.gateway.grpc.proto.ModelStreamInferResponse;
import io.nereid.gateway.grpc.proto.RepositoryIndexRequest;
import io.nereid.gateway.grpc.proto.RepositoryIndexResponse;
import io.nereid.gateway.grpc.proto.RepositoryModelLoadRequest;
import io.nereid.gateway.grpc.proto.RepositoryModelLoadResponse;
import io.nereid.gateway.grpc.proto.ServerLiveRequest;
import io.nereid.gateway.grpc.proto.ServerLiveResponse;
import io.nereid.gateway.grpc.proto.ServerMetadataRequest;
import io.nereid.gateway.grpc.proto.ServerMetadataResponse;
import io.nereid.gateway.grpc.proto.ServerReadyRequest;
import io.nereid.gateway.grpc.proto.ServerReadyResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The KServe v2 gRPC service ({@code inference.GRPCInferenceService}) against a real server on
 * loopback, called with grpc-java, an implementation independent of the server's (Vert.x gRPC),
 * through the stubs and method descriptors grpc-java's own generator (protoc-gen-grpc-java) made from
 * the same .proto: metadata RPCs, ModelInfer and
 * decoupled ModelStreamInfer give the greedy text of {@code /v1/completions}; several responses
 * then the final flag; bad tensors INVALID_ARGUMENT, unknown models NOT_FOUND, in-band errors on
 * a stream that goes on; a 1 ms deadline is DEADLINE_EXCEEDED and a cancelled stream frees its
 * engine request; 20 concurrent streams; the API key as metadata.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GatewayKServeGrpcTest {

    private static final String SERVICE = "inference.GRPCInferenceService";
    private static final String PROMPT = "Once upon a time";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;
    private static ManagedChannel channel;
    private static String model;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.withGrpc("--threads", "1");
        model = server.model().name();
        channel = Grpc.newChannelBuilder("127.0.0.1:" + server.server().grpcPort(), InsecureChannelCredentials.create())
                .build();
    }

    @AfterAll
    static void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    /** The method as grpc-java's generator wrote it ({@link GRPCInferenceServiceGrpc}), of the type the test expects. */
    @SuppressWarnings("unchecked")
    private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> method(String name,
            MethodDescriptor.MethodType type, Q request, R response) {
        MethodDescriptor<?, ?> m = GRPCInferenceServiceGrpc.getServiceDescriptor().getMethods().stream()
                .filter(d -> d.getFullMethodName().equals(MethodDescriptor.generateFullMethodName(SERVICE, name)))
                .findFirst().orElseThrow(() -> new AssertionError("the .proto has no method " + name));
        assertEquals(type, m.getType(), name);
        return (MethodDescriptor<Q, R>) m;
    }

    @SuppressWarnings("unchecked")
    private static <Q extends Message, R extends Message> R unary(String name, Q request, R responseType) {
        return ClientCalls.blockingUnaryCall(channel, method(name, MethodDescriptor.MethodType.UNARY, request, responseType),
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), request);
    }

    private static final MethodDescriptor<ModelInferRequest, ModelStreamInferResponse> STREAM = method("ModelStreamInfer",
            MethodDescriptor.MethodType.BIDI_STREAMING, ModelInferRequest.getDefaultInstance(),
            ModelStreamInferResponse.getDefaultInstance());

    private static ModelInferRequest.InferInputTensor bytes(String name, String... values) {
        InferTensorContents.Builder c = InferTensorContents.newBuilder();
        for (String v : values) {
            c.addBytesContents(ByteString.copyFromUtf8(v));
        }
        return ModelInferRequest.InferInputTensor.newBuilder().setName(name).setDatatype("BYTES")
                .addShape(values.length).addShape(1).setContents(c).build();
    }

    private static ModelInferRequest.InferInputTensor int32(String name, int v) {
        return ModelInferRequest.InferInputTensor.newBuilder().setName(name).setDatatype("INT32").addShape(1).addShape(1)
                .setContents(InferTensorContents.newBuilder().addIntContents(v)).build();
    }

    private static ModelInferRequest.InferInputTensor fp32(String name, float v) {
        return ModelInferRequest.InferInputTensor.newBuilder().setName(name).setDatatype("FP32").addShape(1).addShape(1)
                .setContents(InferTensorContents.newBuilder().addFp32Contents(v)).build();
    }

    private static InferParameter bool(boolean b) {
        return InferParameter.newBuilder().setBoolParam(b).build();
    }

    /** A greedy request for {@code prompt}, {@code maxTokens} out, without the prompt in text_output. */
    private static ModelInferRequest greedy(String prompt, int maxTokens) {
        return ModelInferRequest.newBuilder().setModelName(model).setId("q").addInputs(bytes("text_input", prompt))
                .addInputs(int32("max_tokens", maxTokens)).addInputs(fp32("temperature", 0))
                .putParameters("exclude_input_in_output", bool(true)).build();
    }

    /** The BYTES elements of raw output {@code i}. */
    private static List<String> texts(ModelInferResponse r, int i) {
        ByteBuffer b = r.getRawOutputContents(i).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        List<String> out = new ArrayList<>();
        while (b.hasRemaining()) {
            byte[] s = new byte[b.getInt()];
            b.get(s);
            out.add(new String(s, StandardCharsets.UTF_8));
        }
        return out;
    }

    private static String completion(String prompt, int maxTokens) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.url("/v1/completions")))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(
                        Map.of("model", model, "prompt", prompt, "max_tokens", maxTokens, "temperature", 0)))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body()).at("/choices/0/text").asText();
    }

    /** What one ModelStreamInfer call answered to {@code requests}, until the server ended the stream. */
    private static List<ModelStreamInferResponse> stream(List<ModelInferRequest> requests) throws Exception {
        List<ModelStreamInferResponse> got = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<ModelInferRequest> out = ClientCalls.asyncBidiStreamingCall(
                channel.newCall(STREAM, CallOptions.DEFAULT.withDeadlineAfter(120, TimeUnit.SECONDS)),
                new StreamObserver<>() {
                    @Override
                    public void onNext(ModelStreamInferResponse r) {
                        got.add(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        requests.forEach(out::onNext);
        out.onCompleted();
        done.get(120, TimeUnit.SECONDS);
        return got;
    }

    private static String concatenated(List<ModelStreamInferResponse> responses) {
        StringBuilder text = new StringBuilder();
        for (ModelStreamInferResponse r : responses) {
            assertEquals("", r.getErrorMessage());
            text.append(String.join("", texts(r.getInferResponse(), 0)));
        }
        return text.toString();
    }

    @Test
    void healthMetadataConfigurationAndRepository() {
        // grpc-java's generated blocking stub, as a stock Triton client in Java would call it
        GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub = GRPCInferenceServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(60, TimeUnit.SECONDS);
        assertTrue(stub.serverLive(ServerLiveRequest.getDefaultInstance()).getLive());
        assertTrue(stub.serverReady(ServerReadyRequest.getDefaultInstance()).getReady());
        assertTrue(stub.modelReady(ModelReadyRequest.newBuilder().setName(model).build()).getReady());
        ServerMetadataResponse sm = unary("ServerMetadata", ServerMetadataRequest.getDefaultInstance(),
                ServerMetadataResponse.getDefaultInstance());
        assertEquals("nereid", sm.getName());
        assertTrue(sm.getExtensionsList().contains("generate"));
        ModelMetadataResponse mm = unary("ModelMetadata", ModelMetadataRequest.newBuilder().setName(model).setVersion("1")
                .build(), ModelMetadataResponse.getDefaultInstance());
        assertEquals("text_input", mm.getInputs(0).getName());
        assertEquals("BYTES", mm.getInputs(0).getDatatype());
        assertEquals("text_output", mm.getOutputs(0).getName());
        ModelConfigResponse mc = unary("ModelConfig", ModelConfigRequest.newBuilder().setName(model).build(),
                ModelConfigResponse.getDefaultInstance());
        assertTrue(mc.getConfig().getModelTransactionPolicy().getDecoupled());
        assertEquals("TYPE_STRING", mc.getConfig().getInput(0).getDataType().name());
        RepositoryIndexResponse index = unary("RepositoryIndex", RepositoryIndexRequest.getDefaultInstance(),
                RepositoryIndexResponse.getDefaultInstance());
        assertEquals(model, index.getModels(0).getName());
        assertEquals("READY", index.getModels(0).getState());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> unary("RepositoryModelLoad",
                RepositoryModelLoadRequest.newBuilder().setModelName("other").build(),
                RepositoryModelLoadResponse.getDefaultInstance()));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("model control is disabled"), e.getStatus().getDescription());
        StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class, () -> unary("ModelMetadata",
                ModelMetadataRequest.newBuilder().setName("nope").build(), ModelMetadataResponse.getDefaultInstance()));
        assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
        assertTrue(unknown.getStatus().getDescription().contains("nope"));
    }

    @Test
    void modelInferGivesTheGreedyTextOfCompletions() throws Exception {
        String expected = completion(PROMPT, 10);
        ModelInferResponse r = unary("ModelInfer", greedy(PROMPT, 10), ModelInferResponse.getDefaultInstance());
        assertEquals(model, r.getModelName());
        assertEquals("q", r.getId());
        assertEquals("text_output", r.getOutputs(0).getName());
        assertEquals("BYTES", r.getOutputs(0).getDatatype());
        assertEquals(List.of(1L, 1L), r.getOutputs(0).getShapeList());
        assertEquals(List.of(expected), texts(r, 0));
        // raw input contents (length-prefixed BYTES, little-endian numbers) mean the same
        byte[] p = PROMPT.getBytes(StandardCharsets.UTF_8);
        ModelInferRequest raw = ModelInferRequest.newBuilder().setModelName(model)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("text_input").setDatatype("BYTES").addShape(1))
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("max_tokens").setDatatype("INT32").addShape(1))
                .addRawInputContents(ByteString.copyFrom(ByteBuffer.allocate(4 + p.length).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(p.length).put(p).array()))
                .addRawInputContents(ByteString.copyFrom(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(10).array()))
                .putParameters("temperature", InferParameter.newBuilder().setDoubleParam(0).build()).build();
        assertEquals(List.of(PROMPT + expected), texts(unary("ModelInfer", raw, ModelInferResponse.getDefaultInstance()), 0));
    }

    @Test
    void modelStreamInferSendsSeveralResponsesThenTheFinalFlag() throws Exception {
        String expected = completion(PROMPT, 12);
        List<ModelStreamInferResponse> got = stream(List.of(greedy(PROMPT, 12)));
        assertTrue(got.size() >= 2, "several responses: " + got.size());
        for (int i = 0; i < got.size(); i++) {
            assertEquals(i == got.size() - 1, got.get(i).getInferResponse().getParametersMap()
                    .get("triton_final_response").getBoolParam(), "final flag only on the last response");
        }
        assertEquals(expected, concatenated(got));
        // stream false: one response with the whole text
        List<ModelStreamInferResponse> one = stream(List.of(greedy(PROMPT, 12).toBuilder()
                .putParameters("stream", bool(false)).build()));
        assertEquals(1, one.size());
        assertEquals(expected, concatenated(one));
    }

    @Test
    void aBadRequestOnAStreamIsAnInBandErrorAndTheStreamGoesOn() throws Exception {
        ModelInferRequest bad = ModelInferRequest.newBuilder().setModelName(model).setId("bad")
                .addInputs(int32("text_input", 3)).build();
        List<ModelStreamInferResponse> got = stream(List.of(bad, greedy(PROMPT, 6)));
        List<ModelStreamInferResponse> errors = got.stream().filter(r -> !r.getErrorMessage().isEmpty()).toList();
        assertEquals(1, errors.size(), got.toString());
        assertTrue(errors.getFirst().getErrorMessage().contains("datatype INT32"), errors.toString());
        assertEquals("bad", errors.getFirst().getInferResponse().getId());
        assertEquals(completion(PROMPT, 6), concatenated(got.stream().filter(r -> r.getErrorMessage().isEmpty()).toList()));
    }

    @Test
    void badTensorsAndUnknownModelsAreRefusedWithTheirStatus() {
        record Bad(ModelInferRequest request, Status.Code code, String says) {
        }
        for (Bad b : List.of(
                new Bad(ModelInferRequest.newBuilder().setModelName(model).addInputs(int32("text_input", 1)).build(),
                        Status.Code.INVALID_ARGUMENT, "datatype INT32"),
                new Bad(ModelInferRequest.newBuilder().setModelName(model).addInputs(int32("max_tokens", 4)).build(),
                        Status.Code.INVALID_ARGUMENT, "'text_input' is required"),
                new Bad(ModelInferRequest.newBuilder().setModelName(model).addInputs(bytes("text_input", "a").toBuilder()
                        .clearShape().addShape(3)).build(), Status.Code.INVALID_ARGUMENT, "shape [3]"),
                new Bad(greedy("a", 4).toBuilder().putParameters("beam_width", InferParameter.newBuilder()
                        .setInt64Param(2).build()).build(), Status.Code.INVALID_ARGUMENT, "beam search"),
                new Bad(greedy("a", 4).toBuilder().setModelName("nope").build(), Status.Code.NOT_FOUND, "unknown model"),
                new Bad(greedy("a", 4).toBuilder().setModelVersion("3").build(), Status.Code.NOT_FOUND, "unknown version"))) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> unary("ModelInfer", b.request(), ModelInferResponse.getDefaultInstance()));
            assertEquals(b.code(), e.getStatus().getCode(), e.getStatus().toString());
            assertTrue(e.getStatus().getDescription().contains(b.says()), e.getStatus().toString());
        }
    }

    @Test
    void aOneMillisecondDeadlineIsDeadlineExceededAndTheServerKeepsServing() throws Exception {
        ModelInferRequest slow = greedy(PROMPT, 100).toBuilder().putParameters("min_length",
                InferParameter.newBuilder().setInt64Param(100).build()).build();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(channel,
                method("ModelInfer", MethodDescriptor.MethodType.UNARY, ModelInferRequest.getDefaultInstance(),
                        ModelInferResponse.getDefaultInstance()), CallOptions.DEFAULT.withDeadlineAfter(1, TimeUnit.MILLISECONDS),
                slow));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
        awaitIdle();
        assertEquals(List.of(completion(PROMPT, 4)), texts(unary("ModelInfer", greedy(PROMPT, 4),
                ModelInferResponse.getDefaultInstance()), 0));
    }

    @Test
    void aCancelledStreamFreesItsEngineRequest() throws Exception {
        CountDownLatch first = new CountDownLatch(1);
        ClientCall<ModelInferRequest, ModelStreamInferResponse> call = channel.newCall(STREAM, CallOptions.DEFAULT);
        StreamObserver<ModelInferRequest> out = ClientCalls.asyncBidiStreamingCall(call, new StreamObserver<>() {
            @Override
            public void onNext(ModelStreamInferResponse r) {
                first.countDown();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        });
        out.onNext(greedy(PROMPT, 100).toBuilder().putParameters("min_length",
                InferParameter.newBuilder().setInt64Param(100).build()).build());
        assertTrue(first.await(60, TimeUnit.SECONDS), "a first response");
        call.cancel("the client gives up", null);
        awaitIdle();
    }

    /** The engine has no request running or waiting within 10 s. */
    private static void awaitIdle() throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until) {
            var s = server.model().engine().stats();
            if (s.running() == 0 && s.waiting() == 0) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the engine still has requests: " + server.model().engine().stats());
    }

    @Test
    void twentyConcurrentStreams() throws Exception {
        List<CompletableFuture<String>> futures = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String p = "Story " + i + ":";
            futures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return concatenated(stream(List.of(greedy(p, 8))));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (int i = 0; i < 20; i++) {
            assertEquals(completion("Story " + i + ":", 8), futures.get(i).get(120, TimeUnit.SECONDS));
        }
        ModelStatisticsResponse stats = unary("ModelStatistics", ModelStatisticsRequest.newBuilder().setName(model).build(),
                ModelStatisticsResponse.getDefaultInstance());
        assertTrue(stats.getModelStats(0).getInferenceStats().getSuccess().getCount() >= 20);
        assertFalse(stats.getModelStats(0).getName().isEmpty());
    }

    @Test
    void theApiKeyIsCheckedOnMetadata() throws Exception {
        try (TestServer guarded = TestServer.withGrpc("--threads", "1", "--api-key", "sekret")) {
            ManagedChannel c = Grpc.newChannelBuilder("127.0.0.1:" + guarded.server().grpcPort(),
                    InsecureChannelCredentials.create()).build();
            try {
                MethodDescriptor<ModelMetadataRequest, ModelMetadataResponse> m = method("ModelMetadata",
                        MethodDescriptor.MethodType.UNARY, ModelMetadataRequest.getDefaultInstance(),
                        ModelMetadataResponse.getDefaultInstance());
                ModelMetadataRequest q = ModelMetadataRequest.newBuilder().setName(guarded.model().name()).build();
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                        () -> ClientCalls.blockingUnaryCall(c, m, CallOptions.DEFAULT, q));
                assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode());
                Metadata auth = new Metadata();
                auth.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer sekret");
                var authed = io.grpc.ClientInterceptors.intercept(c, MetadataUtils.newAttachHeadersInterceptor(auth));
                assertEquals(guarded.model().name(), ClientCalls.blockingUnaryCall(authed, m, CallOptions.DEFAULT, q).getName());
                // health stays open
                assertTrue(ClientCalls.blockingUnaryCall(c, method("ServerLive", MethodDescriptor.MethodType.UNARY,
                        ServerLiveRequest.getDefaultInstance(), ServerLiveResponse.getDefaultInstance()), CallOptions.DEFAULT,
                        ServerLiveRequest.getDefaultInstance()).getLive());
            } finally {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void twoRequestsOnOneStreamEachEndWithTheirFinalFlagAndLogProbsComeOnce() throws Exception {
        ModelInferRequest a = greedy(PROMPT, 6).toBuilder().setId("a").putParameters("return_log_probs", bool(true))
                .putParameters("triton_enable_empty_final_response", bool(true)).build();
        ModelInferRequest b = greedy("The little dog", 5).toBuilder().setId("b").build();
        List<ModelStreamInferResponse> got = stream(List.of(a, b));
        for (String id : List.of("a", "b")) {
            List<ModelStreamInferResponse> mine = got.stream().filter(r -> r.getInferResponse().getId().equals(id)).toList();
            assertTrue(mine.getLast().getInferResponse().getParametersMap().get("triton_final_response").getBoolParam(), id);
            assertEquals(1, mine.stream().filter(r -> r.getInferResponse().getParametersMap()
                    .get("triton_final_response").getBoolParam()).count(), id);
        }
        List<ModelStreamInferResponse> mineA = got.stream().filter(r -> r.getInferResponse().getId().equals("a")).toList();
        assertEquals(completion(PROMPT, 6), concatenated(mineA));
        assertEquals(completion("The little dog", 5), concatenated(got.stream()
                .filter(r -> r.getInferResponse().getId().equals("b")).toList()));
        // each streamed response carries the log-probs of the tokens it adds: 6 in all, none twice
        long logprobs = 0;
        for (ModelStreamInferResponse r : mineA) {
            ModelInferResponse x = r.getInferResponse();
            for (int o = 0; o < x.getOutputsCount(); o++) {
                if (x.getOutputs(o).getName().equals("output_log_probs")) {
                    logprobs += x.getOutputs(o).getShape(1);
                }
            }
        }
        assertEquals(6, logprobs);
    }

    @Test
    void requestedOutputsParametersAndTritonsReservedOnes() {
        ModelInferRequest onlyText = greedy(PROMPT, 4).toBuilder().putParameters("return_log_probs", bool(true))
                .addOutputs(ModelInferRequest.InferRequestedOutputTensor.newBuilder().setName("text_output")).build();
        ModelInferResponse r = unary("ModelInfer", onlyText, ModelInferResponse.getDefaultInstance());
        assertEquals(1, r.getOutputsCount());
        assertEquals("text_output", r.getOutputs(0).getName());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> unary("ModelInfer",
                greedy(PROMPT, 4).toBuilder().addOutputs(ModelInferRequest.InferRequestedOutputTensor.newBuilder()
                        .setName("logits")).build(), ModelInferResponse.getDefaultInstance()));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        // text_input as a request parameter, and a 64-bit seed
        ModelInferRequest asParameters = ModelInferRequest.newBuilder().setModelName(model)
                .putParameters("text_input", InferParameter.newBuilder().setStringParam(PROMPT).build())
                .putParameters("max_tokens", InferParameter.newBuilder().setInt64Param(3).build())
                .putParameters("random_seed", InferParameter.newBuilder().setUint64Param(1L << 40).build()).build();
        assertEquals(1, texts(unary("ModelInfer", asParameters, ModelInferResponse.getDefaultInstance()), 0).size());
        StatusRuntimeException seq = assertThrows(StatusRuntimeException.class, () -> unary("ModelInfer",
                greedy(PROMPT, 4).toBuilder().putParameters("sequence_id", InferParameter.newBuilder().setInt64Param(7)
                        .build()).build(), ModelInferResponse.getDefaultInstance()));
        assertEquals(Status.Code.INVALID_ARGUMENT, seq.getStatus().getCode());
        assertTrue(seq.getStatus().getDescription().contains("sequence batching"));
    }
}
