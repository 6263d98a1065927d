package io.nereid.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.nereid.gateway.grpc.proto.InferParameter;
import io.nereid.gateway.grpc.proto.InferTensorContents;
import io.nereid.gateway.grpc.proto.ModelInferRequest;
import io.nereid.gateway.grpc.proto.ModelStreamInferResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code --endpoint grpc-stream}: each request is one KServe v2 {@code ModelStreamInfer} call (grpc-java,
 * as Triton's clients and GenAI-Perf's {@code --service-kind triton} call it) with the inputs the
 * kserve-generate body holds, as tensors; every response is a chunk, its text the BYTES element of
 * text_output; the call ends after the response flagged {@code triton_final_response}. Thread-safe:
 * one channel, many concurrent calls.
 */
final class GrpcStreamSender implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final MethodDescriptor<ModelInferRequest, ModelStreamInferResponse> STREAM =
            MethodDescriptor.<ModelInferRequest, ModelStreamInferResponse>newBuilder()
                    .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
                    .setFullMethodName("inference.GRPCInferenceService/ModelStreamInfer")
                    .setRequestMarshaller(ProtoUtils.marshaller(ModelInferRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(ModelStreamInferResponse.getDefaultInstance())).build();

    private final ManagedChannel channel;
    private final io.grpc.Channel calls;
    private final String model;
    private final double timeoutS;

    GrpcStreamSender(String target, String model, String apiKey, double timeoutS) {
        this.channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
        io.grpc.Channel c = channel;
        if (apiKey != null) {
            Metadata auth = new Metadata();
            auth.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + apiKey);
            c = io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(auth));
        }
        this.calls = c;
        this.model = model;
        this.timeoutS = timeoutS;
    }

    /** The request the kserve-generate {@code payload} describes. */
    ModelInferRequest request(String payload) {
        JsonNode body;
        try {
            body = JSON.readTree(payload);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        ModelInferRequest.Builder b = ModelInferRequest.newBuilder().setModelName(model);
        for (var it = body.properties().iterator(); it.hasNext(); ) {
            var e = it.next();
            JsonNode v = e.getValue();
            ModelInferRequest.InferInputTensor.Builder t = ModelInferRequest.InferInputTensor.newBuilder()
                    .setName(e.getKey()).addShape(1).addShape(1);
            if (v.isTextual()) {
                t.setDatatype("BYTES").setContents(InferTensorContents.newBuilder()
                        .addBytesContents(ByteString.copyFromUtf8(v.asText())));
                b.addInputs(t);
            } else if (v.isBoolean()) {
                b.putParameters(e.getKey(), InferParameter.newBuilder().setBoolParam(v.asBoolean()).build());
            } else if (v.isIntegralNumber() && v.canConvertToInt()) {
                t.setDatatype("INT32").setContents(InferTensorContents.newBuilder().addIntContents(v.asInt()));
                b.addInputs(t);
            } else if (v.isIntegralNumber()) {
                t.setDatatype("INT64").setContents(InferTensorContents.newBuilder().addInt64Contents(v.asLong()));
                b.addInputs(t);
            } else if (v.isNumber()) {
                t.setDatatype("FP32").setContents(InferTensorContents.newBuilder().addFp32Contents((float) v.asDouble()));
                b.addInputs(t);
            } else {
                throw new IllegalArgumentException("--extra-inputs: '" + e.getKey() + "' is not a string, number or"
                        + " boolean, which a gRPC tensor needs");
            }
        }
        return b.build();
    }

    /** Sends one request and records it; never throws. */
    RecordedRequest send(int id, String payload) {
        List<Chunk> chunks = java.util.Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<String> done = new CompletableFuture<>();   // null: ended well; else the error
        long sendNs = System.nanoTime();
        ClientCall<ModelInferRequest, ModelStreamInferResponse> call = null;
        try {
            call = calls.newCall(STREAM, CallOptions.DEFAULT.withDeadlineAfter((long) (timeoutS * 1e3), TimeUnit.MILLISECONDS));
            StreamObserver<ModelInferRequest> out = ClientCalls.asyncBidiStreamingCall(call, new StreamObserver<>() {
                @Override
                public void onNext(ModelStreamInferResponse r) {
                    long now = System.nanoTime();
                    if (!r.getErrorMessage().isEmpty()) {
                        done.complete(r.getErrorMessage());
                        return;
                    }
                    String text = text(r);
                    if (!text.isEmpty()) {   // the final response may carry no text: not a token's arrival
                        chunks.add(new Chunk(now, "{\"text_output\":" + quote(text) + "}", text));
                    }
                    InferParameter last = r.getInferResponse().getParametersMap().get("triton_final_response");
                    if (last != null && last.getBoolParam()) {
                        done.complete(null);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    done.complete("gRPC " + Status.fromThrowable(t));
                }

                @Override
                public void onCompleted() {
                    done.complete("stream ended without a final response");
                }
            });
            out.onNext(request(payload));
            String error;
            try {
                error = done.get((long) (timeoutS * 1e3) + 1000, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                call.cancel("bench timeout", null);
                return new RecordedRequest(id, payload, sendNs, chunks, -1, 0, "timeout after " + timeoutS + " s", -1, -1);
            }
            long endNs = System.nanoTime();
            out.onCompleted();
            return new RecordedRequest(id, payload, sendNs, chunks, endNs, error == null ? 200 : 0, error, -1, -1);
        } catch (InterruptedException e) {
            if (call != null) {
                call.cancel("bench interrupted", null);
            }
            return new RecordedRequest(id, payload, sendNs, chunks, System.nanoTime(), 0, "interrupted", -1, -1);
        } catch (ExecutionException | RuntimeException e) {
            return new RecordedRequest(id, payload, sendNs, chunks, System.nanoTime(), 0, "gRPC: " + e.getMessage(), -1, -1);
        }
    }

    /** text_output of a response: raw_output_contents (length-prefixed) or bytes_contents. */
    static String text(ModelStreamInferResponse r) {
        var resp = r.getInferResponse();
        for (int i = 0; i < resp.getOutputsCount(); i++) {
            if (!resp.getOutputs(i).getName().equals("text_output")) {
                continue;
            }
            StringBuilder s = new StringBuilder();
            if (i < resp.getRawOutputContentsCount()) {
                ByteBuffer b = resp.getRawOutputContents(i).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                while (b.remaining() >= 4) {
                    byte[] x = new byte[b.getInt()];
                    b.get(x);
                    s.append(new String(x, StandardCharsets.UTF_8));
                }
            } else {
                resp.getOutputs(i).getContents().getBytesContentsList().forEach(x -> s.append(x.toStringUtf8()));
            }
            return s.toString();
        }
        return "";
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
