package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.cpu.kernel.VectorWidthsUnderTest;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Vector API kernel against its scalar specification, at each width of
 * {@link VectorWidthsUnderTest} (the one in use, or 128, 256 and 512 bits in the {@code vector-*}
 * test executions), at sizes that leave every kind of tail (none, less than one vector, less than
 * the 2- or 4-vector unrolled step, for 4, 8 and 16 lanes) and at unaligned offsets. Decoding must
 * agree bit for bit; dot products ({@code dot} and {@code dotFast}) within a size-scaled rounding
 * bound, since the vector kernels sum in another order.
 */
@Tag(VectorWidthsUnderTest.TAG)
@ParameterizedClass(name = "{0}", allowZeroInvocations = true)
@MethodSource("io.nereid.engine.cpu.kernel.VectorWidthsUnderTest#widths")
class VectorRowKernelsTest {

    /** Elements, for the formats without blocks. */
    static final int[] PLAIN_SIZES = {1, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 4095, 4097};

    /** Blocks, for the block formats. */
    static final int[] BLOCK_COUNTS = {1, 3, 7, 128, 129};

    private final Map<GgmlType, RowKernel> vectorKernels;

    VectorRowKernelsTest(VectorWidth width) {
        this.vectorKernels = VectorRowKernels.all();
    }

    private RowKernel vector(GgmlType type) {
        return vectorKernels.get(type);
    }

    private FloatDot vectorFloatDot() {
        return (FloatDot) vector(GgmlType.F32);
    }

    static Stream<Arguments> typesAndSizes() {
        Stream<Arguments> plain = Stream.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16)
                .flatMap(t -> Arrays.stream(PLAIN_SIZES).mapToObj(n -> Arguments.of(t, n)));
        Stream<Arguments> blocks = Stream.of(GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K)
                .flatMap(t -> Arrays.stream(BLOCK_COUNTS).mapToObj(b -> Arguments.of(t, b * t.blockSize())));
        return Stream.concat(plain, blocks);
    }

    @ParameterizedTest(name = "{0} x {1}")
    @MethodSource("typesAndSizes")
    void vectorDotAndDequantizeMatchTheScalarSpecification(GgmlType type, int n) {
        RowKernel scalar = RowKernels.scalar(type);
        RowKernel vector = vector(type);
        Random random = new Random(31L * n + type.ordinal());
        byte[] row = TestRows.randomRow(type, n, random);
        float[] x = TestRows.gaussian(random, n + 5, 1f);
        for (int misalign : new int[] {0, 1, 3}) {
            byte[] padded = new byte[row.length + misalign];
            System.arraycopy(row, 0, padded, misalign, row.length);
            MemorySegment w = MemorySegment.ofArray(padded);

            float[] expected = new float[n + 2];
            float[] got = new float[n + 2];
            scalar.dequantize(w, misalign, expected, 2, n);
            vector.dequantize(w, misalign, got, 2, n);
            assertArrayEquals(expected, got, type + " decode, misaligned by " + misalign);

            float s = scalar.dot(w, misalign, x, 5, n);
            float v = vector.dot(w, misalign, x, 5, n);
            double magnitude = TestRows.dotMagnitude(type, expected, 2, x, 5, n);
            // both are within dotTolerance of the exact value, so within twice of each other
            assertEquals(s, v, 2 * TestRows.dotTolerance(n, magnitude), type + " dot, misaligned by " + misalign);
            float fast = vector.dotFast(w, misalign, x, 5, n);
            assertEquals(s, fast, 2 * TestRows.dotTolerance(n, magnitude), type + " dotFast, misaligned by " + misalign);
        }
    }

    @ParameterizedTest
    @MethodSource("floatDotSizes")
    void vectorFloatArrayDotMatchesTheScalarOne(int n) {
        Random random = new Random(n);
        float[] a = TestRows.gaussian(random, n + 3, 1f);
        float[] b = TestRows.gaussian(random, n + 1, 1f);
        FloatDot vector = vectorFloatDot();
        float s = F32Format.INSTANCE.dot(a, 3, b, 1, n);
        assertEquals(s, vector.dot(a, 3, b, 1, n), 2 * TestRows.dotTolerance(n, TestRows.absDot(a, 3, b, 1, n)));

        // dot4: four vectors at stride n + 2 from offset 1, results at stride 3 from offset 2
        float[] xs = TestRows.gaussian(random, 1 + 4 * (n + 2), 1f);
        float[] expected = new float[2 + 3 * 4];
        float[] got = new float[2 + 3 * 4];
        F32Format.INSTANCE.dot4(a, 3, xs, 1, n + 2, n, expected, 2, 3);
        vector.dot4(a, 3, xs, 1, n + 2, n, got, 2, 3);
        for (int t = 0; t < 4; t++) {
            double tol = 2 * TestRows.dotTolerance(n, TestRows.absDot(a, 3, xs, 1 + t * (n + 2), n));
            assertEquals(expected[2 + 3 * t], got[2 + 3 * t], tol, "dot4 vector " + t);
        }
        assertEquals(0f, got[0] + got[1] + got[3] + got[4], "dot4 writes only its four outputs");
    }

    @ParameterizedTest
    @MethodSource("floatDotSizes")
    void vectorFourByFourTileMatchesTheScalarOne(int n) {
        Random random = new Random(7L * n);
        // four rows at stride n + 3 from offset 2, four vectors at stride n + 1 from offset 1,
        // results at token stride 6 from offset 1 (row j of token t at 1 + 6t + j)
        float[] w = TestRows.gaussian(random, 2 + 4 * (n + 3), 1f);
        float[] xs = TestRows.gaussian(random, 1 + 4 * (n + 1), 1f);
        float[] expected = new float[1 + 6 * 4];
        float[] got = new float[1 + 6 * 4];
        F32Format.INSTANCE.dot4x4(w, 2, n + 3, xs, 1, n + 1, n, expected, 1, 6, new float[FloatDot.TILE_LANES + 3], 3);
        vectorFloatDot().dot4x4(w, 2, n + 3, xs, 1, n + 1, n, got, 1, 6, new float[FloatDot.TILE_LANES + 3], 3);
        for (int t = 0; t < 4; t++) {
            for (int j = 0; j < 4; j++) {
                int o = 1 + 6 * t + j;
                assertEquals(F32Format.INSTANCE.dot(w, 2 + j * (n + 3), xs, 1 + t * (n + 1), n), expected[o],
                        "scalar dot4x4 is four times four dots");
                double tol = 2 * TestRows.dotTolerance(n, TestRows.absDot(w, 2 + j * (n + 3), xs, 1 + t * (n + 1), n));
                assertEquals(expected[o], got[o], tol, "dot4x4 token " + t + " row " + j);
            }
            assertEquals(0f, got[1 + 6 * t + 4] + got[1 + 6 * t + 5], "dot4x4 writes only its sixteen outputs");
        }
        assertEquals(0f, got[0], "dot4x4 writes only its sixteen outputs");
    }

    static IntStream floatDotSizes() {
        return Arrays.stream(PLAIN_SIZES);
    }

    /**
     * The parameterized cases above mostly run interpreted; these calls repeat until C2 has
     * compiled the kernels with the Vector API intrinsics (10,000 invocations is the usual
     * threshold), and the compiled code must agree with the specification as well.
     */
    @ParameterizedTest
    @MethodSource("allTypes")
    void compiledKernelsStillMatchTheScalarSpecification(GgmlType type) {
        int n = Math.max(2 * type.blockSize(), 48); // two blocks; 48 leaves a tail for the plain formats
        Random random = new Random(type.ordinal());
        MemorySegment w = MemorySegment.ofArray(TestRows.randomRow(type, n, random));
        float[] x = TestRows.gaussian(random, n, 1f);
        RowKernel scalar = RowKernels.scalar(type);
        RowKernel vector = vector(type);
        float[] expected = new float[n];
        scalar.dequantize(w, 0, expected, 0, n);
        float s = scalar.dot(w, 0, x, 0, n);
        double tolerance = 2 * TestRows.dotTolerance(n, TestRows.dotMagnitude(type, expected, 0, x, 0, n));
        float[] got = new float[n];
        float firstFast = vector.dotFast(w, 0, x, 0, n);
        for (int i = 0; i < 20_000; i++) {
            float v = vector.dot(w, 0, x, 0, n);
            float fast = vector.dotFast(w, 0, x, 0, n);
            vector.dequantize(w, 0, got, 0, n);
            if (Math.abs(v - s) > tolerance || Math.abs(fast - s) > tolerance || !Arrays.equals(expected, got)
                    || Float.compare(fast, firstFast) != 0) {
                assertEquals(s, v, tolerance, type + " dot, call " + i);
                assertEquals(s, fast, tolerance, type + " dotFast, call " + i);
                assertArrayEquals(expected, got, type + " decode, call " + i);
                assertEquals(firstFast, fast, type + " dotFast gives the same bits compiled as interpreted, call " + i);
            }
        }
    }

    /**
     * Four tokens against two rows ({@code dot4Tokens2Rows}) give each row the bits of four tokens
     * against that row alone ({@code dot4Tokens}), interpreted and after C2 compiled both: the
     * batch-invariant order holds through the two-row kernel.
     */
    @ParameterizedTest
    @MethodSource("allTypes")
    void twoRowsOfFourTokensAreTwoCallsOfFourTokens(GgmlType type) {
        int n = 2 * Math.max(type.blockSize(), 32);
        Random random = new Random(31 + type.ordinal());
        WeightMatrix w = WeightMatrix.of(type, new long[] {n, 2}, MemorySegment.ofArray(TestRows.randomRow(type, 2 * n, random)));
        float[] x = TestRows.gaussian(random, 4 * n, 1f);
        float[] pair = new float[8];
        float[] alone = new float[8];
        for (int c = 0; c < 20_000; c++) {
            w.matmul(x, 4, pair, 0, 2);
            w.matmul(x, 4, alone, 0, 1);
            w.matmul(x, 4, alone, 1, 2);
            if (!Arrays.equals(pair, alone)) {
                assertArrayEquals(alone, pair, type + ": two rows at once are each row alone, call " + c);
            }
        }
    }

    /**
     * In the faster order a step of a few tokens gives each token the bits it gets alone,
     * interpreted and after C2 compiled the kernels, on a matrix with an interleaved group and
     * rows after it: a speculative verification of up to 14 drafts (2 for F32, whose row kernels
     * share only two or three) scores them exactly as plain decoding would.
     */
    @ParameterizedTest
    @MethodSource("allTypes")
    void aFewTokensInTheFasterOrderAreEachTokenAlone(GgmlType type) {
        int n = 2 * Math.max(type.blockSize(), 32);
        int rows = Interleaved.GROUP + 5;
        int most = type == GgmlType.F32 ? 3
                : type == GgmlType.F16 || type == GgmlType.BF16 ? WeightMatrix.PANEL_TOKENS - 1
                : WeightMatrix.interleavedTokens(type) - 1;
        Random random = new Random(47 + type.ordinal());
        WeightMatrix w = WeightMatrix.of(type, new long[] {n, rows},
                MemorySegment.ofArray(TestRows.randomRow(type, rows * n, random)));
        float[] x = TestRows.gaussian(random, most * n, 1f);
        float[] scratch = new float[WeightMatrix.scratchSize(n)];
        float[] together = new float[most * rows];
        float[] alone = new float[most * rows];
        float[] one = new float[rows];
        for (int c = 0; c < 6_000; c++) {
            int tokens = 2 + c % (most - 1);
            int from = c % 5 == 4 ? 3 : 0; // a range that cuts the group
            w.matmul(MatmulInput.of(Arrays.copyOf(x, tokens * n), tokens, n), together, from, rows,
                    c % 3 == 0 ? null : scratch, false);
            for (int t = 0; t < tokens; t++) {
                w.matmul(MatmulInput.of(Arrays.copyOfRange(x, t * n, (t + 1) * n), 1, n), one, 0, rows, scratch,
                        false);
                System.arraycopy(one, 0, alone, t * rows, rows);
            }
            for (int t = 0; t < tokens; t++) {
                if (!Arrays.equals(together, t * rows + from, (t + 1) * rows, alone, t * rows + from, (t + 1) * rows)) {
                    assertArrayEquals(Arrays.copyOfRange(alone, t * rows + from, (t + 1) * rows),
                            Arrays.copyOfRange(together, t * rows + from, (t + 1) * rows),
                            type + ": token " + t + " of " + tokens + " at once is the token alone, call " + c);
                }
            }
        }
    }

    /**
     * A kernel that computes several tokens in one order ({@code dotsTokens}: F16) gives every
     * token of a matmul of 1 to 15 tokens {@code dot}'s bits for its row, in the faster order and
     * the batch-invariant one, on any row range (four rows side by side and the rows left over),
     * with a row longer than the widened chunk and a tail past the last whole vector; interpreted
     * and after C2 compiled the kernel. (The matrix is made without the F16 column copy, as an
     * embedding's is: with it, F16's and BF16's faster order is {@link HalfColumns}' chain, {@code HalfColumnsTest}.)
     */
    @ParameterizedTest
    @MethodSource("manyTokenTypes")
    void aKernelOfManyTokensGivesEachTokenDotsBits(GgmlType type) {
        RowKernel k = vector(type);
        assertTrue(k.dotsTokens(), type + " has a many-token kernel");
        int n = 2 * WideningKernel.CHUNK + 76; // three chunks, the last with a 12-element tail at 512 bits
        int rows = 7;
        Random random = new Random(53 + type.ordinal());
        byte[] bytes = TestRows.randomRow(type, rows * n, random);
        MemorySegment data = MemorySegment.ofArray(bytes);
        WeightMatrix w = WeightMatrix.forLookup(type, new long[] {n, rows}, data);
        long rowBytes = (long) n * 2;
        float[] x = TestRows.gaussian(random, 15 * n, 1f);
        float[] form = MatmulInput.of(x, 15, n).values(MatmulInput.Form.of(type)); // what the matmul dots
        float[] expected = new float[15 * rows];
        for (int t = 0; t < 15; t++) {
            for (int r = 0; r < rows; r++) {
                expected[t * rows + r] = k.dot(data, r * rowBytes, form, t * n, n);
            }
        }
        float[] got = new float[15 * rows];
        for (int c = 0; c < 3_000; c++) {
            int tokens = 1 + c % 15;
            int from = c % 4 == 3 ? 1 : 0, to = c % 4 == 3 ? rows - 1 : rows;
            Arrays.fill(got, Float.NaN);
            w.matmul(MatmulInput.of(Arrays.copyOf(x, tokens * n), tokens, n), got, from, to, null, c % 2 == 1);
            for (int t = 0; t < tokens; t++) {
                for (int r = from; r < to; r++) {
                    if (Float.compare(got[t * rows + r], expected[t * rows + r]) != 0) {
                        assertEquals(expected[t * rows + r], got[t * rows + r], type + ": token " + t + " of " + tokens
                                + ", row " + r + " of [" + from + ", " + to + "), call " + c);
                    }
                }
            }
        }
    }

    /**
     * {@link Q4_KPacked}, {@link Q5_KPacked} and {@link Q6_KPacked}, which the vector kernels of
     * those formats bind a matrix to: decoding a repacked row gives the specification's bits, and
     * {@code dot4Tokens} gives each token {@code dot}'s bits (interpreted and, after 20,000 calls,
     * compiled), so the batch-invariant order holds; {@code dot} and {@code dotFast} are within
     * rounding of the specification, {@code dotFast} is the same bits compiled as interpreted, and
     * {@code dotFastRows} is {@code dotFast} row by row, with and without scratch.
     */
    @ParameterizedTest(name = "{0} x {1} blocks")
    @MethodSource("packedTypesAndBlockCounts")
    void repackedKQuantsDecodeAsTheSpecificationAndKeepTheInvariantOrder(GgmlType type, int blocks) {
        int n = blocks * 256;
        Random random = new Random(blocks + 31L * type.ordinal());
        MemorySegment original = MemorySegment.ofArray(TestRows.randomRow(type, n, random));
        RowKernel q = vector(type);
        RowKernel.Bound bound = q.bind(original, blocks);
        RowKernel p = bound.kernel();
        MemorySegment packed = bound.data();
        assertTrue(p != q && packed != original, type + " is repacked");
        assertEquals(packed.byteSize(), (long) blocks * bound.bytesPerBlock());
        float[] x = TestRows.gaussian(random, 4 * n + 3, 1f);
        float[] expected = new float[n];
        float[] got = new float[n];
        RowKernel spec = RowKernels.scalar(type);
        spec.dequantize(original, 0, expected, 0, n);
        float s = spec.dot(original, 0, x, 3, n);
        double tolerance = 2 * TestRows.dotTolerance(n, TestRows.dotMagnitude(type, expected, 0, x, 3, n));
        float[] dots = new float[4];
        float[] four = new float[4];
        float[] rows = new float[3];
        float firstFast = p.dotFast(packed, 0, x, 3, n);
        int calls = blocks <= 3 ? 20_000 : 1;
        for (int c = 0; c < calls; c++) {
            p.dequantize(packed, 0, got, 0, n);
            for (int t = 0; t < 4; t++) {
                dots[t] = p.dot(packed, 0, x, 3 + t * n, n);
            }
            float fast = p.dotFast(packed, 0, x, 3, n);
            p.dot4Tokens(packed, 0, x, 3, n, n, four, 0);
            // one row twice (a stride of 0 bytes), with scratch (c odd) and without
            p.dotFastRows(packed, 0, 0, 2, x, 3, n, rows, 1, c % 2 == 1 ? new float[n] : null);
            if (!Arrays.equals(expected, got) || !Arrays.equals(dots, four) || Math.abs(dots[0] - s) > tolerance
                    || Math.abs(fast - s) > tolerance || Float.compare(fast, firstFast) != 0
                    || Float.compare(rows[1], fast) != 0 || Float.compare(rows[2], fast) != 0 || rows[0] != 0f) {
                assertArrayEquals(expected, got, "decode, call " + c);
                assertArrayEquals(dots, four, "dot4Tokens is dot token by token, call " + c);
                assertEquals(s, dots[0], tolerance, "dot, call " + c);
                assertEquals(s, fast, tolerance, "dotFast, call " + c);
                assertEquals(firstFast, fast, "dotFast gives the same bits compiled as interpreted, call " + c);
                assertArrayEquals(new float[] {0f, fast, fast}, rows, "dotFastRows is dotFast row by row, call " + c);
            }
        }
    }

    static Stream<Arguments> packedTypesAndBlockCounts() {
        return Stream.of(GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K)
                .flatMap(t -> Arrays.stream(BLOCK_COUNTS).mapToObj(b -> Arguments.of(t, b)));
    }

    /** The formats whose kernel answers {@code dotsTokens}. */
    static Stream<GgmlType> manyTokenTypes() {
        return Stream.of(GgmlType.F16, GgmlType.BF16);
    }

    static Stream<GgmlType> allTypes() {
        return Stream.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K,
                GgmlType.Q5_K, GgmlType.Q6_K);
    }

    @Test
    void everyHalfAndBf16BitPatternDecodesExactly() {
        byte[] all = new byte[2 << 16];
        MemorySegment w = MemorySegment.ofArray(all);
        for (int bits = 0; bits < 1 << 16; bits++) {
            w.set(Bytes.SHORT, 2L * bits, (short) bits);
        }
        for (GgmlType type : new GgmlType[] {GgmlType.F16, GgmlType.BF16}) {
            float[] expected = new float[1 << 16];
            float[] got = new float[1 << 16];
            RowKernels.scalar(type).dequantize(w, 0, expected, 0, 1 << 16);
            vector(type).dequantize(w, 0, got, 0, 1 << 16);
            for (int i = 0; i < got.length; i++) {
                if (Float.isNaN(expected[i])) {
                    // NaN, payload aside: Float.float16ToFloat itself quiets signalling NaNs when
                    // intrinsified (vcvtph2ps) and keeps them when interpreted
                    assertTrue(Float.isNaN(got[i]), type + " bits 0x" + Integer.toHexString(i));
                } else { // raw bits: the sign of zero must survive too
                    assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(got[i]),
                            type + " bits 0x" + Integer.toHexString(i));
                }
            }
        }
    }

    @Test
    void extremeQuantsAndScalesDecodeExactly() {
        // all-ones and all-zero quant bytes: the largest and smallest nibbles, high bits and signed scales
        for (GgmlType type : new GgmlType[] {GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K}) {
            for (int fill : new int[] {0x00, 0xFF, 0x80, 0x7F}) {
                byte[] row = new byte[3 * type.bytesPerBlock()];
                Arrays.fill(row, (byte) fill);
                MemorySegment w = MemorySegment.ofArray(row);
                for (int b = 0; b < 3; b++) { // keep the fp16 scales finite: 0x7C00 and up are Inf/NaN
                    long block = (long) b * type.bytesPerBlock();
                    long dAt = type == GgmlType.Q6_K ? block + 208 : block;
                    Bytes.putF16(w, dAt, 0.25f);
                    if (type == GgmlType.Q4_K || type == GgmlType.Q5_K) {
                        Bytes.putF16(w, block + 2, 0.125f);
                    }
                }
                int n = 3 * type.blockSize();
                float[] expected = new float[n];
                float[] got = new float[n];
                RowKernels.scalar(type).dequantize(w, 0, expected, 0, n);
                vector(type).dequantize(w, 0, got, 0, n);
                assertArrayEquals(expected, got, type + " filled with 0x" + Integer.toHexString(fill));
                assertTrue(Arrays.stream(box(expected)).allMatch(Float::isFinite));
            }
        }
    }

    private static Float[] box(float[] a) {
        Float[] b = new Float[a.length];
        for (int i = 0; i < a.length; i++) {
            b[i] = a[i];
        }
        return b;
    }
}
