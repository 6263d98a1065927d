package io.nereid.engine.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nereid.engine.Fixtures;
import io.nereid.engine.api.EngineException;
import io.nereid.engine.api.FinishReason;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.Pooling;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.api.TokenLogprob;
import io.nereid.engine.api.TokenSink;
import io.nereid.engine.api.Usage;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.CpuForward;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.KvStorage;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Embedding requests through the engine on stories260K against a hand computation: every prompt
 * position's final hidden state (after the output norm) from the single-sequence forward, one token
 * at a time, then pooled (mean, first, last) in the test. The engine's result must not depend on the
 * prefill chunk size, on other requests in the same steps, or on a prefix-cache hit.
 */
@Timeout(120)
class EmbeddingPoolingTest {

    private static final int CONTEXT = 256;
    private static CpuModel model;
    private static int[] prompt;
    private static float[][] hidden;   // (prompt length, dim)

    @BeforeAll
    static void computeByHand() {
        model = CpuModel.open(Fixtures.path("models/stories260K.gguf"));
        prompt = model.tokenizer().encode("Once upon a time, there was a little girl named Lily. She loved to play"
                + " outside in the park with her friends.", true, true);
        CpuForward f = model.forward(Kernels.provider(), RangeRunner.SERIAL, CONTEXT);
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(32, 16, 0, 1));
        KvStorage kv = new KvStorage(model.config(), 32, 16);
        BlockTable t = cache.newTable(0);
        hidden = new float[prompt.length][];
        for (int i = 0; i < prompt.length; i++) {
            t.append(new int[] {prompt[i]});
            hidden[i] = f.step(List.of(new Slice(new int[] {prompt[i]}, i, t.blockIds(), 1, true)), kv).hidden()[0];
        }
    }

    @AfterAll
    static void close() {
        model.close();
    }

    private static float[] reference(Pooling p) {
        int dim = hidden[0].length;
        return switch (p) {
            case CLS -> hidden[0];
            case LAST -> hidden[prompt.length - 1];
            case MEAN -> {
                float[] sum = new float[dim];
                for (float[] h : hidden) {
                    for (int d = 0; d < dim; d++) {
                        sum[d] += h[d];
                    }
                }
                for (int d = 0; d < dim; d++) {
                    sum[d] /= prompt.length;
                }
                yield sum;
            }
        };
    }

    private static InflightEngine engine(int budget, boolean prefixCaching) {
        EngineConfig config = new EngineConfig(8, budget, 16, CONTEXT, 64, 16, 0.01, prefixCaching, true);
        return new InflightEngine(config, model.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F32,
                config.numBlocks(), config.blockSize(), CONTEXT), model.tokenizer());
    }

    /** What an embedding request's sink received: the vector, then the finish. */
    static final class Vector implements TokenSink {
        final CompletableFuture<float[]> vector = new CompletableFuture<>();
        final List<String> events = new ArrayList<>();
        Usage usage;

        @Override
        public void onDelta(int choice, String text, int[] tokenIds, List<TokenLogprob> logprobs) {
            events.add("delta");
        }

        @Override
        public void onEmbedding(float[] v) {
            events.add("embedding");
            vector.complete(v);
        }

        @Override
        public void onFinish(int choice, FinishReason reason, Object stopReason, Usage u) {
            events.add("finish " + reason);
            usage = u;
            vector.complete(null);
        }

        @Override
        public void onError(int choice, EngineException error) {
            vector.completeExceptionally(error);
        }
    }

    private static float[] embed(InflightEngine e, String id, Pooling p) throws Exception {
        Vector sink = new Vector();
        e.submit(GenerationRequest.builder(id, prompt).maxTokens(0).pooling(p).build(), sink);
        float[] v = sink.vector.get(60, TimeUnit.SECONDS);
        assertEquals(List.of("embedding", "finish LENGTH"), awaitFinish(sink), "the vector, then the finish; no text");
        assertEquals(prompt.length, sink.usage.promptTokens());
        assertEquals(0, sink.usage.completionTokens());
        return v;
    }

    private static List<String> awaitFinish(Vector sink) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (sink.events.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        return List.copyOf(sink.events);
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 7, 16, 64})
    void everyPoolingEqualsTheHandComputationForEveryPrefillChunkSize(int budget) throws Exception {
        try (InflightEngine e = engine(budget, false)) {
            for (Pooling p : Pooling.values()) {
                assertArrayEquals(reference(p), embed(e, "e-" + p, p), 1e-5f, p + " at budget " + budget);
            }
        }
    }

    @Test
    void anEmbeddingIsTheSameAloneBatchedAndAfterAPrefixCacheHit() throws Exception {
        try (InflightEngine e = engine(16, true)) {
            float[] alone = embed(e, "alone", Pooling.MEAN);
            // the prompt is now in the prefix cache: an embedding still computes every position
            float[] again = embed(e, "again", Pooling.MEAN);
            assertArrayEquals(alone, again, "a prefix-cache hit must not skip pooled positions");
            List<Vector> sinks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Vector s = new Vector();
                sinks.add(s);
                e.submit(GenerationRequest.builder("b" + i, prompt).maxTokens(0).pooling(Pooling.MEAN).build(), s);
            }
            for (Vector s : sinks) {
                assertArrayEquals(alone, s.vector.get(60, TimeUnit.SECONDS), "batched with three others");
            }
        }
    }

    @Test
    void anEmbeddingRequestGeneratesNothing() {
        assertThrows(RequestValidationException.class, () -> GenerationRequest.builder("x", prompt).maxTokens(4)
                .pooling(Pooling.LAST).build());
        assertThrows(RequestValidationException.class, () -> GenerationRequest.builder("x", prompt).maxTokens(0).n(2)
                .pooling(Pooling.LAST).build());
    }
}
