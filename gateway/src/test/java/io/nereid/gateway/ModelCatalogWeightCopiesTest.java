package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.gateway.http.ApiException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A repository's {@code --memory-limit} counts the copies the CPU backend repacks K-quant weights
 * into, on top of the files and the KV cache: a Q4_K model whose file and cache fit but whose
 * copies do not is refused, naming them, and loads once they fit.
 */
@Timeout(120)
class ModelCatalogWeightCopiesTest {

    @TempDir
    Path repo;

    private ModelCatalog catalog(long limit) {
        List<String> args = new ArrayList<>(List.of("--model-repository", repo.toString(), "--port", "0", "--threads",
                "1", "--model-control-mode", "explicit"));
        if (limit > 0) {
            args.addAll(List.of("--memory-limit", Long.toString(limit)));
        }
        return new ModelCatalog(ServeConfig.parse(args, Map.of()), UnaryOperator.identity());
    }

    @Test
    void theRepackedCopiesCountAgainstTheLimit() throws Exception {
        Path dir = Files.createDirectories(repo.resolve("k"));
        // every matrix Q4_K: rows of 256 weights
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 256, 1, 4, 2, 256, 400, 256,
                GgmlType.Q4_K, false, 3), dir.resolve("model.gguf"));
        Files.writeString(dir.resolve("nereid.json"), "{\"kv_cache_memory\": \"256KiB\"}");

        ServingModel probe = (ServingModel) catalog(0).load("k");
        long file = ModelCatalog.fileBytes(dir.resolve("model.gguf"));
        long copies = probe.weightCopyBytes();
        long kv = probe.kvCacheBytes();
        probe.close();
        // 1 layer: q, k, v, o, gate, up, down + embeddings + output, 192 bytes per 256 weights when repacked,
        // and but for the embeddings 152 per 256 in whole groups of 8, 16 or 32 rows (the vector width's)
        // interleaved for decode; the scalar kernels (no Vector API) read the file in place
        long weights = 256L * 256 * 2 + 2L * 128 * 256 + 3L * 256 * 256 + 2L * 400 * 256;
        long repacked = weights / 256 * 192;
        long interleavedAt32 = (256L * 2 + 2L * 128 + 3L * 256 + 384) * 152;
        long interleavedAt8or16 = (256L * 2 + 2L * 128 + 3L * 256 + 400) * 152;
        assertTrue(copies == 0 || copies == repacked + interleavedAt32 || copies == repacked + interleavedAt8or16,
                "copies " + copies);
        assumeTrue(copies > 0, "scalar kernels: nothing is repacked");
        ApiException e = assertThrows(ApiException.class, () -> catalog(file + kv + copies / 2).load("k"));
        assertEquals(400, e.status());
        assertTrue(e.getMessage().contains("does not fit the memory limit")
                && e.getMessage().contains(ModelCatalog.mib(copies) + " repacked for the CPU kernels"), e.getMessage());
        catalog(file + kv + copies).load("k").close();
    }
}
