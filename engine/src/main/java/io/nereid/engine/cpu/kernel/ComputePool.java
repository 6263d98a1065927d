package io.nereid.engine.cpu.kernel;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that run kernels: {@code parallelism - 1} daemon workers named
 * {@code nereid-kernel-N} plus whichever thread calls {@link #parallelFor}. Never the common
 * {@code ForkJoinPool}, so kernels neither starve nor are starved by unrelated
 * {@code parallelStream} or {@code CompletableFuture} work.
 *
 * <p>Scheduling: a range is cut into contiguous chunks that the caller and the helpers it wakes
 * <em>claim</em> from a shared counter. The caller waits only for chunks some thread has already
 * claimed, and such a chunk is running, so a call always finishes even when every worker is busy:
 * the caller then simply runs all chunks itself. That is also why nested use (a body that calls
 * {@code parallelFor}) cannot deadlock: each wait is for work deeper in the same call tree.
 *
 * <p>Thread-safe; any number of threads may call {@link #parallelFor} at once. Lifecycle: create
 * one per engine, {@link #close} it on shutdown, after which {@code parallelFor} throws.
 */
public final class ComputePool implements AutoCloseable {

    /**
     * @param threads how many threads run one {@code parallelFor}, the caller included; 1 runs
     *                everything on the caller
     */
    public record Config(int threads) {
        public Config {
            if (threads < 1) {
                throw new IllegalArgumentException("kernel pool: threads must be >= 1, got " + threads);
            }
        }

        /** One thread per available processor. */
        public static Config defaults() {
            return new Config(Runtime.getRuntime().availableProcessors());
        }
    }

    /** The body of a parallel loop over {@code [from, to)}; called concurrently on disjoint ranges. */
    @FunctionalInterface
    public interface IntRangeBody {
        void run(int from, int to);
    }

    /**
     * Chunks per thread. More than one lets a thread that finishes early (or a caller whose
     * workers were descheduled by another process) take over the rest, at the price of a few
     * more counter increments.
     */
    private static final int CHUNKS_PER_THREAD = 4;

    private final int parallelism;
    private final ExecutorService workers; // null when parallelism == 1
    private volatile boolean closed;

    public ComputePool(Config config) {
        this.parallelism = config.threads();
        this.workers = parallelism == 1 ? null : new ThreadPoolExecutor(parallelism - 1, parallelism - 1,
                0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), new KernelThreads());
    }

    /** How many threads one call uses at most, the caller included. */
    public int parallelism() {
        return parallelism;
    }

    /**
     * Runs {@code body} over {@code [start, end)} in contiguous chunks of at least
     * {@code minChunk} indices (the last chunks may be the only ones, never smaller), on the pool
     * and on the calling thread, and returns when all are done. Every index is visited exactly
     * once; writes made by the bodies are visible to the caller on return.
     *
     * <p>If a body throws, chunks not yet started are skipped and the first exception is rethrown
     * here (unchecked exceptions and errors as themselves, later ones added as suppressed).
     *
     * @throws IllegalStateException after {@link #close}
     */
    public void parallelFor(int start, int end, int minChunk, IntRangeBody body) {
        if (minChunk < 1) {
            throw new IllegalArgumentException("parallelFor: minChunk must be >= 1, got " + minChunk);
        }
        if (closed) {
            throw new IllegalStateException("kernel pool is closed");
        }
        int n = end - start;
        if (n <= 0) {
            return;
        }
        int chunks = Math.min(n / minChunk, parallelism * CHUNKS_PER_THREAD);
        if (chunks <= 1 || workers == null) {
            body.run(start, end);
            return;
        }
        Job job = new Job(start, n, chunks, body, Thread.currentThread());
        int helpers = Math.min(parallelism - 1, chunks - 1);
        try {
            for (int i = 0; i < helpers; i++) {
                workers.execute(job::work);
            }
        } catch (RejectedExecutionException e) {
            // Closed while we were submitting: the chunks still all run, on this thread if need be.
        }
        job.work();
        job.await();
    }

    /** Stops the workers; queued helpers find no chunks left. Idempotent. */
    @Override
    public void close() {
        closed = true;
        if (workers != null) {
            workers.shutdown();
        }
    }

    /** One {@code parallelFor} call: the chunk counter, completion count and first failure. */
    private static final class Job {
        private final int start;
        private final int n;
        private final int chunks;
        private final IntRangeBody body;
        private final Thread caller;
        private final AtomicInteger nextChunk = new AtomicInteger();
        private final AtomicInteger unfinished;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Job(int start, int n, int chunks, IntRangeBody body, Thread caller) {
            this.start = start;
            this.n = n;
            this.chunks = chunks;
            this.body = body;
            this.caller = caller;
            this.unfinished = new AtomicInteger(chunks);
        }

        /** Claims and runs chunks until none is left; run by the caller and by each helper. */
        void work() {
            int c;
            while ((c = nextChunk.getAndIncrement()) < chunks) {
                try {
                    if (failure.get() == null) {
                        // Even split in long arithmetic: chunk sizes differ by at most one.
                        body.run(start + (int) ((long) n * c / chunks), start + (int) ((long) n * (c + 1) / chunks));
                    }
                } catch (Throwable t) {
                    Throwable first = failure.compareAndExchange(null, t);
                    if (first != null && first != t) {
                        first.addSuppressed(t);
                    }
                } finally {
                    if (unfinished.decrementAndGet() == 0) {
                        LockSupport.unpark(caller);
                    }
                }
            }
        }

        /** Parks until every claimed chunk is done, then rethrows the first failure. */
        void await() {
            boolean interrupted = false;
            while (unfinished.get() > 0) {
                LockSupport.park(this);
                // The kernels cannot be abandoned half-written, so an interrupt waits and is kept.
                interrupted |= Thread.interrupted();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            Throwable t = failure.get();
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            if (t != null) { // a sneaky checked exception
                throw new IllegalStateException("kernel body failed", t);
            }
        }
    }

    /** Daemon threads {@code nereid-kernel-0, -1, ...}: a forgotten pool never blocks JVM exit. */
    private static final class KernelThreads implements ThreadFactory {
        private final AtomicInteger sequence = new AtomicInteger();

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "nereid-kernel-" + sequence.getAndIncrement());
            t.setDaemon(true);
            return t;
        }
    }
}
