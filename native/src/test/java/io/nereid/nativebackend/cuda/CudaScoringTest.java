package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.ChosenLogprobs;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Scoring;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.model.ModelSource;
import io.nereid.engine.sampling.RawLogprobs;
import io.nereid.engine.sampling.SampledToken;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prompt tokens scored on the device ({@link Scoring}: {@code row_logprobs} with the given ids): each scored row's
 * record is the host's {@link RawLogprobs#score} of the same row (the logprob within an ulp: a GPU's log is not
 * {@code Math.log}), the scored rows stay on the device, and the rows after them, the chosen ids of other slices and
 * the rows of others in the same step come back as without scoring. Batch-invariant, so that a slice's rows are the
 * same bits alone and batched. Runs where a CUDA driver (or the emulator) is present.
 */
@Tag("gpu")
@ExtendWith(CudaDevice.class)
class CudaScoringTest {

    @TempDir
    static Path dir;


    private static int[] table(int sequence) {
        return IntStream.range(sequence * 4, sequence * 4 + 4).toArray();
    }

    /** Each scored record against the host's score of the row the same slice gives back unscored. */
    private static void assertScored(ChosenLogprobs[] scored, StepOutput rows, int slice, int[] ids, int top, String what) {
        assertNotNull(scored, what + ": scored on the device");
        assertEquals(ids.length, scored.length, what);
        for (int j = 0; j < ids.length; j++) {
            SampledToken expected = RawLogprobs.score(rows.row(slice, j), ids[j], top);
            ChosenLogprobs actual = scored[j];
            String where = what + ", row " + j + ": ";
            assertEquals(expected.logprob(), actual.logprob(), Math.ulp(expected.logprob()), where + "logprob");
            assertEquals(expected.rank(), actual.rank(), where + "rank");
            assertArrayEquals(expected.topIds(), actual.topIds(), where + "top ids");
            for (int r = 0; r < top; r++) {
                assertEquals(expected.topLogprobs()[r], actual.topLogprobs()[r], Math.ulp(expected.topLogprobs()[r]),
                        where + "top logprob " + r);
            }
        }
    }

    @Test
    void scoredRowsGiveTheHostsRecordsAndTheOtherRowsComeBackAsBefore() throws Exception {
        for (GgmlType type : List.of(GgmlType.F16, GgmlType.Q8_0)) {
            Path model = CudaDevice.llama(dir, type, 64, 9);
            try (ModelSource source = ModelSource.open(model);
                    Backend b = BackendProvider.named("cuda").open(new BackendConfig(source, KvPrecision.F16, 1, true))) {
                b.allocate(64, 16, 64);
                SplittableRandom random = new SplittableRandom(2);
                int[] a = random.ints(30, 3, 512).toArray();
                int[] c = random.ints(12, 3, 512).toArray();
                int[] d = random.ints(5, 3, 512).toArray();
                // alone: a prompt of 30 scoring its 29 next tokens with 5 alternatives, its last row back; then unscored
                int[] nextA = Arrays.copyOfRange(a, 1, 30);
                StepOutput scoredA = b.forward(new Step(List.of(new Slice(a, 0, table(0), 30, false, null,
                        new Scoring(nextA, 5)))));
                StepOutput rowsA = b.forward(new Step(List.of(new Slice(a, 0, table(1), 30))));
                assertScored(scoredA.scored()[0], rowsA, 0, nextA, 5, type + " alone");
                assertEquals(1, scoredA.rows(0), "the row after the scored ones comes back");
                assertArrayEquals(rowsA.row(0, 29), scoredA.row(0, 0), type + ": the last row");
                // batched: a decode choosing its argmax, a chunk scoring all of its 12 rows (0 alternatives, 20), rows
                int[] nextC = Arrays.copyOfRange(c, 1, 12);
                int[] scoreC = Arrays.copyOf(nextC, 12);
                scoreC[11] = 77;   // a chunk that does not end the prompt scores every row
                StepOutput batched = b.forward(new Step(List.of(new Slice(new int[] {a[29]}, 30, table(0), 1, false,
                        TokenChoice.ARGMAX), new Slice(c, 0, table(2), 12, false, null, new Scoring(scoreC, 20)),
                        new Slice(d, 0, table(3), 5))));
                StepOutput decodeA = b.forward(new Step(List.of(new Slice(new int[] {a[29]}, 30, table(1), 1))));
                StepOutput rowsC = b.forward(new Step(List.of(new Slice(c, 0, table(4), 12))));
                StepOutput rowsD = b.forward(new Step(List.of(new Slice(d, 0, table(5), 5))));
                assertEquals(TokenChoice.argmaxOf(decodeA.row(0, 0)), batched.chosen()[0][0], type + ": the argmax");
                assertScored(batched.scored()[1], rowsC, 0, scoreC, 20, type + " batched");
                assertNull(batched.logits()[1], "every row of the chunk scored: none back");
                assertEquals(5, batched.rows(2));
                for (int r = 0; r < 5; r++) {
                    assertArrayEquals(rowsD.row(0, r), batched.row(2, r), type + ": the other slice's row " + r);
                }
                assertNull(batched.scored()[0]);
                assertNull(batched.scored()[2]);
            }
        }
    }

    /**
     * A NaN in the output weights' row of id 7 makes that id's logit NaN at every position: the device declines to
     * score such rows, and the chunk's rows come back whole, the scored ones first, for the engine to score on the
     * host; the same bits as the chunk without scoring.
     */
    @Test
    void aChunkWithADeclinedRowComesBackWhole() throws Exception {
        Path model = CudaDevice.llama(dir, GgmlType.F32, 64, 21);
        long at;
        try (GgufFile f = GgufFile.open(model)) {
            at = f.dataOffset() + f.tensor("output.weight").offset();
        }
        try (FileChannel ch = FileChannel.open(model, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putFloat(0, Float.NaN), at + 4L * 7 * 256);
        }
        try (ModelSource source = ModelSource.open(model);
                Backend b = BackendProvider.named("cuda").open(new BackendConfig(source, KvPrecision.F16, 1, true))) {
            b.allocate(16, 16, 64);
            int[] a = new SplittableRandom(8).ints(12, 3, 512).toArray();
            StepOutput scored = b.forward(new Step(List.of(new Slice(a, 0, table(0), 12, false, null,
                    new Scoring(Arrays.copyOfRange(a, 1, 12), 3)))));
            StepOutput rows = b.forward(new Step(List.of(new Slice(a, 0, table(1), 12))));
            assertTrue(Float.isNaN(rows.row(0, 0)[7]), "the NaN reached the logits");
            assertNull(scored.scored()[0], "declined: no records");
            assertEquals(12, scored.rows(0), "every row back, the scored ones first");
            for (int r = 0; r < 12; r++) {
                assertArrayEquals(rows.row(0, r), scored.row(0, r), "row " + r);
            }
        }
    }
}
