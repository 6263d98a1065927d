package io.nereid.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The console progress bar of a run, redrawn in place on stderr about four times a second by its
 * own virtual thread (so it moves during long requests too):
 * <pre>
 *   [bench] concurrency 4 [#########-----------] 45/100 requests, 0 failed, 12.3 s
 * </pre>
 * A {@code --duration} run fills the bar with time instead of requests. On a terminal the line is
 * redrawn in place; in a log (stderr is not a terminal) a plain line is printed every
 * {@value #LOG_TICK_MS} ms instead, with no carriage returns. Request threads call {@link #done}
 * concurrently; {@link #close} prints the final line once.
 */
final class ProgressLine implements AutoCloseable {
    static final int WIDTH = 20;
    private static final long TICK_MS = 250;
    static final long LOG_TICK_MS = 5000;

    private final PrintStream err;
    private final String label;
    private final int totalRequests;
    private final double durationS;
    private final long startNs = System.nanoTime();
    private final AtomicInteger finished = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final Thread ticker;
    private final boolean terminal;
    private volatile boolean closed;

    /** Draws nothing when {@code config.progress()} is off; redraws in place when the JVM has a terminal. */
    ProgressLine(BenchConfig config, String label, PrintStream err) {
        this(config, label, err, System.console() != null && System.console().isTerminal());
    }

    /** As above, {@code terminal} saying whether {@code err} is a terminal (false: plain lines, as in a log). */
    ProgressLine(BenchConfig config, String label, PrintStream err, boolean terminal) {
        this.terminal = terminal;
        this.err = err;
        this.label = label;
        this.totalRequests = config.numRequests();
        this.durationS = config.durationS();
        this.ticker = config.progress() ? Thread.ofVirtual().name("bench-progress").start(this::tick) : null;
    }

    /** A request ended ({@code ok}: successfully). Any thread. */
    void done(boolean ok) {
        finished.incrementAndGet();
        if (!ok) {
            failed.incrementAndGet();
        }
    }

    private void tick() {
        try {
            if (!terminal) {
                while (!closed) {
                    Thread.sleep(LOG_TICK_MS);
                    if (!closed) {
                        draw("");
                        synchronized (err) {
                            err.println();
                        }
                    }
                }
                return;
            }
            while (!closed) {
                draw("\r");
                Thread.sleep(TICK_MS);
            }
        } catch (InterruptedException e) {
            // closed
        }
    }

    private void draw(String prefix) {
        String line = render(label, finished.get(), failed.get(), totalRequests, durationS,
                (System.nanoTime() - startNs) / 1e9);
        synchronized (err) {
            err.print(prefix + line);
            err.flush();
        }
    }

    /** The line for these counts; pure. {@code durationS > 0}: a timed run, the bar is elapsed time. */
    static String render(String label, int finished, int failed, int totalRequests, double durationS, double elapsedS) {
        double fraction = durationS > 0 ? elapsedS / durationS : (double) finished / totalRequests;
        int filled = (int) Math.round(Math.max(0, Math.min(1, fraction)) * WIDTH);
        String target = durationS > 0 ? String.format(Locale.ROOT, "%d requests", finished)
                : String.format(Locale.ROOT, "%d/%d requests", finished, totalRequests);
        return String.format(Locale.ROOT, "[bench] %s[%s%s] %s, %d failed, %.1f s%s", label.isEmpty() ? "" : label + " ",
                "#".repeat(filled), "-".repeat(WIDTH - filled), target, failed, elapsedS,
                durationS > 0 ? String.format(Locale.ROOT, " of %.0f", durationS) : "");
    }

    @Override
    public void close() throws InterruptedException {
        if (ticker == null || closed) {
            return;
        }
        closed = true;
        ticker.interrupt();
        ticker.join();
        draw(terminal ? "\r" : "");
        synchronized (err) {
            err.println();
        }
    }
}
