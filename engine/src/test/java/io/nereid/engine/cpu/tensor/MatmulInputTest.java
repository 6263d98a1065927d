package io.nereid.engine.cpu.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link MatmulInput}'s Q8_0 form whichever way it is computed: by several threads at once (its
 * chunks shared between them) or into reused {@link MatmulInput.Buffers}, always the same as one
 * thread quantizing into arrays of its own.
 */
class MatmulInputTest {

    private static final int COLS = 2048;
    private static final int TOKENS = 9; // 576 blocks: three chunks, the last one partial

    private static float[] activations(int n, long seed) {
        return TestRows.gaussian(new Random(seed), n, 1f);
    }

    /** {@code got}'s first {@code n} elements (and scales of those) equal {@code expected}'s. */
    private static void assertSameForm(MatmulInput.Q8 expected, MatmulInput.Q8 got, int n, String what) {
        assertArrayEquals(expected.quants(), Arrays.copyOf(got.quants(), n), what + " quants");
        assertArrayEquals(expected.scales(), Arrays.copyOf(got.scales(), n / Q8_0Format.BLOCK), what + " scales");
        assertArrayEquals(expected.values(), Arrays.copyOf(got.values(), n), what + " values");
    }

    @Test
    void reusedBuffersHoldTheSameFormAsArraysOfItsOwn() {
        MatmulInput.Buffers buffers = new MatmulInput.Buffers(2 * TOKENS * COLS);
        float[] larger = activations(2 * TOKENS * COLS, 1);
        MatmulInput.of(larger, 2 * TOKENS, COLS, buffers).q8(); // leaves its form beyond the next input's
        float[] x = activations(TOKENS * COLS, 2);
        MatmulInput.Q8 expected = MatmulInput.of(x, TOKENS, COLS).q8();
        assertSameForm(expected, MatmulInput.of(x, TOKENS, COLS, buffers).q8(), TOKENS * COLS, "reused buffers");
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
                MatmulInput.Q8 expected = MatmulInput.of(x, TOKENS, COLS).q8();
                MatmulInput shared = MatmulInput.of(x, TOKENS, COLS);
                CountDownLatch start = new CountDownLatch(1);
                List<Future<MatmulInput.Q8>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        return shared.q8();
                    }));
                }
                start.countDown();
                for (Future<MatmulInput.Q8> result : results) {
                    assertSameForm(expected, result.get(10, TimeUnit.SECONDS), TOKENS * COLS, "round " + round);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
