package io.nereid.engine.cpu.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ComputePoolTest {

    private final ComputePool pool = new ComputePool(new ComputePool.Config(4));

    @AfterEach
    void close() {
        pool.close();
    }

    @ParameterizedTest
    @CsvSource({"0, 1, 1", "0, 1000, 1", "-7, 993, 16", "5, 37, 8", "0, 100, 1000", "3, 3, 1", "0, 17, 17"})
    void everyIndexIsVisitedExactlyOnceInContiguousChunksOfAtLeastMinChunk(int start, int end, int minChunk) {
        AtomicIntegerArray visits = new AtomicIntegerArray(Math.max(0, end - start));
        List<int[]> ranges = new CopyOnWriteArrayList<>();
        pool.parallelFor(start, end, minChunk, (from, to) -> {
            ranges.add(new int[] {from, to});
            for (int i = from; i < to; i++) {
                visits.incrementAndGet(i - start);
            }
        });
        for (int i = 0; i < visits.length(); i++) {
            assertEquals(1, visits.get(i), "index " + (start + i));
        }
        for (int[] r : ranges) {
            assertTrue(r[1] - r[0] >= Math.min(minChunk, end - start), "chunk [" + r[0] + ", " + r[1] + ")");
        }
    }

    @Test
    void workRunsOnNamedDaemonKernelThreadsAndTheCaller() throws InterruptedException {
        // Four chunks, each waiting until four threads are inside: every worker and the caller.
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        CountDownLatch two = new CountDownLatch(4);
        AtomicInteger timedOut = new AtomicInteger();
        pool.parallelFor(0, 4, 1, (from, to) -> {
            threads.add(Thread.currentThread());
            two.countDown();
            try {
                if (!two.await(10, TimeUnit.SECONDS)) {
                    timedOut.incrementAndGet();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertEquals(0, timedOut.get(), "not every thread joined");
        assertEquals(4, threads.size());
        assertTrue(threads.contains(Thread.currentThread()), "the caller takes a chunk");
        for (Thread t : threads) {
            if (t != Thread.currentThread()) {
                assertTrue(t.getName().startsWith("nereid-kernel-"), t.getName());
                assertTrue(t.isDaemon(), t.getName() + " is a daemon");
            }
        }
    }

    @Test
    void aBodyExceptionReachesTheCallerAndThePoolStaysUsable() {
        IllegalStateException boom = new IllegalStateException("row 500");
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> pool.parallelFor(0, 100_000, 1, (from, to) -> {
                    if (from <= 500 && 500 < to) {
                        throw boom;
                    }
                }));
        assertSame(boom, thrown);
        // the pool is still usable afterwards
        AtomicInteger sum = new AtomicInteger();
        pool.parallelFor(0, 10, 1, (from, to) -> sum.addAndGet(to - from));
        assertEquals(10, sum.get());
    }

    @Test
    void errorsPropagateAsThemselves() {
        assertThrows(AssertionError.class, () -> pool.parallelFor(0, 64, 1, (from, to) -> {
            throw new AssertionError("chunk " + from);
        }));
    }

    @Test
    @Timeout(60) // a deadlock guard, not a speed assertion
    void nestedParallelForCompletesEvenWhenEveryWorkerIsBusy() {
        AtomicIntegerArray visits = new AtomicIntegerArray(64 * 64);
        pool.parallelFor(0, 64, 1, (rowFrom, rowTo) -> {
            for (int r = rowFrom; r < rowTo; r++) {
                int row = r;
                pool.parallelFor(0, 64, 1, (from, to) -> {
                    for (int c = from; c < to; c++) {
                        visits.incrementAndGet(row * 64 + c);
                    }
                });
            }
        });
        for (int i = 0; i < visits.length(); i++) {
            assertEquals(1, visits.get(i));
        }
    }

    @Test
    void aSingleThreadPoolRunsEverythingOnTheCaller() {
        try (ComputePool single = new ComputePool(new ComputePool.Config(1))) {
            Set<Thread> threads = ConcurrentHashMap.newKeySet();
            single.parallelFor(0, 1000, 1, (from, to) -> threads.add(Thread.currentThread()));
            assertEquals(Set.of(Thread.currentThread()), threads);
        }
    }

    @Test
    void closedPoolRejectsWorkClearly() {
        pool.close();
        pool.close(); // idempotent
        var e = assertThrows(IllegalStateException.class, () -> pool.parallelFor(0, 10, 1, (from, to) -> { }));
        assertTrue(e.getMessage().contains("closed"));
    }

    @Test
    void configValidatesAndDefaultsToTheProcessorCount() {
        assertThrows(IllegalArgumentException.class, () -> new ComputePool.Config(0));
        assertEquals(Runtime.getRuntime().availableProcessors(), ComputePool.Config.defaults().threads());
        assertThrows(IllegalArgumentException.class, () -> pool.parallelFor(0, 10, 0, (from, to) -> { }));
    }
}
