package io.nereid.engine.cpu.kernel;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that run kernels: {@code parallelism - 1} daemon workers named
 * {@code nereid-kernel-N} plus whichever thread calls {@link #parallelFor}. Never the common
 * {@code ForkJoinPool}, so kernels neither starve nor are starved by unrelated
 * {@code parallelStream} or {@code CompletableFuture} work.
 *
 * <p>Built for per-token work, where a forward pass is a hundred parallel loops of a few
 * microseconds each: a worker that finishes a loop <em>spins</em> for {@value #SPIN_MICROS} µs
 * watching for the next one before it parks, so a loop that follows another starts without a
 * wake-up (a park/unpark round trip costs tens of microseconds, as much as the loop); a worker that
 * did park is unparked by the caller. Between steps the workers park, and an idle engine costs
 * nothing. A loop allocates nothing: the pool reuses one job record, guarded so that a worker late
 * for one loop cannot run part of the next.
 *
 * <p>Scheduling: a range is cut into contiguous chunks that the caller and the workers
 * <em>claim</em> from a shared counter, so a thread that is descheduled (another process on the
 * same cores) holds up only the chunk it claimed. The caller waits only for chunks some thread
 * has already claimed, and such a chunk is running, so a call always finishes even when no worker
 * comes: the caller then runs every chunk itself. One loop runs at a time: a call made while
 * another is running (from another thread, or nested inside a body) runs all its chunks on its
 * own thread, so nesting cannot deadlock.
 *
 * <p>Thread-safe. Lifecycle: create one per engine, {@link #close} it on shutdown, after which
 * {@code parallelFor} throws.
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

    /** How long a worker watches for the next loop before it parks. */
    static final int SPIN_MICROS = 100;

    private final int parallelism;
    private final Thread[] workers;
    private final boolean[] parked;          // written by each worker, read by callers; guarded by the Job's volatiles
    private final AtomicInteger running = new AtomicInteger(); // 1 while a loop owns the job record
    private final Job job = new Job();
    private volatile boolean closed;

    public ComputePool(Config config) {
        this.parallelism = config.threads();
        this.workers = new Thread[parallelism - 1];
        this.parked = new boolean[parallelism - 1];
        for (int i = 0; i < workers.length; i++) {
            int index = i;
            workers[i] = new Thread(() -> workLoop(index), "nereid-kernel-" + i);
            workers[i].setDaemon(true);
            workers[i].start();
        }
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
        if (chunks <= 1 || workers.length == 0 || !running.compareAndSet(0, 1)) {
            body.run(start, end);
            return;
        }
        try {
            job.open(start, n, chunks, body);
            VarHandle.fullFence();   // the job's publication before the reads of parked[] (see workLoop)
            for (int i = 0; i < workers.length; i++) {
                if (parked[i]) {
                    LockSupport.unpark(workers[i]);
                }
            }
            job.work();
            job.awaitChunks();
            job.rethrow();
        } finally {
            job.close();
            running.set(0);
        }
    }

    /** Stops the workers. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (Thread w : workers) {
            LockSupport.unpark(w);
        }
    }

    private void workLoop(int index) {
        long seen = 0;
        while (!closed) {
            long generation = job.generation;
            if (generation > seen) {
                seen = generation;
                job.join(generation);
                continue;
            }
            long spinUntil = System.nanoTime() + SPIN_MICROS * 1_000L;
            while (job.generation == seen && !closed && System.nanoTime() < spinUntil) {
                Thread.onSpinWait();
            }
            if (job.generation == seen && !closed) {
                parked[index] = true;
                // a caller that opened a job after this check sees parked[index] (both volatile
                // accesses below order it) and unparks; one that opened it before is seen here
                VarHandle.fullFence();
                if (job.generation == seen && !closed) {
                    LockSupport.park(this);
                }
                parked[index] = false;
            }
        }
    }

    /** The one loop in flight: its range, chunk counters, first failure, and the guard for late workers. */
    private static final class Job {
        volatile long generation;      // counts loops; a worker joins each new one at most once
        private volatile boolean open; // false while the caller fills or empties the record
        private final AtomicInteger inside = new AtomicInteger();  // workers inside work()
        private int start;
        private int n;
        private int chunks;
        private IntRangeBody body;
        private final AtomicInteger nextChunk = new AtomicInteger();
        private final AtomicInteger unfinished = new AtomicInteger();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        /** Called by the loop's caller, with no worker inside: fills the record, then publishes it. */
        void open(int start, int n, int chunks, IntRangeBody body) {
            this.start = start;
            this.n = n;
            this.chunks = chunks;
            this.body = body;
            nextChunk.set(0);
            unfinished.set(chunks);
            failure.set(null);
            open = true;                     // volatile write: publishes the fields above
            generation = generation + 1;     // only the caller that owns the record writes it
        }

        /**
         * Called by the caller once every chunk is done: closes the record to late workers and
         * waits for any still inside (they find no chunk left and leave at once).
         */
        void close() {
            open = false;
            while (inside.get() > 0) {
                Thread.onSpinWait();
            }
            body = null;
        }

        /** A worker's visit: enters only if the record is still the loop it saw. */
        void join(long seen) {
            inside.incrementAndGet();
            try {
                if (open && generation == seen) {  // else closed, or reopened for a later loop: not ours
                    work();
                }
            } finally {
                inside.decrementAndGet();
            }
        }

        /** Claims and runs chunks until none is left; run by the caller and by each worker. */
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
                    unfinished.decrementAndGet();
                }
            }
        }

        /** Spins until every claimed chunk is done (they are running, so this is short), yielding now and then. */
        void awaitChunks() {
            for (int spins = 0; unfinished.get() > 0; spins++) {
                if ((spins & 1023) == 1023) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
            }
        }

        void rethrow() {
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
}
