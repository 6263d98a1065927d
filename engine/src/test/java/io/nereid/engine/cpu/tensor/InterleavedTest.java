package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.cpu.kernel.VectorWidthsUnderTest;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@link Interleaved} kernels (and {@link InterleavedPasses}), through {@link WeightMatrix#matmul} in
 * the faster order with one to fourteen tokens (where they are used: passes of two to five tokens, split
 * evenly): against the exact product, the same bits per token
 * whatever shares the call, and no 16-bit overflow at the extremes. At every vector width
 * (groups of 8, 16 and 32 rows).
 */
@Tag(VectorWidthsUnderTest.TAG)
class InterleavedTest {

    /** Rows: two groups at 512 bits (more at less) and a tail of six rows the row kernels compute. */
    private static final int ROWS = 2 * 32 + 6;
    private static final int COLS = 512;

    private static WeightMatrix matrix(GgmlType type, byte[] bytes) {
        return WeightMatrix.of(type, new long[] {COLS, ROWS}, MemorySegment.ofArray(bytes));
    }

    private static float[] fastest(WeightMatrix w, float[] x, int tokens, int from, int to) {
        float[] out = new float[tokens * ROWS];
        w.matmul(MatmulInput.of(x, tokens, COLS), out, from, to, null, false);
        return out;
    }

    static Stream<Arguments> typesAndTokens() {
        return Stream.of(GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K)
                .flatMap(t -> Stream.of(1, 2, 3, 4, 5, 6, 7, 9, 14)
                        .filter(n -> n < WeightMatrix.interleavedTokens(t)).map(n -> Arguments.of(t, n)));
    }

    @ParameterizedTest(name = "{0} x {1} tokens")
    @MethodSource("typesAndTokens")
    void productsMatchTheExactOneAndEachTokenAlone(GgmlType type, int tokens) {
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, new Random(41 + tokens));
        WeightMatrix w = matrix(type, bytes);
        float[] x = TestRows.gaussian(new Random(tokens), tokens * COLS, 1f);
        float[] multiplied = TestRows.matmulActivations(type, x, tokens * COLS);
        float[] together = fastest(w, x, tokens, 0, ROWS);
        for (int t = 0; t < tokens; t++) {
            float[] alone = fastest(w, Arrays.copyOfRange(x, t * COLS, (t + 1) * COLS), 1, 0, ROWS);
            for (int r = 0; r < ROWS; r++) {
                float[] row = w.dequantizeRow(r);
                double exact = TestRows.exactDot(row, 0, multiplied, t * COLS, COLS);
                double tol = TestRows.dotTolerance(COLS, TestRows.dotMagnitude(type, row, 0, multiplied, t * COLS, COLS));
                String what = type + " token " + t + " row " + r;
                assertEquals(exact, together[t * ROWS + r], tol, what);
                assertEquals(Float.floatToRawIntBits(alone[r]), Float.floatToRawIntBits(together[t * ROWS + r]),
                        what + ": alone and with " + (tokens - 1) + " more");
            }
        }
        // a range that cuts both groups gives the same bits for its rows and leaves the others
        float[] cut = fastest(w, x, tokens, 5, 40);
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < ROWS; r++) {
                float got = cut[t * ROWS + r];
                if (r >= 5 && r < 40) {
                    assertEquals(Float.floatToRawIntBits(together[t * ROWS + r]), Float.floatToRawIntBits(got));
                } else {
                    assertEquals(0f, got, "row " + r + " outside 5..40 written");
                }
            }
        }
    }

    /** The copy's bytes count in {@code copyBytes} (what a memory limit counts), on top of any repacked copy. */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void theCopyCountsInCopyBytes(GgmlType type) {
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, new Random(9));
        long withCopy = matrix(type, bytes).copyBytes();
        long repacked = switch (type) {
            case Q4_K -> (long) ROWS * COLS / 256 * Q4_KPacked.BLOCK_BYTES;
            case Q5_K -> (long) ROWS * COLS / 256 * Q5_KPacked.BLOCK_BYTES;
            case Q6_K -> (long) ROWS * COLS / 256 * Q6_KPacked.BLOCK_BYTES;
            default -> 0;
        };
        long groups = RowKernels.vector(type).isEmpty() ? 0 : ROWS / Interleaved.GROUP;
        assertEquals(groups == 0 ? 0 : repacked + groups * Interleaved.groupBytes(type, COLS), withCopy);
        // an embedding's rows are only looked up: no copy for decode, the same products without it
        WeightMatrix lookup = WeightMatrix.forLookup(type, new long[] {COLS, ROWS}, MemorySegment.ofArray(bytes));
        assertEquals(groups == 0 ? 0 : repacked, lookup.copyBytes());
        float[] x = TestRows.gaussian(new Random(4), COLS, 1f);
        float[] multiplied = TestRows.matmulActivations(type, x, COLS);
        float[] out = fastest(lookup, x, 1, 0, ROWS);
        for (int r = 0; r < ROWS; r++) {
            float[] row = lookup.dequantizeRow(r);
            assertEquals(TestRows.exactDot(row, 0, multiplied, 0, COLS), out[r],
                    TestRows.dotTolerance(COLS, TestRows.dotMagnitude(type, row, 0, multiplied, 0, COLS)));
        }
    }

    /**
     * Every weight at its most negative integer (-128; {@code q = 0}: -8, -16 or -32) against inputs
     * that quantize to +-127 everywhere: the 16-bit sums are at their largest (2 * 16256, 32 * 1016,
     * 8 * 4064, 16 * 2032) and still exact, and so are the float lanes' sums of several tokens.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void theLargestSixteenBitSumsAreExact(GgmlType type) {
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, new Random(3));
        int blockBytes = type.bytesPerBlock();
        for (int b = 0; b < bytes.length / blockBytes; b++) {
            int at = b * blockBytes;
            switch (type) {
                case Q8_0 -> Arrays.fill(bytes, at + 2, at + 34, (byte) -128);
                case Q4_0 -> Arrays.fill(bytes, at + 2, at + 18, (byte) 0);
                case Q4_K -> Arrays.fill(bytes, at + 16, at + 144, (byte) 0);
                case Q5_K -> Arrays.fill(bytes, at + 16, at + 176, (byte) 0);
                default -> Arrays.fill(bytes, at, at + 192, (byte) 0);
            }
        }
        WeightMatrix w = matrix(type, bytes);
        float[][] alone = new float[2][];
        float[] signs = {1f, -1f};
        for (int si = 0; si < 2; si++) {
            float[] x = new float[COLS];
            Arrays.fill(x, signs[si]);
            float[] multiplied = TestRows.matmulActivations(type, x, COLS);
            alone[si] = fastest(w, x, 1, 0, ROWS);
            for (int r = 0; r < ROWS; r++) {
                float[] row = w.dequantizeRow(r);
                double exact = TestRows.exactDot(row, 0, multiplied, 0, COLS);
                double tol = TestRows.dotTolerance(COLS, TestRows.dotMagnitude(type, row, 0, multiplied, 0, COLS));
                assertTrue(Math.abs(exact) > 1, "a product far from zero: " + exact);
                assertEquals(exact, alone[si][r], tol, type + " inputs " + signs[si] + " row " + r);
            }
        }
        // five tokens of alternating sign: the float lanes' passes (InterleavedPasses), each token the bits of its sign alone
        int five = 5;
        float[] x = new float[five * COLS];
        for (int t = 0; t < five; t++) {
            Arrays.fill(x, t * COLS, (t + 1) * COLS, signs[t % 2]);
        }
        float[] many = fastest(w, x, five, 0, ROWS);
        for (int t = 0; t < five; t++) {
            for (int r = 0; r < ROWS; r++) {
                assertEquals(Float.floatToRawIntBits(alone[t % 2][r]), Float.floatToRawIntBits(many[t * ROWS + r]),
                        type + " row " + r + " token " + t + " of " + five);
            }
        }
    }
}
