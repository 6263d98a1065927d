package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.BadRequestException;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.CpuForward;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.KvStorage;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.gguf.GgufWriter;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/embeddings} through the official OpenAI Java SDK: stories260K served with
 * {@code --task embed} (last-token pooling, normalised) and a copy of it whose GGUF declares
 * {@code llama.pooling_type = 1} (mean, detected without a flag); every input form; base64 equals
 * float; a batch equals one-by-one requests; each vector against a reference computed here from the
 * model's own final hidden states; a generative model without {@code --task embed} answers 400.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddingsApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TEXT = "Once upon a time, there was a little girl.";
    @TempDir
    static Path dir;
    private static TestServer last;
    private static TestServer mean;
    private static CpuModel model;

    @BeforeAll
    static void start() throws Exception {
        Path meanModel = dir.resolve("stories-mean.gguf");
        try (GgufFile f = GgufFile.open(TestModels.stories260K())) {
            GgufWriter w = new GgufWriter().putAll(f.metadata()).putUInt32("llama.pooling_type", 1);
            for (GgufTensorInfo t : f.tensors()) {
                w.addTensor(t.name(), t.type(), t.dims(), f.tensorData(t));
            }
            w.write(meanModel);
        }
        last = TestServer.start("--served-model-name", "m", "--task", "embed", "--threads", "1");
        mean = TestServer.start("--model", meanModel.toString(), "--served-model-name", "m", "--threads", "1",
                "--max-num-batched-tokens", "8");   // chunked: the mean spans several prefill chunks
        model = CpuModel.open(TestModels.stories260K());
    }

    @AfterAll
    static void stop() {
        last.close();
        mean.close();
        model.close();
    }

    private static OpenAIClient client(TestServer s) {
        return OpenAIOkHttpClient.builder().baseUrl(s.url("/v1")).apiKey("x").maxRetries(0)
                .timeout(Duration.ofSeconds(60)).build();
    }

    /** The model's final hidden states of {@code tokens}, one token at a time (F16 KV, as served); pooled; L2-normalised. */
    private static float[] reference(int[] tokens, boolean meanPooling) {
        CpuForward f = model.forward(Kernels.provider(), RangeRunner.SERIAL, 256);
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(32, 16, 0, 1));
        KvStorage kv = new KvStorage(model.config(), 32, 16, io.nereid.engine.backend.KvPrecision.F16);   // the server's
        BlockTable t = cache.newTable(0);
        int dim = model.config().dim();
        float[] pooled = new float[dim];
        for (int i = 0; i < tokens.length; i++) {
            t.append(new int[] {tokens[i]});
            float[] h = f.step(List.of(new Slice(new int[] {tokens[i]}, i, t.blockIds(), 1, true)), kv).hidden()[0];
            for (int d = 0; d < dim; d++) {
                pooled[d] = meanPooling ? pooled[d] + h[d] : h[d];
            }
        }
        double norm = 0;
        for (int d = 0; d < dim; d++) {
            pooled[d] = meanPooling ? pooled[d] / tokens.length : pooled[d];
            norm += (double) pooled[d] * pooled[d];
        }
        for (int d = 0; d < dim; d++) {
            pooled[d] = (float) (pooled[d] / Math.sqrt(norm));
        }
        return pooled;
    }

    private static float[] floats(List<Float> v) {
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i);
        }
        return out;
    }

    @Test
    void everyInputFormAgainstTheModelsOwnHiddenStates() {
        int[] ids = model.tokenizer().encode(TEXT, true, true);
        List<Long> idList = java.util.Arrays.stream(ids).mapToLong(i -> i).boxed().toList();
        for (boolean meanPooling : new boolean[] {false, true}) {
            OpenAIClient c = client(meanPooling ? mean : last);
            try {
                float[] expected = reference(ids, meanPooling);
                CreateEmbeddingResponse one = c.embeddings().create(EmbeddingCreateParams.builder().model("m").input(TEXT)
                        .build());
                one.validate();
                assertEquals(ids.length, one.usage().promptTokens());
                assertArrayEquals(expected, floats(one.data().getFirst().embedding()), 1e-5f, "string, mean " + meanPooling);
                CreateEmbeddingResponse tokens = c.embeddings().create(EmbeddingCreateParams.builder().model("m")
                        .inputOfArrayOfTokens(idList).build());
                assertArrayEquals(expected, floats(tokens.data().getFirst().embedding()), 1e-5f, "token ids");
                CreateEmbeddingResponse batch = c.embeddings().create(EmbeddingCreateParams.builder().model("m")
                        .inputOfArrayOfStrings(List.of("Lily", TEXT, "a dog")).build());
                assertEquals(3, batch.data().size());
                assertEquals(1, batch.data().get(1).index());
                // within rounding, not bit for bit: without --deterministic a lone short input's
                // products run in another order than a batch's (DeterministicEngineTest has the bits)
                assertArrayEquals(floats(one.data().getFirst().embedding()), floats(batch.data().get(1).embedding()),
                        1e-5f, "batched equals alone");
                CreateEmbeddingResponse alone = c.embeddings().create(EmbeddingCreateParams.builder().model("m")
                        .input("a dog").build());
                assertArrayEquals(floats(alone.data().getFirst().embedding()), floats(batch.data().get(2).embedding()),
                        1e-5f, "batched equals alone");
                CreateEmbeddingResponse arrays = c.embeddings().create(EmbeddingCreateParams.builder().model("m")
                        .inputOfArrayOfTokenArrays(List.of(idList, idList.subList(0, 3))).build());
                assertArrayEquals(expected, floats(arrays.data().getFirst().embedding()), 1e-5f, "token arrays");
                assertEquals(ids.length + 3, arrays.usage().totalTokens());
            } finally {
                c.close();
            }
        }
    }

    private static JsonNode post(TestServer s, String body, int status) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(s.url("/v1/embeddings")))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(status, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    @Test
    void base64IsTheLittleEndianFloatsOfTheSameVector() throws Exception {
        JsonNode f = post(last, "{\"model\":\"m\",\"input\":\"" + TEXT + "\",\"encoding_format\":\"float\"}", 200);
        JsonNode b = post(last, "{\"model\":\"m\",\"input\":\"" + TEXT + "\",\"encoding_format\":\"base64\"}", 200);
        byte[] raw = Base64.getDecoder().decode(b.get("data").get(0).get("embedding").asText());
        ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        JsonNode floats = f.get("data").get(0).get("embedding");
        assertEquals(floats.size() * 4, raw.length);
        for (int i = 0; i < floats.size(); i++) {
            assertEquals((float) floats.get(i).asDouble(), buf.getFloat(), "entry " + i);
        }
        assertEquals("list", f.get("object").asText());
        assertEquals("embedding", f.get("data").get(0).get("object").asText());
    }

    @Test
    void badRequestsAndAGenerativeModelWithoutTaskEmbedAre400s() throws Exception {
        for (String bad : List.of("{\"model\":\"m\"}", "{\"model\":\"m\",\"input\":\"\"}", "{\"model\":\"m\",\"input\":[]}",
                "{\"model\":\"m\",\"input\":[\"a\",[1,2]]}", "{\"model\":\"m\",\"input\":\"x\",\"encoding_format\":\"int8\"}",
                "{\"model\":\"m\",\"input\":\"x\",\"dimensions\":8}", "{\"model\":\"m\",\"input\":[99999]}")) {
            JsonNode e = post(last, bad, 400).get("error");
            assertEquals("invalid_request_error", e.get("type").asText(), bad);
        }
        assertEquals(404, HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(last.url("/v1/embeddings")))
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"other\",\"input\":\"x\"}")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
        try (TestServer generative = TestServer.start("--served-model-name", "m", "--threads", "1")) {
            OpenAIClient c = client(generative);
            try {
                BadRequestException e = assertThrows(BadRequestException.class, () -> c.embeddings().create(
                        EmbeddingCreateParams.builder().model("m").input("x").build()));
                assertTrue(e.getMessage().contains("--task embed"), e.getMessage());
            } finally {
                c.close();
            }
        }
    }
}
