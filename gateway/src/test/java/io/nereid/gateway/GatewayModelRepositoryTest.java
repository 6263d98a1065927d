package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.nereid.gateway.grpc.proto.InferTensorContents;
import io.nereid.gateway.grpc.proto.ModelInferRequest;
import io.nereid.gateway.grpc.proto.ModelInferResponse;
import io.nereid.gateway.grpc.proto.ModelRepositoryParameter;
import io.nereid.gateway.grpc.proto.RepositoryIndexRequest;
import io.nereid.gateway.grpc.proto.RepositoryIndexResponse;
import io.nereid.gateway.grpc.proto.RepositoryModelLoadRequest;
import io.nereid.gateway.grpc.proto.RepositoryModelUnloadRequest;
import io.nereid.gateway.http.GatewayServer;
import io.nereid.gateway.http.ModelService;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model repository ({@code --model-repository}) on a real server on loopback: two models of
 * different architectures (stories260K, a llama; a generated qwen3) served at once and routed by
 * name over OpenAI, KServe HTTP and gRPC; the index and its states; explicit load and unload over
 * HTTP and gRPC (grpc-java); an unload while a request is in flight lets it finish, refuses new
 * ones with 503, then frees the model, which loads again; a load that would pass the memory limit
 * is refused with the figures and fits once another model is unloaded; control mode none refuses
 * load and unload; metrics carry each model's label under one HELP per family.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class GatewayModelRepositoryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "Once upon a time";

    @TempDir
    static Path repo;
    private static long storiesBytes;
    private static long qwenBytes;

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private GatewayServer server;
    private ModelCatalog catalog;
    private final List<ModelService> startup = new ArrayList<>();
    private volatile FaultInjectingBackend qwenBackend;

    @BeforeAll
    static void repository() throws Exception {
        Path stories = Files.createDirectories(repo.resolve("stories"));
        Files.copy(TestModels.stories260K(), stories.resolve("stories260K.gguf"));
        Files.writeString(stories.resolve("nereid.json"), "{\"kv_cache_memory\": \"256KiB\", \"max_num_seqs\": 4}");
        Path qwen = Files.createDirectories(repo.resolve("qwen"));
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.QWEN3, 64, 2, 4, 2, 128, 400, 512, GgmlType.Q8_0,
                true, 7), qwen.resolve("qwen3-tiny.gguf"));
        Files.writeString(qwen.resolve("nereid.json"), "{\"kv_cache_memory\": 262144, \"max_model_len\": 256}");
        Path third = Files.createDirectories(repo.resolve("third"));
        Files.copy(qwen.resolve("qwen3-tiny.gguf"), third.resolve("model.gguf"));
        Files.writeString(third.resolve("nereid.json"), "{\"kv_cache_memory\": \"256KiB\"}");
        Path broken = Files.createDirectories(repo.resolve("broken"));
        Files.writeString(broken.resolve("nereid.json"), "{\"max_num_seqz\": 4}");
        Files.createDirectories(repo.resolve(".hidden"));
        // What each model takes (files, weight copies + the KV cache it gets), measured by loading it once.
        ModelCatalog probe = new ModelCatalog(config("--model-control-mode", "explicit"), UnaryOperator.identity());
        for (String name : List.of("stories", "qwen")) {
            ServingModel m = (ServingModel) probe.load(name);
            long bytes = ModelCatalog.fileBytes(probe.configFor(name).model()) + m.weightCopyBytes() + m.kvCacheBytes();
            m.close();
            if (name.equals("stories")) {
                storiesBytes = bytes;
            } else {
                qwenBytes = bytes;
            }
        }
    }

    private static ServeConfig config(String... options) {
        List<String> args = new ArrayList<>(List.of("--model-repository", repo.toString(), "--port", "0", "--threads", "1",
                "--drain-timeout", "30"));
        args.addAll(List.of(options));
        return ServeConfig.parse(args, Map.of());
    }

    /** Starts a server as {@code serve} does: the startup models loaded, gRPC on an ephemeral port. */
    private void start(String... options) throws Exception {
        ServeConfig c = config(options);
        catalog = new ModelCatalog(c, spec -> spec.model().toString().contains("qwen3-tiny") && !spec.model().toString()
                .contains("third") ? spec.withBackendDecorator(b -> qwenBackend = new FaultInjectingBackend(b)) : spec);
        Map<String, String> failed = new LinkedHashMap<>();
        for (String name : ServeCommand.startupModels(c.repository(), catalog.names())) {
            try {
                startup.add(catalog.load(name));
            } catch (RuntimeException e) {
                failed.put(name, e.getMessage());
            }
        }
        server = GatewayServer.start(catalog, startup, failed, c.gateway(), "127.0.0.1", 0, 0);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
            server.closeModels();
        }
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(60)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String completion(String model, int maxTokens) {
        return "{\"model\": \"" + model + "\", \"prompt\": \"" + PROMPT + "\", \"max_tokens\": " + maxTokens
                + ", \"temperature\": 0, \"ignore_eos\": true}";
    }

    private String text(String model, int maxTokens) throws Exception {
        HttpResponse<String> r = post("/v1/completions", completion(model, maxTokens));
        assertEquals(200, r.statusCode(), r.body());
        JsonNode j = JSON.readTree(r.body());
        assertEquals(model, j.get("model").asText());
        return j.get("choices").get(0).get("text").asText();
    }

    /** name -> [state, reason] from {@code POST /v2/repository/index}. */
    private Map<String, List<String>> index(String body) throws Exception {
        HttpResponse<String> r = post("/v2/repository/index", body);
        assertEquals(200, r.statusCode(), r.body());
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (JsonNode e : JSON.readTree(r.body())) {
            assertEquals("1", e.get("version").asText());
            out.put(e.get("name").asText(), List.of(e.get("state").asText(), e.get("reason").asText()));
        }
        return out;
    }

    private void awaitState(String model, String state) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!index("").get(model).getFirst().equals(state)) {
            assertTrue(System.nanoTime() < deadline, model + " did not become " + state + ": " + index(""));
            Thread.sleep(20);
        }
    }

    @Test
    void twoModelsOfDifferentArchitecturesAreServedAtOnceAndRoutedByName() throws Exception {
        start("--model-control-mode", "explicit", "--load-model", "stories");
        assertEquals(List.of("READY", ""), index("{}").get("stories"));
        assertEquals("UNAVAILABLE", index("{}").get("qwen").getFirst());
        assertEquals(List.of("broken", "qwen", "stories", "third"), List.copyOf(index("").keySet()), "no hidden folders");

        HttpResponse<String> load = post("/v2/repository/models/qwen/load", "");
        assertEquals(200, load.statusCode(), load.body());
        assertEquals("", load.body());
        assertEquals(List.of("qwen", "stories"), List.copyOf(index("{\"ready\": true}").keySet()));

        JsonNode models = JSON.readTree(get("/v1/models").body()).get("data");
        assertEquals(List.of("stories", "qwen"), List.of(models.get(0).get("id").asText(), models.get(1).get("id").asText()));
        // Each request reaches its own model: stories260K gives llama.cpp's greedy text; the qwen3 model its own.
        assertEquals(TestModels.ONCE_UPON_A_TIME_12, text("stories", 12));
        String qwen = text("qwen", 12);
        assertNotEquals(TestModels.ONCE_UPON_A_TIME_12, qwen);
        // ... over KServe HTTP and gRPC too, with the same greedy text.
        HttpResponse<String> gen = post("/v2/models/qwen/generate", "{\"text_input\": \"" + PROMPT + "\", \"max_tokens\": 12,"
                + " \"temperature\": 0, \"ignore_eos\": true, \"exclude_input_in_output\": true}");
        assertEquals(200, gen.statusCode(), gen.body());
        assertEquals(qwen, JSON.readTree(gen.body()).get("text_output").asText());
        assertEquals("qwen", JSON.readTree(get("/v2/models/qwen").body()).get("name").asText());
        assertEquals(200, get("/v2/models/qwen/ready").statusCode());
        assertEquals(404, get("/v2/models/third/ready").statusCode(), "not loaded");
        ManagedChannel channel = channel();
        try {
            ModelInferResponse r = stub(channel).modelInfer(ModelInferRequest.newBuilder().setModelName("stories")
                    .addInputs(bytes("text_input", PROMPT)).addInputs(int32("max_tokens", 12)).addInputs(temperature(0))
                    .build());
            assertEquals("stories", r.getModelName());
            assertEquals(PROMPT + TestModels.ONCE_UPON_A_TIME_12, text(r.getRawOutputContents(0)), "the prompt, then the text");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        // One model's unknown name is still a 404, a bad request still a 400 first.
        HttpResponse<String> unknown = post("/v1/completions", completion("nope", 4));
        assertEquals(404, unknown.statusCode(), unknown.body());
        assertEquals(400, post("/v1/completions", "{\"model\": \"nope\", \"prompt\": \"x\", \"max_tokens\": -1}")
                .statusCode());
        // tokenize needs a model name when several are served
        HttpResponse<String> tok = post("/tokenize", "{\"prompt\": \"hi\"}");
        assertEquals(400, tok.statusCode(), tok.body());
        assertTrue(tok.body().contains("serves 2 models"), tok.body());
        assertEquals(200, post("/tokenize", "{\"model\": \"qwen\", \"prompt\": \"hi\"}").statusCode());

        // Metrics: both models' series, each family described once.
        String metrics = get("/metrics").body();
        assertTrue(metrics.contains("vllm:num_requests_running{model_name=\"stories\"}"), metrics);
        assertTrue(metrics.contains("vllm:num_requests_running{model_name=\"qwen\"}"), metrics);
        assertTrue(metrics.contains("nv_inference_request_success{model=\"qwen\",version=\"1\"}"), metrics);
        assertEquals(1, metrics.split("# HELP vllm:num_requests_running ", -1).length - 1, metrics);
        assertEquals(1, metrics.split("# TYPE vllm:time_to_first_token_seconds ", -1).length - 1);
    }

    @Test
    void anUnloadLetsInFlightRequestsFinishRefusesNewOnesThenFreesTheModelWhichLoadsAgain() throws Exception {
        start("--model-control-mode", "explicit", "--load-model", "*");
        assertEquals("READY", index("").get("qwen").getFirst());
        assertEquals("UNAVAILABLE", index("").get("broken").getFirst());
        assertTrue(index("").get("broken").get(1).contains("unknown key max_num_seqz"), index("").toString());
        String before = text("qwen", 8);

        qwenBackend.holdNext();
        CompletableFuture<HttpResponse<String>> inflight = client.sendAsync(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + server.port() + "/v1/completions")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        completion("qwen", 8))).build(), HttpResponse.BodyHandlers.ofString());
        qwenBackend.awaitHeld();
        HttpResponse<String> unload = post("/v2/repository/models/qwen/unload", "{}");
        assertEquals(200, unload.statusCode(), unload.body());
        assertEquals("UNLOADING", index("").get("qwen").getFirst());
        HttpResponse<String> refused = post("/v1/completions", completion("qwen", 4));
        assertEquals(503, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("model_unloading"), refused.body());
        assertEquals(503, get("/v2/models/qwen/ready").statusCode());
        assertFalse(get("/v1/models").body().contains("\"qwen\""));
        assertEquals(TestModels.ONCE_UPON_A_TIME_12, text("stories", 12), "the other model serves on");

        qwenBackend.release();
        HttpResponse<String> finished = inflight.get(60, TimeUnit.SECONDS);
        assertEquals(200, finished.statusCode(), finished.body());
        assertEquals(before, JSON.readTree(finished.body()).get("choices").get(0).get("text").asText());
        awaitState("qwen", "UNAVAILABLE");
        assertEquals("unloaded", index("").get("qwen").get(1));
        assertEquals(404, post("/v1/completions", completion("qwen", 4)).statusCode());
        assertEquals(404, post("/v2/models/qwen/generate", "{\"text_input\": \"x\"}").statusCode());
        HttpResponse<String> again = post("/v2/repository/models/qwen/unload", "");
        assertEquals(400, again.statusCode(), again.body());
        assertTrue(again.body().contains("is not loaded"), again.body());

        assertEquals(200, post("/v2/repository/models/qwen/load", "").statusCode());
        assertEquals(before, text("qwen", 8), "the reloaded model gives the same greedy text");
        HttpResponse<String> missing = post("/v2/repository/models/nope/load", "");
        assertEquals(404, missing.statusCode(), missing.body());
        HttpResponse<String> bad = post("/v2/repository/models/broken/load", "");
        assertEquals(400, bad.statusCode(), bad.body());
        assertTrue(bad.body().contains("max_num_seqz"), bad.body());
        HttpResponse<String> params = post("/v2/repository/models/qwen/load", "{\"parameters\": {\"config\": \"{}\"}}");
        assertEquals(400, params.statusCode(), params.body());
        assertTrue(params.body().contains("config"), params.body());
    }

    @Test
    void anUnloadWhoseDrainTimesOutCancelsWhatIsLeftWithAnInBandError() throws Exception {
        start("--model-control-mode", "explicit", "--load-model", "qwen", "--drain-timeout", "1");
        qwenBackend.holdNext();
        CompletableFuture<HttpResponse<String>> stream = client.sendAsync(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + server.port() + "/v1/completions")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        "{\"model\": \"qwen\", \"prompt\": \"hi\", \"max_tokens\": 50, \"stream\": true}")).build(),
                HttpResponse.BodyHandlers.ofString());
        qwenBackend.awaitHeld();
        assertEquals(200, post("/v2/repository/models/qwen/unload", "").statusCode());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!index("").get("qwen").get(1).contains("cancelling 1 requests")) {
            assertTrue(System.nanoTime() < deadline, index("").toString());
            Thread.sleep(20);
        }
        qwenBackend.release();
        HttpResponse<String> r = stream.get(60, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode());
        assertTrue(r.body().contains("the model 'qwen' was unloaded before the request finished"), r.body());
        assertTrue(r.body().endsWith("data: [DONE]\n\n"), r.body());
        awaitState("qwen", "UNAVAILABLE");
        assertEquals(0, server.inflight());
    }

    @Test
    void aModelWhoseEngineFailsIsTakenOutWhileTheOthersServeOnAndLoadsAgain() throws Exception {
        start("--model-control-mode", "explicit", "--load-model", "*");
        String before = text("qwen", 6);
        qwenBackend.breakForGood();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!index("").get("qwen").getFirst().equals("UNAVAILABLE")) {
            assertTrue(System.nanoTime() < deadline, index("").toString());
            HttpResponse<String> r = post("/v1/completions", completion("qwen", 2));   // each fails its step
            assertTrue(r.statusCode() >= 500 || r.statusCode() == 404 || r.body().contains("error"), r.body());
            Thread.sleep(20);
        }
        assertTrue(index("").get("qwen").get(1).contains("the engine stopped after a failure"), index("").toString());
        assertEquals(TestModels.ONCE_UPON_A_TIME_12, text("stories", 12), "the other model serves on");
        assertEquals(200, get("/health").statusCode());
        assertEquals(200, get("/health/ready").statusCode());
        assertEquals(404, post("/v1/completions", completion("qwen", 2)).statusCode());
        assertEquals(200, post("/v2/repository/models/qwen/load", "").statusCode());
        assertEquals(before, text("qwen", 6), "loaded again on a fresh backend");
    }

    @Test
    void aLoadThatWouldPassTheMemoryLimitIsRefusedWithTheFiguresAndFitsOnceAnotherIsUnloaded() throws Exception {
        // Room for stories and qwen, not for a third model of qwen's size.
        start("--model-control-mode", "explicit", "--load-model", "stories", "--load-model", "qwen",
                "--memory-limit", Long.toString(storiesBytes + qwenBytes + 1024));
        HttpResponse<String> r = post("/v2/repository/models/third/load", "");
        assertEquals(400, r.statusCode(), r.body());
        String error = JSON.readTree(r.body()).get("error").asText();
        assertTrue(error.contains("model 'third' does not fit the memory limit"), error);
        assertTrue(error.contains("stories") && error.contains("qwen") && error.contains("MiB"), error);
        assertEquals(List.of("UNAVAILABLE", error), index("").get("third"));

        ManagedChannel channel = channel();
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> stub(channel)
                    .repositoryModelLoad(RepositoryModelLoadRequest.newBuilder().setModelName("third").build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().contains("does not fit"), e.getStatus().getDescription());
            stub(channel).repositoryModelUnload(RepositoryModelUnloadRequest.newBuilder().setModelName("qwen").build());
            // asked after the unload, the load runs after it and finds the memory it freed
            stub(channel).repositoryModelLoad(RepositoryModelLoadRequest.newBuilder().setModelName("third").build());
            RepositoryIndexResponse idx = stub(channel).repositoryIndex(RepositoryIndexRequest.newBuilder().setReady(true)
                    .build());
            assertEquals(List.of("stories", "third"), idx.getModelsList().stream().map(m -> m.getName()).toList());
            assertEquals("READY", idx.getModels(1).getState());
            StatusRuntimeException params = assertThrows(StatusRuntimeException.class, () -> stub(channel)
                    .repositoryModelLoad(RepositoryModelLoadRequest.newBuilder().setModelName("qwen")
                            .putParameters("config", ModelRepositoryParameter.newBuilder().setStringParam("{}").build())
                            .build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, params.getStatus().getCode());
            StatusRuntimeException notFound = assertThrows(StatusRuntimeException.class, () -> stub(channel)
                    .repositoryModelUnload(RepositoryModelUnloadRequest.newBuilder().setModelName("nope").build()));
            assertEquals(Status.Code.NOT_FOUND, notFound.getStatus().getCode());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertTrue(text("third", 4).length() > 0);
    }

    @Test
    void controlModeNoneLoadsEveryModelAtStartupAndRefusesLoadAndUnload() throws Exception {
        start();
        Map<String, List<String>> idx = index("");
        assertEquals("READY", idx.get("stories").getFirst());
        assertEquals("READY", idx.get("qwen").getFirst());
        assertEquals("READY", idx.get("third").getFirst());
        assertEquals("UNAVAILABLE", idx.get("broken").getFirst());
        for (String action : List.of("load", "unload")) {
            HttpResponse<String> r = post("/v2/repository/models/qwen/" + action, "");
            assertEquals(400, r.statusCode(), r.body());
            assertTrue(r.body().contains("model control is disabled"), r.body());
        }
        assertEquals(200, get("/v2/health/ready").statusCode());
        assertTrue(JSON.readTree(get("/v2").body()).get("extensions").toString().contains("model_repository"));
    }

    @Test
    void theFlagsAreCheckedTogether() {
        assertThrows(IllegalArgumentException.class, () -> ServeConfig.parse(List.of("--load-model", "a"), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> config("--model", TestModels.stories260K().toString()));
        assertThrows(IllegalArgumentException.class, () -> config("--load-model", "qwen"), "needs explicit");
        assertThrows(IllegalArgumentException.class, () -> config("--model-control-mode", "explicit", "--load-model", "*",
                "--load-model", "qwen"));
        assertThrows(IllegalArgumentException.class, () -> config("--model-control-mode", "poll"));
        assertThrows(IllegalArgumentException.class, () -> config("--served-model-name", "x"));
        assertThrows(IllegalArgumentException.class, () -> ServeConfig.parse(List.of("--model",
                TestModels.stories260K().toString(), "--memory-limit", "1GiB"), Map.of()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ServeCommand.startupModels(
                config("--model-control-mode", "explicit", "--load-model", "nope").repository(),
                List.of("qwen", "stories")));
        assertTrue(e.getMessage().contains("has no folder 'nope' (it has: qwen, stories)"), e.getMessage());
        ServeConfig c = config("--model-control-mode", "explicit", "--load-model", "qwen", "--load-model", "stories",
                "--memory-limit", "2GiB");
        assertEquals(List.of("qwen", "stories"), c.repository().loadModels());
        assertEquals(2L << 30, c.memoryLimit());
        assertTrue(c.repository().explicit());
    }

    // ---- gRPC (grpc-java's generated stubs) --------------------------------------------------------------------------

    private ManagedChannel channel() {
        return Grpc.newChannelBuilder("127.0.0.1:" + server.grpcPort(), InsecureChannelCredentials.create()).build();
    }

    /** grpc-java's generated blocking stub. */
    private static GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub(ManagedChannel channel) {
        return GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    private static ModelInferRequest.InferInputTensor bytes(String name, String value) {
        return ModelInferRequest.InferInputTensor.newBuilder().setName(name).setDatatype("BYTES").addShape(1).addShape(1)
                .setContents(InferTensorContents.newBuilder().addBytesContents(ByteString.copyFromUtf8(value))).build();
    }

    private static ModelInferRequest.InferInputTensor int32(String name, int v) {
        return ModelInferRequest.InferInputTensor.newBuilder().setName(name).setDatatype("INT32").addShape(1).addShape(1)
                .setContents(InferTensorContents.newBuilder().addIntContents(v)).build();
    }

    private static ModelInferRequest.InferInputTensor temperature(float v) {
        return ModelInferRequest.InferInputTensor.newBuilder().setName("temperature").setDatatype("FP32").addShape(1)
                .addShape(1).setContents(InferTensorContents.newBuilder().addFp32Contents(v)).build();
    }

    /** The first element of a raw BYTES tensor (4-byte little-endian length, then the bytes). */
    private static String text(ByteString raw) throws IOException {
        byte[] b = raw.toByteArray();
        int n = (b[0] & 0xff) | (b[1] & 0xff) << 8 | (b[2] & 0xff) << 16 | (b[3] & 0xff) << 24;
        return new String(b, 4, n, StandardCharsets.UTF_8);
    }
}
