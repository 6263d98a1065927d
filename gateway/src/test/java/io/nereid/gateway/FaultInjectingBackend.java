package io.nereid.gateway;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.ForwardingBackend;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A backend decorator for the "kill the engine" tests: a test can hold the next forward pass on the
 * engine thread, make the forward pass after it fail once, or break the backend for good (every
 * forward pass throws, as a lost device would). Forward passes run on the engine thread; the
 * controls are called from the test thread.
 */
final class FaultInjectingBackend extends ForwardingBackend {

    private final AtomicInteger forwards = new AtomicInteger();
    private volatile int failAt = -1;
    private volatile boolean broken;
    private volatile CountDownLatch release;   // the latch the next forward pass waits on, until it takes it
    private volatile CountDownLatch held;      // the latch the held forward pass waits on
    private volatile CountDownLatch holding = new CountDownLatch(1);

    FaultInjectingBackend(Backend real) {
        super(real);
    }

    /** The next forward pass waits until {@link #release()}; returns at once. */
    void holdNext() {
        holding = new CountDownLatch(1);
        held = new CountDownLatch(1);
        release = held;
    }

    /** Waits until a forward pass is being held. */
    void awaitHeld() throws InterruptedException {
        if (!holding.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("no forward pass was held within 30 s");
        }
    }

    /** The forward pass after the one being held fails (once). */
    void failTheOneAfterTheHeld() {
        failAt = forwards.get();   // the held one took index forwards - 1
    }

    void release() {
        held.countDown();
    }

    /** From now on every forward pass throws. */
    void breakForGood() {
        broken = true;
    }

    @Override
    public StepOutput forward(Step step) {
        int index = forwards.getAndIncrement();
        CountDownLatch r = release;
        if (r != null) {
            release = null;
            holding.countDown();
            try {
                if (!r.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("held forward pass never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (broken || index == failAt) {
            throw new IllegalStateException("injected backend fault (forward pass " + index + ")");
        }
        return super.forward(step);
    }
}
