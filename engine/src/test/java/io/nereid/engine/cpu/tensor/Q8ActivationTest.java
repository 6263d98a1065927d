package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.cpu.kernel.VectorWidth;
import io.nereid.engine.cpu.kernel.VectorWidthsUnderTest;
import io.nereid.engine.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Q8_0 weights against activations quantized to Q8_0 ({@link MatmulInput}): the vector
 * quantizer against the scalar specification bit for bit, the integer dot against the exact dot
 * of the decoded values, and against the float activations within the quantization error; at each
 * width of {@link VectorWidthsUnderTest}, as {@link VectorRowKernelsTest}.
 */
@Tag(VectorWidthsUnderTest.TAG)
@ParameterizedClass(name = "{0}", allowZeroInvocations = true)
@MethodSource("io.nereid.engine.cpu.kernel.VectorWidthsUnderTest#widths")
class Q8ActivationTest {

    private final VectorWidth width;
    private final Q8_0Vector vector;

    Q8ActivationTest(VectorWidth width) {
        this.width = width;
        this.vector = (Q8_0Vector) VectorRowKernels.all().get(GgmlType.Q8_0);
    }

    /**
     * {@code x} quantized by this width's vector quantizer, as {@link MatmulInput} does; and, when
     * the width is the one in use, through {@link MatmulInput} itself, which must agree.
     */
    private MatmulInput.Q8 vectorQuantize(float[] x) {
        byte[] q = new byte[x.length];
        float[] d = new float[x.length / Q8_0Format.BLOCK];
        float[] values = new float[x.length];
        for (int b = 0; b < d.length; b++) {
            d[b] = vector.quantizeBlock(x, b * Q8_0Format.BLOCK, q, values);
        }
        MatmulInput.Q8 q8 = new MatmulInput.Q8(q, d, values);
        if (Kernels.vectorWidth().equals(Optional.of(width))) {
            MatmulInput.Q8 viaInput = MatmulInput.of(x, 1, x.length).q8();
            assertArrayEquals(q8.quants(), viaInput.quants(), "MatmulInput quants");
            assertArrayEquals(q8.scales(), viaInput.scales(), "MatmulInput scales");
            assertArrayEquals(q8.values(), viaInput.values(), "MatmulInput values");
        }
        return q8;
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
        assertSameQuantization(x, vectorQuantize(x), "edges");
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 64, 4096, 4128})
    void integerDotMatchesTheDecodedDotAndTheFloatOne(int n) {
        Random random = new Random(n);
        MemorySegment w = MemorySegment.ofArray(TestRows.randomRow(GgmlType.Q8_0, n, random));
        float[] row = new float[n];
        Q8_0Format.INSTANCE.dequantize(w, 0, row, 0, n);
        float[] x = TestRows.gaussian(random, n, 1f);
        MatmulInput.Q8 q8 = vectorQuantize(x);
        assertSameQuantization(x, q8, "n " + n);

        float got = vector.dot(w, 0, q8.quants(), q8.scales(), 0, n);
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
            MatmulInput.Q8 got = vectorQuantize(x);
            float v = vector.dot(w, 0, got.quants(), got.scales(), 0, n);
            if (Math.abs(v - decoded) > tolerance || !Arrays.equals(expected.quants(), got.quants())
                    || !Arrays.equals(expected.values(), got.values())) {
                assertSameQuantization(x, got, "call " + i);
                assertEquals(decoded, v, tolerance, "dot, call " + i);
            }
        }
    }
}
