package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Q8_0 weights against activations quantized to Q8_0 ({@link MatmulInput}): the vector
 * quantizer against the scalar specification bit for bit, the integer dot against the exact dot
 * of the decoded values, and against the float activations within the quantization error.
 */
class Q8ActivationTest {

    @BeforeAll
    static void vectorKernelsAreInUse() {
        assumeTrue(RowKernels.vector(GgmlType.Q8_0).isPresent(), "vector kernels not in use: " + RowKernels.description());
    }

    /** The scalar specification's quants, scales and decoded values of {@code x}. */
    private static MatmulInput.Q8 scalarQuantize(float[] x) {
        byte[] q = new byte[x.length];
        float[] d = new float[x.length / Q8_0Format.BLOCK];
        for (int b = 0; b < d.length; b++) {
            d[b] = Q8_0Format.quantizeBlock(x, b * Q8_0Format.BLOCK, q, b * Q8_0Format.BLOCK);
        }
        return new MatmulInput.Q8(q, d, TestRows.matmulActivations(GgmlType.Q8_0, x, x.length));
    }

    private static void assertSameQuantization(float[] x, MatmulInput.Q8 got, String what) {
        MatmulInput.Q8 expected = scalarQuantize(x);
        assertArrayEquals(expected.quants(), got.quants(), what + " quants");
        assertArrayEquals(expected.scales(), got.scales(), what + " scales");
        assertArrayEquals(expected.values(), got.values(), what + " values");
    }

    /** Ties, values next to ties, zeros, a zero block and the extremes: rounding half away from zero. */
    @Test
    void vectorQuantizationRoundsLikeTheSpecification() {
        float[] x = new float[3 * Q8_0Format.BLOCK];
        float[] edges = {127f, -127f, 2.5f, -2.5f, 0.5f, -0.5f, Math.nextDown(0.5f), -Math.nextDown(0.5f),
            Math.nextUp(0.5f), 126.5f, -126.5f, Math.nextDown(126.5f), 0f, -0f, 1e-30f, 64.5f};
        System.arraycopy(edges, 0, x, 0, edges.length); // block 0: d = 1, so these are the scaled values
        Random random = new Random(5);
        for (int i = 2 * Q8_0Format.BLOCK; i < x.length; i++) {
            x[i] = (float) random.nextGaussian() * 1e-3f; // block 1 stays zero
        }
        assertSameQuantization(x, MatmulInput.of(x, 3, Q8_0Format.BLOCK).q8(), "edges");
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 64, 4096, 4128})
    void integerDotMatchesTheDecodedDotAndTheFloatOne(int n) {
        Random random = new Random(n);
        MemorySegment w = MemorySegment.ofArray(TestRows.randomRow(GgmlType.Q8_0, n, random));
        float[] row = new float[n];
        Q8_0Format.INSTANCE.dequantize(w, 0, row, 0, n);
        float[] x = TestRows.gaussian(random, n, 1f);
        MatmulInput.Q8 q8 = MatmulInput.of(x, 1, n).q8();
        assertSameQuantization(x, q8, "n " + n);

        float got = Q8_0Vector.INSTANCE.dot(w, 0, q8.quants(), q8.scales(), 0, n);
        double decoded = TestRows.exactDot(row, 0, q8.values(), 0, n);
        assertEquals(decoded, got, TestRows.dotTolerance(n, TestRows.absDot(row, 0, q8.values(), 0, n)), "decoded");

        // each activation moves by at most half its block's step d: |error| <= sum |w_i| d_b / 2
        double bound = 0;
        for (int i = 0; i < n; i++) {
            bound += Math.abs(row[i]) * q8.scales()[i / Q8_0Format.BLOCK] / 2;
        }
        double exact = TestRows.exactDot(row, 0, x, 0, n);
        assertEquals(exact, got, bound + TestRows.dotTolerance(n, TestRows.absDot(row, 0, x, 0, n)), "float");
        assertTrue(bound < 0.02 * TestRows.absDot(row, 0, x, 0, n), "the bound is the int8 one, not a loose one");
    }

    /** As {@code VectorKernelTest}'s compiled check: once C2 has compiled both, they still agree. */
    @Test
    void compiledQuantizerAndDotStillMatch() {
        int n = 2 * Q8_0Format.BLOCK;
        Random random = new Random(9);
        MemorySegment w = MemorySegment.ofArray(TestRows.randomRow(GgmlType.Q8_0, n, random));
        float[] x = TestRows.gaussian(random, n, 1f);
        MatmulInput.Q8 expected = scalarQuantize(x);
        float[] row = new float[n];
        Q8_0Format.INSTANCE.dequantize(w, 0, row, 0, n);
        double decoded = TestRows.exactDot(row, 0, expected.values(), 0, n);
        double tolerance = TestRows.dotTolerance(n, TestRows.absDot(row, 0, expected.values(), 0, n));
        for (int i = 0; i < 20_000; i++) {
            MatmulInput.Q8 got = MatmulInput.of(x, 1, n).q8();
            float v = Q8_0Vector.INSTANCE.dot(w, 0, got.quants(), got.scales(), 0, n);
            if (Math.abs(v - decoded) > tolerance || !Arrays.equals(expected.quants(), got.quants())
                    || !Arrays.equals(expected.values(), got.values())) {
                assertSameQuantization(x, got, "call " + i);
                assertEquals(decoded, v, tolerance, "dot, call " + i);
            }
        }
    }
}
