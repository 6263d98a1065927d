package io.nereid.engine.cpu.tensor;

import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Splits one {@link WeightMatrix#matmul} across a compute pool: the row range is cut into at most
 * {@code parallelism} contiguous chunks, each a task on {@code pool}, and the caller waits for all.
 * Rows cost the same, so equal chunks balance; a product too small to pay for the hand-off (under
 * {@link #MIN_WORK_PER_TASK} multiply-adds per task) gets fewer chunks, down to one run inline.
 *
 * <p>The pool must be dedicated to compute (a {@link ForkJoinPool} or fixed pool sized to the
 * cores), never the common pool, which belongs to unrelated library code. Call {@link #apply}
 * from a thread outside that pool: a task blocked waiting for its own pool can starve it.
 *
 * <p>Thread-safety: immutable; concurrent {@code apply} calls share only the pool. An interrupt
 * does not abandon running tasks (they would go on writing {@code out}): {@code apply} still
 * waits for them and returns with the interrupt flag set.
 */
public final class Matmul {

    /** Multiply-adds below which another task costs more in hand-off than it saves (~10 µs of work). */
    public static final long MIN_WORK_PER_TASK = 1L << 15;

    private final Executor pool;
    private final int parallelism;

    /**
     * @param pool the dedicated compute pool
     * @param parallelism at most this many tasks per product: the pool's thread count
     * @throws IllegalArgumentException for the common pool or {@code parallelism < 1}
     */
    public Matmul(Executor pool, int parallelism) {
        this.pool = Objects.requireNonNull(pool, "pool");
        if (pool == ForkJoinPool.commonPool()) {
            throw new IllegalArgumentException("matmul needs a dedicated compute pool, not the common pool");
        }
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism " + parallelism + " < 1");
        }
        this.parallelism = parallelism;
    }

    public int parallelism() {
        return parallelism;
    }

    /**
     * {@code w.matmul(x, tokens, out)} computed on the pool; returns when every row is written.
     *
     * @throws RuntimeException the first failure of a task (others suppressed), after all finished
     */
    public void apply(WeightMatrix w, float[] x, int tokens, float[] out) {
        // Validate here, so that a bad argument fails in the caller and not in every task.
        w.matmul(x, tokens, out, 0, 0);
        int rows = w.rows();
        if (tokens == 0) {
            return;
        }
        long work = (long) rows * w.cols() * tokens;
        int chunks = (int) Math.max(1, Math.min(Math.min(parallelism, rows), work / MIN_WORK_PER_TASK));
        if (chunks == 1) {
            w.matmul(x, tokens, out, 0, rows);
            return;
        }
        CountDownLatch done = new CountDownLatch(chunks);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int c = 0; c < chunks; c++) {
            int start = (int) ((long) rows * c / chunks);
            int end = (int) ((long) rows * (c + 1) / chunks);
            Runnable task = () -> {
                try {
                    if (failure.get() == null) {
                        w.matmul(x, tokens, out, start, end);
                    }
                } catch (Throwable t) {
                    record(failure, t);
                } finally {
                    done.countDown();
                }
            };
            try {
                pool.execute(task);
            } catch (RejectedExecutionException e) {
                record(failure, e);
                done.countDown();
            }
        }
        awaitUninterruptibly(done);
        Throwable t = failure.get();
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
    }

    private static void record(AtomicReference<Throwable> failure, Throwable t) {
        if (!failure.compareAndSet(null, t)) {
            Throwable first = failure.get();
            synchronized (first) {
                first.addSuppressed(t);
            }
        }
    }

    private static void awaitUninterruptibly(CountDownLatch done) {
        boolean interrupted = false;
        while (true) {
            try {
                done.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
