package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.gguf.GgufFile;
import io.nereid.engine.gguf.GgufTensorInfo;
import io.nereid.engine.gguf.GgufWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class WeightMatrixTest {

    static final GgmlType[] SUPPORTED = {GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0,
        GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K};

    /** 3: no group of four tokens; 5: one group and a remainder; 8: two groups. */
    static Stream<Arguments> typesAndTokens() {
        return Arrays.stream(SUPPORTED).flatMap(t -> Stream.of(1, 3, 5, 8).map(n -> Arguments.of(t, n)));
    }

    /** A matrix of {@code rows} rows of {@code 2 * blockSize} (at least 64) random weights. */
    static WeightMatrix randomMatrix(GgmlType type, int rows, long seed) {
        int cols = Math.max(64, 2 * type.blockSize());
        byte[] bytes = TestRows.randomRow(type, rows * cols, new Random(seed));
        return WeightMatrix.of(type, new long[] {cols, rows}, MemorySegment.ofArray(bytes));
    }

    @ParameterizedTest
    @MethodSource("typesAndTokens")
    void matmulEqualsDequantizeThenMultiply(GgmlType type, int tokens) {
        int rows = 13;
        WeightMatrix w = randomMatrix(type, rows, 11);
        int cols = w.cols();
        float[] x = TestRows.gaussian(new Random(12), tokens * cols, 1f);
        float[] multiplied = TestRows.matmulActivations(type, x, tokens * cols);
        for (int[] range : new int[][] {{0, rows}, {1, rows - 1}, {5, 6}, {4, 4}}) {
            float[] out = new float[tokens * rows];
            Arrays.fill(out, Float.NaN);
            w.matmul(x, tokens, out, range[0], range[1]);
            for (int t = 0; t < tokens; t++) {
                for (int r = 0; r < rows; r++) {
                    float got = out[t * rows + r];
                    if (r < range[0] || r >= range[1]) {
                        assertTrue(Float.isNaN(got), "row " + r + " outside " + Arrays.toString(range) + " written");
                        continue;
                    }
                    float[] row = Quantizer.dequantize(type, rowBytes(w, type, r), 0, cols);
                    double exact = TestRows.exactDot(row, 0, multiplied, t * cols, cols);
                    double tol = TestRows.dotTolerance(cols,
                            TestRows.dotMagnitude(type, row, 0, multiplied, t * cols, cols));
                    assertEquals(exact, got, tol, type + " token " + t + " row " + r);
                }
            }
        }
    }

    /**
     * Every format with 1..9 tokens (tiles of four tokens and four rows, and every remainder) and
     * with the token counts of the faster order's transposed groups ({@link io.nereid.engine.cpu.kernel.PanelDot}): 16, one
     * group of four vectors at 128 bits; 23 and 37, a last group of one, two or three vectors with
     * padded lanes; 70, a whole group at 512 bits and a second one.
     */
    static Stream<Arguments> typesAndTileTokens() {
        return Arrays.stream(SUPPORTED).flatMap(t -> IntStream.concat(IntStream.rangeClosed(1, 9),
                IntStream.of(WeightMatrix.PANEL_TOKENS, 23, 37, 70)).mapToObj(n -> Arguments.of(t, n)));
    }

    /**
     * The tiled product against the scalar specification and the exact value: the row ranges
     * (150 rows, rows 3 to 145, row 70 alone) start and end off the four-row tiles. F32 and F16 also take rows of 37, not a multiple of any vector.
     */
    @ParameterizedTest(name = "{0} x {1} tokens")
    @MethodSource("typesAndTileTokens")
    void tiledMatmulMatchesTheScalarSpecification(GgmlType type, int tokens) {
        int rows = 150;
        int[] colsCases = type.blockSize() == 1 ? new int[] {64, 37} : new int[] {Math.max(64, 2 * type.blockSize())};
        for (int cols : colsCases) {
            byte[] bytes = TestRows.randomRow(type, rows * cols, new Random(17L * cols + tokens));
            long[] dims = {cols, rows};
            WeightMatrix w = WeightMatrix.of(type, dims, MemorySegment.ofArray(bytes));
            WeightMatrix spec = WeightMatrix.of(type, dims, MemorySegment.ofArray(bytes), RowKernels.scalar(type));
            float[] x = TestRows.gaussian(new Random(tokens), tokens * cols, 1f);
            float[] multiplied = TestRows.matmulActivations(type, x, tokens * cols);
            for (int[] range : new int[][] {{0, rows}, {3, 146}, {70, 71}}) {
                float[] got = new float[tokens * rows];
                float[] expected = new float[tokens * rows];
                float[] fastest = new float[tokens * rows];
                w.matmul(x, tokens, got, range[0], range[1]);
                spec.matmul(x, tokens, expected, range[0], range[1]);
                w.matmul(MatmulInput.of(x, tokens, cols), fastest, range[0], range[1], null, false);
                for (int t = 0; t < tokens; t++) {
                    for (int r = 0; r < rows; r++) {
                        int o = t * rows + r;
                        String what = type + " cols " + cols + " token " + t + " row " + r;
                        if (r < range[0] || r >= range[1]) {
                            assertEquals(0f, got[o], what + " outside " + Arrays.toString(range) + " written");
                            assertEquals(0f, fastest[o], what + " outside " + Arrays.toString(range) + " written, fastest");
                            continue;
                        }
                        float[] row = spec.dequantizeRow(r);
                        double tol = TestRows.dotTolerance(cols,
                                TestRows.dotMagnitude(type, row, 0, multiplied, t * cols, cols));
                        double exact = TestRows.exactDot(row, 0, multiplied, t * cols, cols);
                        assertEquals(exact, expected[o], tol, what + ", scalar");
                        assertEquals(exact, got[o], tol, what);
                        assertEquals(exact, fastest[o], tol, what + ", not batch invariant");
                    }
                }
            }
        }
    }

    /**
     * Batch invariance: a token's products are the same bits whether it is alone in the call or
     * one of up to nine (tiles of four tokens and four rows, and every remainder), and whichever
     * row range the call covers, with the kernels in use and with the scalar ones.
     */
    @ParameterizedTest(name = "{0} x {1} tokens")
    @MethodSource("typesAndTileTokens")
    void aTokensProductsDoNotDependOnWhatSharesTheCall(GgmlType type, int tokens) {
        int rows = 38;
        int cols = type.blockSize() == 1 ? 37 : 2 * type.blockSize();
        byte[] bytes = TestRows.randomRow(type, rows * cols, new Random(31L * cols + tokens));
        long[] dims = {cols, rows};
        for (WeightMatrix w : List.of(WeightMatrix.of(type, dims, MemorySegment.ofArray(bytes)),
                WeightMatrix.of(type, dims, MemorySegment.ofArray(bytes), RowKernels.scalar(type)))) {
            float[] x = TestRows.gaussian(new Random(tokens), tokens * cols, 1f);
            float[] batched = new float[tokens * rows];
            w.matmul(x, tokens, batched, 0, rows);
            float[] split = new float[tokens * rows];
            w.matmul(x, tokens, split, 0, 5);
            w.matmul(x, tokens, split, 5, 22);
            w.matmul(x, tokens, split, 22, rows);
            for (int t = 0; t < tokens; t++) {
                float[] alone = new float[rows];
                w.matmul(Arrays.copyOfRange(x, t * cols, (t + 1) * cols), 1, alone, 0, rows);
                for (int r = 0; r < rows; r++) {
                    String what = w.kernelDescription() + " token " + t + " of " + tokens + ", row " + r;
                    assertEquals(Float.floatToRawIntBits(alone[r]), Float.floatToRawIntBits(batched[t * rows + r]),
                            what + ": alone " + alone[r] + ", batched " + batched[t * rows + r]);
                    assertEquals(Float.floatToRawIntBits(batched[t * rows + r]),
                            Float.floatToRawIntBits(split[t * rows + r]), what + ", rows split");
                }
            }
        }
    }

    /**
     * Without batch invariance a token's products may differ between shapes, but each shape still
     * gives the same bits whichever row range the call covers, so the threads' split does not
     * change results; and it differs from the invariant order only by rounding.
     */
    @ParameterizedTest(name = "{0} x {1} tokens")
    @MethodSource("typesAndTileTokens")
    void theFastestOrderIsTheSameBitsForEveryRowSplit(GgmlType type, int tokens) {
        int rows = 38;
        int cols = type.blockSize() == 1 ? 37 : 2 * type.blockSize();
        byte[] bytes = TestRows.randomRow(type, rows * cols, new Random(37L * cols + tokens));
        WeightMatrix w = WeightMatrix.of(type, new long[] {cols, rows}, MemorySegment.ofArray(bytes));
        MatmulInput x = MatmulInput.of(TestRows.gaussian(new Random(tokens), tokens * cols, 1f), tokens, cols);
        float[] whole = new float[tokens * rows];
        w.matmul(x, whole, 0, rows, null, false);
        float[] split = new float[tokens * rows];
        w.matmul(x, split, 0, 5, null, false);
        w.matmul(x, split, 5, 22, null, false);
        w.matmul(x, split, 22, rows, null, false);
        float[] invariant = new float[tokens * rows];
        w.matmul(x, invariant, 0, rows, null, true);
        for (int i = 0; i < whole.length; i++) {
            assertEquals(Float.floatToRawIntBits(whole[i]), Float.floatToRawIntBits(split[i]), type + " output " + i);
            assertEquals(invariant[i], whole[i], 1e-4 * (1 + Math.abs(invariant[i])), type + " output " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void rowsDecodeAndDotLikeTheScalarSpecification(GgmlType type) {
        WeightMatrix w = randomMatrix(type, 4, 13);
        float[] x = TestRows.gaussian(new Random(14), w.cols(), 1f);
        for (int r = 0; r < 4; r++) {
            float[] row = Quantizer.dequantize(type, rowBytes(w, type, r), 0, w.cols());
            assertArrayEquals(row, w.dequantizeRow(r));
            float[] dst = new float[w.cols() + 3];
            w.getRowInto(r, dst, 3);
            assertArrayEquals(row, Arrays.copyOfRange(dst, 3, dst.length));
            double tol = TestRows.dotTolerance(w.cols(), TestRows.dotMagnitude(type, row, 0, x, 0, w.cols()));
            assertEquals(TestRows.exactDot(row, 0, x, 0, w.cols()), w.dot(r, x, 0), tol);
        }
    }

    /**
     * Threads filling disjoint row ranges of one output, as the forward pass's kernel pool does:
     * every row is written once, with the value a serial product has. Compared within the rounding
     * bound, not to the bit: a range that starts off the serial product's four-row tiles takes
     * other kernels, and the Vector API may sum a reduction in another order once C2 has compiled
     * it than while it is interpreted.
     */
    @Test
    void matmulsOfDisjointRowRangesOnSeveralThreadsMatchTheSerialOne() {
        try (ComputePool pool = new ComputePool(new ComputePool.Config(3))) {
            for (GgmlType type : new GgmlType[] {GgmlType.Q4_0, GgmlType.F16}) {
                int rows = 301;
                int cols = 256;
                WeightMatrix w = WeightMatrix.of(type, new long[] {cols, rows},
                        MemorySegment.ofArray(TestRows.randomRow(type, rows * cols, new Random(15))));
                for (int tokens : new int[] {1, 3}) {
                    float[] x = TestRows.gaussian(new Random(16), tokens * cols, 1f);
                    float[] serial = new float[tokens * rows];
                    float[] parallel = new float[tokens * rows];
                    Arrays.fill(parallel, Float.NaN);
                    w.matmul(x, tokens, serial);
                    MatmulInput input = MatmulInput.of(x, tokens, cols); // one input shared by every thread
                    pool.parallelFor(0, rows, 1, (from, to) -> w.matmul(input, parallel, from, to));
                    for (int t = 0; t < tokens; t++) {
                        for (int r = 0; r < rows; r++) {
                            float[] row = w.dequantizeRow(r);
                            double tol = 2 * TestRows.dotTolerance(cols,
                                    TestRows.dotMagnitude(type, row, 0, x, t * cols, cols));
                            assertEquals(serial[t * rows + r], parallel[t * rows + r], tol,
                                    type + " x " + tokens + ", token " + t + " row " + r);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aMatrixWrittenToGgufReadsBackThroughTheMappedFile(@TempDir Path dir) throws Exception {
        int rows = 7;
        int cols = 512;
        float[] values = TestRows.gaussian(new Random(18), rows * cols, 0.5f);
        byte[] q4 = Quantizer.quantize(GgmlType.Q4_0, values);
        byte[] q6 = TestRows.randomRow(GgmlType.Q6_K, rows * cols, new Random(19));
        Path file = dir.resolve("weights.gguf");
        new GgufWriter()
                .putString("general.architecture", "test")
                .addTensor("blk.0.ffn_up.weight", GgmlType.Q4_0, new long[] {cols, rows}, q4)
                .addTensor("blk.0.ffn_down.weight", GgmlType.Q6_K, new long[] {cols, rows}, q6)
                .addTensor("output_norm.weight", new long[] {cols}, Arrays.copyOf(values, cols))
                .write(file);
        float[] x = TestRows.gaussian(new Random(20), 2 * cols, 1f);
        try (GgufFile gguf = GgufFile.open(file)) {
            for (var expected : new Object[][] {{"blk.0.ffn_up.weight", q4}, {"blk.0.ffn_down.weight", q6}}) {
                GgufTensorInfo info = gguf.tensor((String) expected[0]);
                WeightMatrix mapped = WeightMatrix.of(info.type(), info.dims(), gguf.tensorData(info));
                WeightMatrix heap = WeightMatrix.of(info.type(), info.dims(), MemorySegment.ofArray((byte[]) expected[1]));
                assertEquals(rows, mapped.rows());
                assertEquals(cols, mapped.cols());
                float[] a = new float[2 * rows];
                float[] b = new float[2 * rows];
                mapped.matmul(x, 2, a);
                heap.matmul(x, 2, b);
                assertArrayEquals(b, a);
                assertArrayEquals(heap.dequantizeRow(rows - 1), mapped.dequantizeRow(rows - 1));
            }
            GgufTensorInfo norm = gguf.tensor("output_norm.weight");
            WeightMatrix vector = WeightMatrix.of(norm.type(), norm.dims(), gguf.tensorData(norm));
            assertEquals(1, vector.rows());
            assertArrayEquals(Arrays.copyOf(values, cols), vector.dequantizeRow(0));
        }
    }

    /**
     * The vector kernels compute K-quants from a repacked copy and F16 / BF16 decode from a column-order one,
     * which {@code copyBytes} reports (what a memory limit counts on top of the file); the other
     * formats and the scalar kernels read the data in place.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"})
    void repackedMatricesReportTheirCopysBytes(GgmlType type) {
        int rows = 3;
        int cols = 2 * Math.max(32, type.blockSize());
        byte[] bytes = TestRows.randomRow(type, rows * cols, new Random(5));
        long[] dims = {cols, rows};
        WeightMatrix w = WeightMatrix.of(type, dims, MemorySegment.ofArray(bytes));
        long blocks = (long) rows * cols / type.blockSize();
        long expected = RowKernels.vector(type).isEmpty() ? 0 : switch (type) {
            case Q4_K -> blocks * Q4_KPacked.BLOCK_BYTES;
            case Q5_K -> blocks * Q5_KPacked.BLOCK_BYTES;
            case Q6_K -> blocks * Q6_KPacked.BLOCK_BYTES;
            case F16, BF16 -> HalfColumns.bytes(rows, cols);
            default -> 0;
        };
        assertEquals(expected, w.copyBytes(), type + " with " + w.kernelDescription());
        assertEquals(0, WeightMatrix.of(type, dims, MemorySegment.ofArray(bytes), RowKernels.scalar(type)).copyBytes());
    }

    @Test
    void unsupportedTypesAreRejectedByName() {
        var e = assertThrows(UnsupportedWeightTypeException.class,
                () -> WeightMatrix.of(GgmlType.Q3_K, new long[] {256, 2}, MemorySegment.ofArray(new byte[220])));
        assertEquals(GgmlType.Q3_K, e.type());
        assertTrue(e.getMessage().contains("Q3_K") && e.getMessage().contains("Q4_K"), e.getMessage());
    }

    @Test
    void badShapesAndSizesAreRejected() {
        MemorySegment data = MemorySegment.ofArray(new byte[18 * 4]);
        assertThrows(IllegalArgumentException.class, () -> WeightMatrix.of(GgmlType.Q4_0, new long[] {48, 3}, data));
        assertThrows(IllegalArgumentException.class, () -> WeightMatrix.of(GgmlType.Q4_0, new long[] {32, 3}, data));
        assertThrows(IllegalArgumentException.class, () -> WeightMatrix.of(GgmlType.Q4_0, new long[] {32, 2, 2}, data));
        assertThrows(IllegalArgumentException.class,
                () -> WeightMatrix.of(GgmlType.F32, new long[] {4}, MemorySegment.ofArray(new float[4])));
        WeightMatrix ok = WeightMatrix.of(GgmlType.Q4_0, new long[] {64, 2, 1}, data);
        assertThrows(IndexOutOfBoundsException.class, () -> ok.matmul(new float[64], 2, new float[4]));
        assertThrows(IndexOutOfBoundsException.class, () -> ok.matmul(new float[128], 2, new float[3]));
        assertThrows(IndexOutOfBoundsException.class, () -> ok.matmul(new float[128], 2, new float[4], 1, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> ok.getRowInto(2, new float[64], 0));
    }

    /** The bytes of row {@code r}, found independently of WeightMatrix's own offset arithmetic. */
    private static MemorySegment rowBytes(WeightMatrix w, GgmlType type, int r) {
        long rowBytes = type.byteSize(new long[] {w.cols()});
        return w.data().asSlice(r * rowBytes, rowBytes);
    }
}
