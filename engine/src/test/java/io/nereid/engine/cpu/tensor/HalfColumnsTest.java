package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.nereid.engine.cpu.kernel.VectorWidthsUnderTest;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * F16 and BF16 in the faster order ({@link HalfColumns}' blocks for up to {@link HalfColumns#MAX_TOKENS}
 * tokens, the panels for more), and the row blocks threads split a matmul on: every (row, token) is one FMA chain over the columns from zero, so a token gets the same
 * bits whatever the token count, the row range or the thread's share, and those bits are the chain
 * computed here in plain Java. At every vector width (BF16 runs in the lanes).
 */
@Tag(VectorWidthsUnderTest.TAG)
class HalfColumnsTest {

    /** A last block of 44 rows at 512 bits (300 = 4 * 64 + 44; not a multiple of a vector at any width), columns not a multiple of a vector. */
    private static final int ROWS = 300;
    private static final int COLS = 200;

    private static WeightMatrix matrix(GgmlType type, byte[] bytes) {
        return WeightMatrix.of(type, new long[] {COLS, ROWS}, MemorySegment.ofArray(bytes));
    }

    /** The chain: {@code acc = fma(w[k], x[k], acc)} over k in order, x in the form the format's dot takes. */
    private static float chain(float[] row, float[] form, int xOff) {
        float acc = 0f;
        for (int k = 0; k < COLS; k++) {
            acc = Math.fma(row[k], form[xOff + k], acc);
        }
        return acc;
    }

    private static float[] fastest(WeightMatrix w, float[] x, int tokens, int from, int to) {
        float[] out = new float[tokens * ROWS];
        w.matmul(MatmulInput.of(x, tokens, COLS), out, from, to, null, false);
        return out;
    }

    static Stream<Arguments> typesAndTokens() {
        return Stream.of(GgmlType.F16, GgmlType.BF16)
                .flatMap(t -> Stream.of(1, 2, 3, 4, 5, 6, 7, 9, 16, 17, HalfColumns.MAX_TOKENS, HalfColumns.MAX_TOKENS + 1)
                        .map(n -> Arguments.of(t, n)));
    }

    @ParameterizedTest(name = "{0} x {1} tokens")
    @MethodSource("typesAndTokens")
    void everyTokenIsTheChainOverTheColumns(GgmlType type, int tokens) {
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, new Random(tokens));
        WeightMatrix w = matrix(type, bytes);
        float[] x = TestRows.gaussian(new Random(100 + tokens), tokens * COLS, 1f);
        float[] form = MatmulInput.of(x, tokens, COLS).values(MatmulInput.Form.of(type));
        float[] out = fastest(w, x, tokens, 0, ROWS);
        for (int r = 0; r < ROWS; r++) {
            float[] row = w.dequantizeRow(r);
            for (int t = 0; t < tokens; t++) {
                assertEquals(Float.floatToRawIntBits(chain(row, form, t * COLS)), Float.floatToRawIntBits(out[t * ROWS + r]),
                        type + " token " + t + " of " + tokens + ", row " + r);
            }
        }
    }

    /** Ranges that cut the groups (as threads' shares may) give each row its bits and write nothing else. */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16"})
    void anyRowRangeGivesTheSameBitsAndLeavesTheOtherRows(GgmlType type) {
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, new Random(7));
        WeightMatrix w = matrix(type, bytes);
        for (int tokens : new int[] {1, 2, 3, 4, 7}) { // one pass and two
            float[] x = TestRows.gaussian(new Random(tokens), tokens * COLS, 1f);
            float[] whole = fastest(w, x, tokens, 0, ROWS);
            for (int[] range : new int[][] {{3, 29}, {60, 70}, {250, 262}, {256, 300}, {0, 1}, {299, 300}}) {
                float[] part = new float[tokens * ROWS];
                Arrays.fill(part, Float.NaN);
                w.matmul(MatmulInput.of(x, tokens, COLS), part, range[0], range[1], null, false);
                for (int t = 0; t < tokens; t++) {
                    for (int r = 0; r < ROWS; r++) {
                        float got = part[t * ROWS + r];
                        if (r >= range[0] && r < range[1]) {
                            assertEquals(Float.floatToRawIntBits(whole[t * ROWS + r]), Float.floatToRawIntBits(got));
                        } else {
                            assertEquals(Float.NaN, got, "row " + r + " outside " + Arrays.toString(range) + " written");
                        }
                    }
                }
            }
        }
    }

    /**
     * Every token count the copy takes, in one pass or several ({@link HalfColumns#PASS} tokens a
     * pass, two blocks a loop; one token four): each row still gets its chain's bits,
     * over ranges of whole blocks, of blocks and a part, starting inside a block, and reaching the last
     * block's padding, and the rows outside a range are left as they were.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16"})
    void everyPassGivesEachRowItsChain(GgmlType type) {
        int b = HalfColumns.ROWS;
        int rows = 3 * b + 5;
        int cols = 72;
        byte[] bytes = TestRows.randomRow(type, rows * cols, new Random(11));
        WeightMatrix w = WeightMatrix.of(type, new long[] {cols, rows}, MemorySegment.ofArray(bytes));
        float[][] dequantized = new float[rows][];
        for (int r = 0; r < rows; r++) {
            dequantized[r] = w.dequantizeRow(r);
        }
        for (int tokens = 1; tokens <= HalfColumns.MAX_TOKENS; tokens++) {
            float[] x = TestRows.gaussian(new Random(12 + tokens), tokens * cols, 1f);
            float[] form = MatmulInput.of(x, tokens, cols).values(MatmulInput.Form.of(type));
            for (int[] range : new int[][] {{0, rows}, {0, 2 * b}, {b, 2 * b + 7}, {b + 3, rows}, {0, 3 * b + 1}}) {
                float[] out = new float[tokens * rows];
                Arrays.fill(out, Float.NaN);
                w.matmul(MatmulInput.of(x, tokens, cols), out, range[0], range[1], null, false);
                for (int t = 0; t < tokens; t++) {
                    for (int r = 0; r < rows; r++) {
                        String what = type + " token " + t + " of " + tokens + ", row " + r + " of range "
                                + Arrays.toString(range);
                        float got = out[t * rows + r];
                        if (r >= range[0] && r < range[1]) {
                            float want = 0f;
                            for (int k = 0; k < cols; k++) {
                                want = Math.fma(dequantized[r][k], form[t * cols + k], want);
                            }
                            assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(got), what);
                        } else {
                            assertEquals(Float.NaN, got, what + " written");
                        }
                    }
                }
            }
        }
    }

    /**
     * The lanes widen every finite half exactly, subnormals and the largest included, and the inputs'
     * factor ({@code x * 2^112}) neither overflows at the largest half nor loses a subnormal input's bits:
     * each product still rounds as the chain of the widened weights does.
     */
    @Test
    void extremeHalvesAndInputsKeepTheChainsBits() {
        short[] special = {0x0001, (short) 0x8001, 0x03FF, (short) 0x83FF, 0x0400, 0x7BFF, (short) 0xFBFF, 0x0000,
            (short) 0x8000, 0x3C00, (short) 0xBC00, 0x3555};
        byte[] bytes = TestRows.randomRow(GgmlType.F16, ROWS * COLS, new Random(21));
        MemorySegment seg = MemorySegment.ofArray(bytes);
        for (int i = 0; i < ROWS * COLS; i += 3) {
            seg.set(Bytes.SHORT, 2L * i, special[i % special.length]);
        }
        WeightMatrix w = matrix(GgmlType.F16, bytes);
        float[] x = TestRows.gaussian(new Random(22), 3 * COLS, 1f);
        for (int i = 0; i < x.length; i += 5) {
            x[i] = Float.float16ToFloat(special[(i / 5) % special.length]);
        }
        float[] form = MatmulInput.of(x, 3, COLS).values(MatmulInput.Form.F16);
        for (int tokens = 1; tokens <= 3; tokens++) {
            float[] out = fastest(w, x, tokens, 0, ROWS);
            for (int r = 0; r < ROWS; r++) {
                float[] row = w.dequantizeRow(r);
                for (int t = 0; t < tokens; t++) {
                    assertEquals(Float.floatToRawIntBits(chain(row, form, t * COLS)),
                            Float.floatToRawIntBits(out[t * ROWS + r]), "token " + t + " of " + tokens + ", row " + r);
                }
            }
        }
    }

    /**
     * An F16 matrix with an infinity or a NaN gets no copy (the lanes would widen them to finite values)
     * and its products are still IEEE's: the infinity's row infinite, the NaN's NaN.
     */
    @ParameterizedTest
    @ValueSource(shorts = {(short) 0x7C00, (short) 0xFC00, (short) 0x7E00})
    void anF16InfinityOrNaNLeavesTheCopyOut(short special) {
        byte[] bytes = TestRows.randomRow(GgmlType.F16, ROWS * COLS, new Random(13));
        MemorySegment.ofArray(bytes).set(Bytes.SHORT, 2L * (5 * COLS + 7), special);
        WeightMatrix w = matrix(GgmlType.F16, bytes);
        assertEquals(0, w.copyBytes());
        float[] x = TestRows.gaussian(new Random(14), 2 * COLS, 1f);
        float[] out = fastest(w, x, 2, 0, ROWS);
        float want = Float.float16ToFloat(special) * Float.float16ToFloat(Float.floatToFloat16(x[7]));
        assertEquals(Float.isNaN(want) ? Float.NaN : want, out[5]);
        assertEquals(false, Float.isNaN(out[4]) || Float.isInfinite(out[4]), "row 4 finite");
    }

    /** The copy counts in copyBytes (a memory limit's share); without it ({@code forLookup}) the row kernels' order. */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16"})
    void theCopyCountsAndALookupMatrixHasNone(GgmlType type) {
        byte[] bytes = TestRows.randomRow(type, ROWS * COLS, new Random(8));
        WeightMatrix w = matrix(type, bytes);
        assertEquals(HalfColumns.bytes(ROWS, COLS), w.copyBytes());
        WeightMatrix lookup = WeightMatrix.forLookup(type, new long[] {COLS, ROWS}, MemorySegment.ofArray(bytes));
        assertEquals(0, lookup.copyBytes());
        float[] x = TestRows.gaussian(new Random(9), COLS, 1f);
        float[] withCopy = fastest(w, x, 1, 0, ROWS);
        float[] without = fastest(lookup, x, 1, 0, ROWS);
        int differ = 0;
        for (int r = 0; r < ROWS; r++) {
            assertEquals(withCopy[r], without[r], 1e-4f * (1 + Math.abs(withCopy[r])));
            differ += Float.floatToRawIntBits(withCopy[r]) != Float.floatToRawIntBits(without[r]) ? 1 : 0;
        }
        assertNotEquals(0, differ, "the two orders differ somewhere (else this test shows nothing)");
    }

    /**
     * Threads split a matmul on the groups of the copy the matmul reads: the column copy's for F16 /
     * BF16 below the panels, the interleaved copy's below its token limit, else rows of four (the
     * panels, the tiles, the batch-invariant order, a matrix without a copy).
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16", "Q8_0", "Q4_K"})
    void rowAlignmentIsTheGroupOfTheCopyTheMatmulReads(GgmlType type) {
        int cols = 256;
        WeightMatrix w = WeightMatrix.of(type, new long[] {cols, ROWS},
                MemorySegment.ofArray(TestRows.randomRow(type, ROWS * cols, new Random(11))));
        boolean half = type == GgmlType.F16 || type == GgmlType.BF16;
        int copyGroup = half ? HalfColumns.ROWS : Interleaved.GROUP;
        int copyTokens = half ? HalfColumns.MAX_TOKENS + 1 : WeightMatrix.interleavedTokens(type);
        assertEquals(copyGroup, w.rowAlignment(1, false));
        assertEquals(copyGroup, w.rowAlignment(copyTokens - 1, false));
        assertEquals(4, w.rowAlignment(copyTokens, false));
        assertEquals(4, w.rowAlignment(1, true));
        WeightMatrix lookup = WeightMatrix.forLookup(type, new long[] {cols, ROWS},
                MemorySegment.ofArray(TestRows.randomRow(type, ROWS * cols, new Random(11))));
        assertEquals(4, lookup.rowAlignment(1, false), "an embedding's matrix, without a copy");
        int few = Interleaved.GROUP - 1; // fewer rows than an interleaved group: no copy
        WeightMatrix small = WeightMatrix.of(type, new long[] {cols, few},
                MemorySegment.ofArray(TestRows.randomRow(type, few * cols, new Random(12))));
        assertEquals(half ? HalfColumns.ROWS : 4, small.rowAlignment(1, false));
    }
}
