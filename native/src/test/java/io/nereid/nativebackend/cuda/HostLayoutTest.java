package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.Scoring;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.gguf.GgmlType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The host side of the CUDA backend that needs no device: step layout, launch geometry, row sizes, library search. */
class HostLayoutTest {

    @Test
    void aStepBecomesTokenArraysAPaddedBlockTableMatrixAndTheRowsThatNeedLogits() {
        Step step = new Step(List.of(
                new Slice(new int[] {5, 6, 7}, 0, new int[] {3}, 0),            // a prefill chunk: no logits
                new Slice(new int[] {9}, 20, new int[] {1, 4}, 1),              // a decode at position 20
                new Slice(new int[] {1, 2, 3}, 16, new int[] {0, 2}, 3, true))); // verifying 2 drafts; hidden states
        StepLayout l = StepLayout.of(step, 10, 16, 64, 8);
        assertArrayEquals(new int[] {5, 6, 7, 9, 1, 2, 3}, l.tokens());
        assertArrayEquals(new int[] {0, 0, 0, 1, 2, 2, 2}, l.seqOf());
        assertArrayEquals(new int[] {0, 1, 2, 20, 16, 17, 18}, l.posOf());
        assertEquals(2, l.maxBlocks());
        assertArrayEquals(new int[] {3, -1, 1, 4, 0, 2}, l.tables());
        assertArrayEquals(new int[] {3, 4, 5, 6}, l.logitRows());
        assertEquals(0, l.chosenRows());
        assertArrayEquals(new int[] {4, 5, 6}, l.hiddenRows());
    }

    @Test
    void rowsWhoseTokensTheBackendChoosesComeLastSoTheRowsThatGoBackToTheHostAreOneRun() {
        Step step = new Step(List.of(
                new Slice(new int[] {9}, 20, new int[] {1, 4}, 1, false, TokenChoice.ARGMAX),  // greedy decode
                new Slice(new int[] {4}, 7, new int[] {5}, 1),                                  // wants its row
                new Slice(new int[] {1, 2, 3}, 16, new int[] {0, 2}, 3, false, TokenChoice.ARGMAX),  // verifies 2 drafts
                new Slice(new int[] {5, 6}, 0, new int[] {3}, 2)));                    // prompt logprobs
        StepLayout l = StepLayout.of(step, 10, 16, 64, 8);
        assertArrayEquals(new int[] {1, 5, 6, 0, 2, 3, 4}, l.logitRows());
        assertEquals(4, l.chosenRows());
    }

    @Test
    void scoredRowsComeAfterTheChosenOnesAndARowAfterThemGoesBackWithTheOthers() {
        Step step = new Step(List.of(
                new Slice(new int[] {5, 6, 7}, 0, new int[] {3}, 3, false, null, new Scoring(new int[] {6, 7}, 4)),
                new Slice(new int[] {9}, 20, new int[] {1, 4}, 1, false, TokenChoice.ARGMAX),
                new Slice(new int[] {4}, 7, new int[] {5}, 1),
                new Slice(new int[] {1, 2}, 0, new int[] {0}, 2, false, null, new Scoring(new int[] {2, 8}, 0))));
        StepLayout l = StepLayout.of(step, 10, 16, 64, 8);
        assertArrayEquals(new int[] {2, 4, 3, 0, 1, 5, 6}, l.logitRows());
        assertEquals(1, l.chosenRows());
        assertArrayEquals(new int[] {6, 7, 2, 8}, l.scoredIds());
        assertArrayEquals(new int[] {4, 4, 0, 0}, l.scoredTops());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StepLayout.of(new Step(List.of(new Slice(new int[] {1, 2},
                0, new int[] {0}, 2, false, null, new Scoring(new int[] {10}, 0)))), 10, 16, 64, 8)).getMessage()
                .contains("scored token id 10"));
    }

    @Test
    void whatAKernelWouldReadOutOfBoundsIsRefusedOnTheHost() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StepLayout.of(new Step(List.of(
                new Slice(new int[] {12}, 0, new int[] {0}, 1))), 10, 16, 64, 8)).getMessage().contains("token id 12"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StepLayout.of(new Step(List.of(
                new Slice(new int[] {1}, 16, new int[] {0}, 1))), 10, 16, 64, 8)).getMessage().contains("block table of 1"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StepLayout.of(new Step(List.of(
                new Slice(new int[] {1}, 0, new int[] {8}, 1))), 10, 16, 64, 8)).getMessage().contains("block 8 outside"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StepLayout.of(new Step(List.of(
                new Slice(new int[] {1}, 64, new int[] {0, 1, 2, 3, 4}, 1))), 10, 16, 64, 8)).getMessage()
                .contains("allocated for 64"));
    }

    @Test
    void launchGeometryCoversEveryRowAndTokenAndRefusesWhatTheKernelsCannotTake() {
        LaunchGeometry g = LaunchGeometry.gemv(4097, 17);
        assertEquals(1025, g.gridX());   // 4 rows (warps) per block
        assertEquals(3, g.gridY());      // 8 tokens per block
        assertEquals(128, g.blockX());
        assertEquals(new LaunchGeometry(32, 5, 128), LaunchGeometry.attention(32, 5, 128));
        assertEquals(new LaunchGeometry(32, 5, 3, 128), LaunchGeometry.attention(32, 5, 128, 3));
        long budget = LaunchGeometry.ATTN_PARTS_BYTES;
        assertEquals(0, LaunchGeometry.attentionPartition(512, 1, 32, 128, 512, budget), "one part: no split");
        assertEquals(512, LaunchGeometry.attentionPartition(513, 1, 32, 128, 512, budget));
        assertEquals(512, LaunchGeometry.attentionPartition(8192, 64, 32, 128, 512, budget), "16 parts of 64 tokens fit");
        // 64 tokens at 128K: 256 parts of 512 would take 272 MB; 63 fit 64 MiB, so parts of 2,560 (52 of them)
        assertEquals(2560, LaunchGeometry.attentionPartition(131_072, 64, 32, 128, 512, budget));
        assertEquals(0, LaunchGeometry.attentionPartition(8192, 4096, 32, 128, 512, budget), "a long prefill: no split");
        assertThrows(IllegalArgumentException.class, () -> LaunchGeometry.attentionPartition(10, 1, 1, 8, 100, budget));
        assertEquals(8, LaunchGeometry.attention(8, 1, 8).gridX());   // stories260K: heads of 8
        assertThrows(IllegalArgumentException.class, () -> LaunchGeometry.attention(32, 5, 512));
        assertThrows(IllegalArgumentException.class, () -> LaunchGeometry.attention(32, 5, 100));   // not a multiple of 8
        assertEquals(4, LaunchGeometry.elementwise(1000).gridX());
        assertEquals(1, LaunchGeometry.elementwise(0).gridX());
        assertEquals(LaunchGeometry.elementwise(4096L * 4096 / 32), LaunchGeometry.dequant(4096, 4096));
        assertThrows(IllegalArgumentException.class, () -> LaunchGeometry.gemv(10, 8 * 65_536));
    }

    @Test
    void rowBytesFollowTheGgufBlocksAndRefuseRowsTheKernelsCannotSplit() {
        assertEquals(4096 / 256 * 144, WeightFormat.Q4_K.rowBytes(4096));
        assertEquals(4096 / 32 * 34, WeightFormat.Q8_0.rowBytes(4096));
        assertEquals(2 * 64, WeightFormat.BF16.rowBytes(64));
        assertThrows(IllegalArgumentException.class, () -> WeightFormat.Q6_K.rowBytes(288));
        assertEquals(2 * 172, WeightFormat.F16.rowBytes(172));   // float rows of any length
        assertThrows(IllegalArgumentException.class, () -> WeightFormat.Q8_0.rowBytes(48));
        assertTrue(WeightFormat.of(GgmlType.Q2_K).isEmpty());
        assertEquals(WeightFormat.Q5_K, WeightFormat.of(GgmlType.Q5_K).orElseThrow());
    }

    @Test
    void librariesAreSearchedInTheUsersDirectoriesThenTheLinkerThenTheToolkit() {
        assertEquals(List.of(Path.of("/a"), Path.of("/b/c")), NativeLibraries.userDirectories("/a::/b/c"));
        assertEquals(List.of(), NativeLibraries.userDirectories(null));
        assertEquals(Path.of("/opt/cuda/lib64"), NativeLibraries.toolkitDirectories("/opt/cuda").getFirst());
        List<String> tried = new ArrayList<>();
        assertTrue(NativeLibraries.open(List.of("libnereid-no-such-library.so.1"), tried).isEmpty());
        assertTrue(tried.contains("libnereid-no-such-library.so.1"), tried.toString());
    }

    @Test
    void theProviderIsFoundByNameAndSaysWhyItCannotRunWhenThereIsNoDriver() {
        BackendProvider cuda = BackendProvider.named("cuda");
        assertEquals("cuda", cuda.name());
        boolean driver = CudaDriver.unavailableReason() == null;
        assertEquals(!driver, cuda.unavailableReason().isPresent());
        cuda.unavailableReason().ifPresent(r -> assertTrue(r.contains("libcuda") || r.contains("device")
                || r.contains("cuInit"), r));
        assertEquals(0, CudaBackendProvider.deviceOrdinal(null));
        assertEquals(1, CudaBackendProvider.deviceOrdinal(" 1"));
        assertThrows(IllegalArgumentException.class, () -> CudaBackendProvider.deviceOrdinal("gpu0"));
    }
}
