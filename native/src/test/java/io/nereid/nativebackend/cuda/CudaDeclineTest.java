package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.api.SamplingParams;
import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.sampling.Distribution;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A draw the device declines (a top-p or min-p cut without a top-k that does not settle within its
 * {@link TokenChoice#MAX_TOP_K} ranks: a flat random model's 3,000-token vocabulary at temperature 1.5) comes back
 * as its row, the same bits as that step asked for rows, beside a slice in the same step whose draw settles (a
 * top-k 1,000, drawn on the device: the host's draw from the same row). Runs where a CUDA driver (or the emulator)
 * is present.
 */
@Tag("gpu")
@ExtendWith(CudaDevice.class)
class CudaDeclineTest {

    @TempDir
    static Path dir;

    @Test
    void aCutWiderThanTheDevicesRanksComesBackAsTheRow() throws Exception {
        Path model = CudaDevice.llama(dir, GgmlType.F16, 3000, 64, 13);
        try (ModelSource source = ModelSource.open(model);
                Backend b = BackendProvider.named("cuda").open(new BackendConfig(source, KvPrecision.F16, 1, true))) {
            b.allocate(16, 16, 64);
            int[] prompt = {5, 900, 1700, 2500, 42};
            TokenChoice wide = TokenChoice.draw(1.5f, 0.61, 0, 0.95f, 0f);
            TokenChoice topK = TokenChoice.draw(1.5f, 0.27, 1000, 1f, 0f);
            StepOutput drawn = b.forward(new Step(List.of(new Slice(prompt, 0, new int[] {0}, 1, false, wide),
                    new Slice(prompt, 0, new int[] {1}, 1, false, topK))));
            StepOutput rows = b.forward(new Step(List.of(new Slice(prompt, 0, new int[] {2}, 1),
                    new Slice(prompt, 0, new int[] {3}, 1))));
            int keep = new Distribution(new SamplingParams(1.5f, -1, 0.95f, 0f, 1f, 0f, 0f, Map.of(), null, 0))
                    .of(rows.row(0, 0)).size();
            assertTrue(keep > TokenChoice.MAX_TOP_K, "the nucleus is wider than the device's ranks: " + keep);
            assertNull(drawn.chosen()[0], "declined");
            assertNotNull(drawn.logits()[0], "its row comes back");
            assertArrayEquals(rows.row(0, 0), drawn.row(0, 0));
            assertEquals(Distribution.choose(topK, rows.row(1, 0)), drawn.chosen()[1][0], "the top-k 1,000 drawn on the device");
        }
    }
}
