package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nereid.engine.cpu.kernel.VectorWidthsUnderTest;
import io.nereid.engine.gguf.GgmlType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link MatmulInput}'s forms: llama.cpp's roundings on values chosen to tell them apart, and the
 * same form whichever way it is computed, by several threads at once or into reused
 * {@link MatmulInput.Buffers}.
 */
@Tag(VectorWidthsUnderTest.TAG) // the quants are computed on the width's lanes (QuantLanes)
class MatmulInputTest {

    private static final int COLS = 2048;
    private static final int TOKENS = 9;

    private static float[] activations(int n, long seed) {
        return TestRows.gaussian(new Random(seed), n, 1f);
    }

    /** {@code got}'s first {@code n} elements equal {@code expected}'s. */
    private static void assertSameForm(float[] expected, float[] got, int n, String what) {
        assertArrayEquals(Arrays.copyOf(expected, n), Arrays.copyOf(got, n), what);
    }

    private static float[] form(MatmulInput.Form form, float... x) {
        return MatmulInput.of(x, 1, x.length).values(form).clone();
    }

    @Test
    void q8_0BlocksRoundHalfToEvenWithTheScaleStoredAsF16() {
        float[] x = new float[32];
        x[0] = 127f;        // amax: d = 1, id = 1
        x[1] = 2.5f;        // half: to even, 2
        x[2] = 3.5f;        // 4
        x[3] = -2.5f;       // -2
        x[4] = 0.4f;        // 0
        float[] q = form(MatmulInput.Form.Q8_0, x);
        assertArrayEquals(new float[] {127f, 2f, 4f, -2f, 0f}, Arrays.copyOf(q, 5));
        // amax 1: d = 1/127 rounded to F16, quants rint(x * 127)
        float[] y = new float[32];
        y[0] = 1f;
        y[1] = 0.5f;
        float d = Float.float16ToFloat(Float.floatToFloat16(1f / 127f));
        float[] qy = form(MatmulInput.Form.Q8_0, y);
        assertEquals(127 * d, qy[0]);
        assertEquals((float) Math.rint(0.5f * 127f) * d, qy[1]);
        assertArrayEquals(new float[32], form(MatmulInput.Form.Q8_0, new float[32]), "a zero block");
    }

    @Test
    void q8_KBlocksScaleByTheValueOfLargestMagnitudeWithItsSign() {
        float[] x = new float[256];
        x[7] = -2f;         // max = -2, iscale = 63.5, d = 1/63.5
        x[8] = 2f;          // same magnitude, later: not the max
        x[9] = 1f / 127f;   // iscale * x = 0.5: to even, 0
        x[10] = 3f / 127f;  // 1.5 -> -2 (the scale is negative)
        float[] q = form(MatmulInput.Form.Q8_K, x);
        float iscale = -127f / -2f;
        float d = 1f / iscale;
        assertEquals(d * (float) Math.rint(iscale * -2f), q[7]);
        assertEquals(d * Math.min(127f, (float) Math.rint(iscale * 2f)), q[8]);
        assertEquals(0f, q[9]);
        assertEquals(d * (float) Math.rint(iscale * x[10]), q[10]);
        assertArrayEquals(new float[256], form(MatmulInput.Form.Q8_K, new float[256]), "a zero block");
        assertThrows(IllegalArgumentException.class, () -> MatmulInput.of(new float[64], 1, 64).values(
                MatmulInput.Form.Q8_K), "rows shorter than a block");
    }

    /** The quants round half to even, as ggml's {@code _mm256_round_ps} and {@link Math#rint}: 2.5 to 2, 3.5 to 4. */
    @Test
    void quantsRoundHalfToEven() {
        float[] x = new float[32];
        float[] halves = {127f, 2.5f, -2.5f, 3.5f, -3.5f, 0.5f, -0.5f, 1.5f, 126.5f, -126.5f};
        System.arraycopy(halves, 0, x, 0, halves.length);
        MatmulInput.Quants q = MatmulInput.of(x, 1, 32).quants(MatmulInput.Form.Q8_0);
        int[] expected = {127, 2, -2, 4, -4, 0, 0, 2, 126, -126};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], q.q16()[i], "element " + i + " (" + halves[i] + ")");
            assertEquals((float) expected[i], q.qf()[i], 0f, "element " + i + " as a float");
        }
        assertEquals(0f, q.qf()[31], 0f);
    }

    /**
     * A block whose largest magnitude is so small that {@code 127 / amax} overflows (its F16 scale is
     * 0) gets integers within [-127, 127], the same in every array, rather than infinities.
     */
    @Test
    void aBlockWhoseScaleOverflowsGetsClampedIntegers() {
        float[] x = new float[256];
        x[0] = 1e-38f;
        x[1] = -1e-38f;
        for (MatmulInput.Form form : new MatmulInput.Form[] {MatmulInput.Form.Q8_0, MatmulInput.Form.Q8_K}) {
            MatmulInput.Quants q = MatmulInput.of(x, 1, 256).quants(form);
            for (int i = 0; i < 256; i++) {
                int v = q.q16()[i];
                assertEquals(true, Math.abs(v) <= 127, form + " element " + i + " is " + v);
                assertEquals((float) v, q.qf()[i], 0f, form + " element " + i + " as a float");
                assertEquals(v & 0xFFFF | v << 16, q.q()[i], form + " element " + i + " in both halves");
            }
            assertEquals(0f, Math.abs(q.d()[0]), 0f, form + ": the scale underflows to 0");
        }
    }

    /**
     * The integer quants the interleaved kernels multiply stand for the form's values exactly, with
     * the sums of 32 of Q8_K and the nibble bias of both forms (each 16-bit value in both halves of
     * its int), through buffers reused by a second input; a block of zeros included.
     */
    @Test
    void quantsAreTheFormsIntegersAndScales() {
        int cols = 512;
        MatmulInput.Buffers buffers = new MatmulInput.Buffers(2 * cols);
        for (MatmulInput.Form form : new MatmulInput.Form[] {MatmulInput.Form.Q8_0, MatmulInput.Form.Q8_K}) {
            for (int round = 0; round < 2; round++) {
                float[] x = TestRows.gaussian(new Random(round), 2 * cols, 3f);
                Arrays.fill(x, cols, cols + 256, 0f);
                MatmulInput in = MatmulInput.of(x, 2, cols, buffers);
                MatmulInput.Quants q = in.quants(form);
                float[] values = MatmulInput.of(x, 2, cols).values(form);
                int block = form.block();
                for (int i = 0; i < 2 * cols; i++) {
                    int v = q.value(i);
                    assertEquals(values[i], q.d()[i / block] * v, 0f, form + " element " + i); // -0.0 is 0 here
                    assertEquals(true, Math.abs(v) <= 127, form + " element " + i + " is " + v);
                    assertEquals(v & 0xFFFF | v << 16, q.q()[i], form + " element " + i + " in both halves");
                    assertEquals(v, q.q16()[i], form + " element " + i + " on 16 bits");
                    assertEquals(Float.floatToRawIntBits(v), Float.floatToRawIntBits(q.qf()[i]), form + " element " + i + " as a float");
                }
                for (int s = 0; s < 2 * cols / 32; s++) {
                    int low = 0;
                    for (int i = 32 * s; i < 32 * s + 16; i++) {
                        low += q.value(i);
                    }
                    assertEquals(-8 * low & 0xFFFF | -8 * low << 16, q.lows()[s], form + " bias " + s);
                }
                if (form == MatmulInput.Form.Q8_K) {
                    for (int s = 0; s < 2 * cols / 32; s++) {
                        int sum = 0;
                        for (int i = 32 * s; i < 32 * s + 32; i++) {
                            sum += q.value(i);
                        }
                        assertEquals(sum, q.sums()[s], "sum " + s);
                    }
                }
                assertSame(q, in.quants(form));
            }
        }
        assertThrows(IllegalArgumentException.class, () -> MatmulInput.of(new float[32], 1, 32).quants(MatmulInput.Form.F16));
    }

    @Test
    void f16AndBf16RoundToNearestEven() {
        float between = 1f + 0x1p-11f;   // halfway between two F16 values: to the even one, 1
        assertEquals(1f, form(MatmulInput.Form.F16, between)[0]);
        float bfHalf = 1f + 0x1p-8f;     // halfway between two BF16 values: to even, 1
        assertEquals(1f, form(MatmulInput.Form.BF16, bfHalf)[0]);
        assertEquals(1f + 0x1p-6f, form(MatmulInput.Form.BF16, 1f + 0x1p-6f + 0x1p-9f)[0]);
        float[] x = {0.1f, -3.7f};
        assertSame(x, MatmulInput.of(x, 1, 2).values(MatmulInput.Form.F32), "F32 is the input itself");
    }

    @Test
    void reusedBuffersHoldTheSameFormAsArraysOfItsOwn() {
        MatmulInput.Buffers buffers = new MatmulInput.Buffers(2 * TOKENS * COLS);
        float[] larger = activations(2 * TOKENS * COLS, 1);
        for (MatmulInput.Form form : MatmulInput.Form.values()) {
            MatmulInput.of(larger, 2 * TOKENS, COLS, buffers).values(form); // leaves a form beyond the next input's
            float[] x = activations(TOKENS * COLS, 2);
            float[] expected = MatmulInput.of(x, TOKENS, COLS).values(form);
            assertSameForm(expected, MatmulInput.of(x, TOKENS, COLS, buffers).values(form), TOKENS * COLS,
                    form + " in reused buffers");
        }
    }

    @Test
    void buffersSmallerThanTheInputAreRejected() {
        MatmulInput.Buffers buffers = new MatmulInput.Buffers(COLS);
        float[] x = new float[2 * COLS];
        assertThrows(IllegalArgumentException.class, () -> MatmulInput.of(x, 2, COLS, buffers));
        assertThrows(IllegalArgumentException.class, () -> new MatmulInput.Buffers(-1));
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void threadsAskingAtOnceShareTheWorkAndAllGetTheWholeForm() throws Exception {
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 20; round++) {
                float[] x = activations(TOKENS * COLS, 10 + round);
                MatmulInput.Form form = MatmulInput.Form.values()[round % MatmulInput.Form.values().length];
                float[] expected = MatmulInput.of(x, TOKENS, COLS).values(form);
                MatmulInput shared = MatmulInput.of(x, TOKENS, COLS);
                CountDownLatch start = new CountDownLatch(1);
                List<Future<float[]>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        return shared.values(form);
                    }));
                }
                start.countDown();
                for (Future<float[]> result : results) {
                    assertSameForm(expected, result.get(10, TimeUnit.SECONDS), TOKENS * COLS, "round " + round);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The transposed form's layout: groups of four vectors of tokens, the last one smaller and its
     * padded lanes zero, each element where {@link io.nereid.engine.cpu.kernel.PanelDot} reads it (one group, which is
     * transposed by blocks of columns, and several; one vector of tokens paired); with reused buffers too, after a larger
     * input left other values in them. The unquantized forms are never paired.
     */
    @Test
    void theTransposedFormPutsEachTokensElementWherePanelsReadIt() {
        int cols = 160; // blocks of columns a one-group transposition splits into: 64, 64 and 32
        MatmulInput.Buffers buffers = new MatmulInput.Buffers(70 * cols);
        MatmulInput.of(activations(70 * cols, 5), 70, cols, buffers).transposed(MatmulInput.Form.Q8_0, 4);
        for (int lanes : new int[] {4, 8, 16}) {
            for (int tokens : new int[] {1, 5, 16, 23, 70}) {
                float[] x = activations(tokens * cols, tokens);
                for (MatmulInput input : List.of(MatmulInput.of(x, tokens, cols),
                        MatmulInput.of(x, tokens, cols, buffers))) {
                    float[] values = input.values(MatmulInput.Form.Q8_0);
                    float[] t = input.transposed(MatmulInput.Form.Q8_0, lanes);
                    int padded = MatmulInput.paddedTokens(tokens, lanes);
                    assertEquals(0, padded % lanes);
                    // one vector of tokens in a quantized form is paired: columns k and k + 1 side by side per token
                    boolean paired = padded == lanes;
                    assertEquals(paired, MatmulInput.paired(MatmulInput.Form.Q8_0, tokens, lanes));
                    for (int token = 0; token < padded; token++) {
                        int g0 = token / (4 * lanes) * 4 * lanes;
                        int tg = Math.min(4 * lanes, padded - g0);
                        for (int k = 0; k < cols; k++) {
                            float expected = token < tokens ? values[token * cols + k] : 0f;
                            int at = paired ? (k & ~1) * lanes + 2 * token + (k & 1) : g0 * cols + k * tg + token - g0;
                            assertEquals(expected, t[at], lanes + " lanes, " + tokens + " tokens: token " + token
                                    + " element " + k + (paired ? ", paired" : ""));
                        }
                    }
                }
            }
        }
        for (MatmulInput.Form form : MatmulInput.Form.values()) {
            boolean quantized = form == MatmulInput.Form.Q8_0 || form == MatmulInput.Form.Q8_K;
            assertEquals(quantized, MatmulInput.paired(form, 16, 16), form + ", one vector");
            assertFalse(MatmulInput.paired(form, 17, 16), form + ", two vectors");
        }
    }

    /**
     * A form and its transposed layout computed by {@code prepare} over token ranges on several
     * threads (ranges of 1, 5 and 7 tokens, so a range ends inside a group and one holds the
     * padding; for one group, ranges of column blocks) are the same values as the lazy computation;
     * prepare then has nothing left to do.
     */
    @Test
    @Timeout(30)
    void preparedFormsOnSeveralThreadsEqualTheLazyOnes() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (GgmlType weights : new GgmlType[] {GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.F16, GgmlType.F32}) {
                for (int[] tc : new int[][] {{1, 23}, {5, 23}, {7, 23}, {1, 13}, {3, 13}}) {
                    int chunk = tc[0];
                    int tokens = tc[1];   // 13: one group of 4 lanes, transposed by blocks of columns
                    int cols = 256;
                    float[] x = activations(tokens * cols, chunk);
                    MatmulInput lazy = MatmulInput.of(x, tokens, cols);
                    MatmulInput prepared = MatmulInput.of(x, tokens, cols, new MatmulInput.Buffers(tokens * cols));
                    MatmulInput.Ranges ranges = (n, body) -> {
                        List<Future<?>> parts = new ArrayList<>();
                        for (int from = 0; from < n; from += chunk) {
                            int f = from;
                            parts.add(pool.submit(() -> body.run(f, Math.min(n, f + chunk))));
                        }
                        for (Future<?> part : parts) {
                            try {
                                part.get();
                            } catch (Exception e) {
                                throw new AssertionError(e);
                            }
                        }
                    };
                    prepared.prepare(weights, 4, ranges);
                    MatmulInput.Form form = MatmulInput.Form.of(weights);
                    String what = weights + ", " + tokens + " tokens, ranges of " + chunk;
                    assertSameForm(lazy.values(form), prepared.values(form), tokens * cols, what);
                    int size = MatmulInput.paddedTokens(tokens, 4) * cols;
                    assertSameForm(lazy.transposed(form, 4), prepared.transposed(form, 4), size, what + ", transposed");
                    prepared.prepare(weights, 4, (n, body) -> {
                        throw new AssertionError("prepared twice: " + what);
                    });
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
