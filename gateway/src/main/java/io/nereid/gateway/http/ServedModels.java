package io.nereid.gateway.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * The models a server serves and the state of every model its {@link ModelRepository} holds, as
 * Triton's model control keeps them:
 *
 * <pre>
 *   UNAVAILABLE --load--> LOADING --ok--> READY --unload--> UNLOADING --drained--> UNAVAILABLE ("unloaded")
 *                            \--fails--> UNAVAILABLE (the reason)
 * </pre>
 *
 * Loads and unloads run one at a time on the model-control thread, in the order asked, so a load
 * asked after an unload sees the memory that unload frees. An unload answers once the model stops
 * admitting (new requests get 503 {@code model_unloading}); its in-flight requests then get up to
 * {@link ModelRepository#drainTimeout()} to finish before they are cancelled and the model is
 * closed. Thread-safe: lookups from event loops, control from anywhere.
 */
final class ServedModels implements AutoCloseable {

    static final System.Logger LOG = System.getLogger("io.nereid.gateway");

    enum State { READY, LOADING, UNLOADING, UNAVAILABLE }

    /** One model's line in the repository index ({@code reason} empty when there is none). */
    record Entry(String name, State state, String reason) {
    }

    private static final class Slot {
        State state = State.UNAVAILABLE;
        String reason = "";
        ServedModel served;   // READY and UNLOADING only
    }

    private final ModelRepository repository;
    private final Function<ModelService, ServedModel> serve;
    private final Map<String, Slot> slots = new LinkedHashMap<>();   // guarded by this
    private final ExecutorService control = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nereid-model-control");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param loaded models already loaded (served READY at once)
     * @param failed models whose startup load failed, with the reason (UNAVAILABLE)
     */
    ServedModels(ModelRepository repository, Function<ModelService, ServedModel> serve, List<ModelService> loaded,
            Map<String, String> failed) {
        this.repository = repository;
        this.serve = serve;
        for (ModelService m : loaded) {
            Slot s = slot(m.name());
            s.state = State.READY;
            s.served = serve.apply(m);
        }
        failed.forEach((name, reason) -> slot(name).reason = reason);
    }

    ModelRepository repository() {
        return repository;
    }

    private synchronized Slot slot(String name) {
        return slots.computeIfAbsent(name, n -> new Slot());
    }

    /** The model {@code name} while it is READY or UNLOADING (an unloading model answers 503), else null. */
    synchronized ServedModel find(String name) {
        Slot s = name == null ? null : slots.get(name);
        return s == null ? null : s.served;
    }

    /** Every model READY, in load order. */
    synchronized List<ServedModel> ready() {
        List<ServedModel> out = new ArrayList<>();
        for (Slot s : slots.values()) {
            if (s.state == State.READY) {
                out.add(s.served);
            }
        }
        return out;
    }

    /** Every model READY or UNLOADING: those with an engine (metrics, health, the server's drain). */
    synchronized List<ServedModel> active() {
        List<ServedModel> out = new ArrayList<>();
        for (Slot s : slots.values()) {
            if (s.served != null) {
                out.add(s.served);
            }
        }
        return out;
    }

    /**
     * Every model of the repository (and any served besides), with its state; only READY ones when
     * {@code readyOnly}. Reads the repository folder: call it off the event loops.
     */
    List<Entry> index(boolean readyOnly) {
        List<String> listed = repository.names();   // may read a folder: not under the lock every lookup takes
        synchronized (this) {
            return index(listed, readyOnly);
        }
    }

    private List<Entry> index(List<String> listed, boolean readyOnly) {
        Set<String> names = new LinkedHashSet<>(listed);
        names.addAll(slots.keySet());
        List<Entry> out = new ArrayList<>();
        for (String n : names) {
            Slot s = slots.get(n);
            State state = s == null ? State.UNAVAILABLE : s.state;
            if (!readyOnly || state == State.READY) {
                out.add(new Entry(n, state, s == null ? "" : s.reason));
            }
        }
        return out;
    }

    private void checkControl() {
        if (!repository.explicitControl()) {
            throw new ApiException(400, "invalid_request_error", null, "model_control_disabled",
                    "model control is disabled: models are loaded at startup; start the server with --model-repository"
                            + " DIR --model-control-mode explicit to load and unload them", 0);
        }
    }

    /**
     * Loads {@code name}: completes once it is READY (at once when it already is), or fails with the
     * {@link ApiException} naming why (control disabled, not in the repository, cannot be loaded).
     */
    CompletableFuture<Void> load(String name) {
        try {
            checkControl();
        } catch (ApiException e) {
            return CompletableFuture.failedFuture(e);
        }
        return CompletableFuture.runAsync(() -> {
            if (!repository.names().contains(name)) {   // reads the folder: here, not on the caller's event loop
                throw new ApiException(404, "not_found", "model", "model_not_found",
                        "the model repository has no model '" + name + "'", 0);
            }
            Slot s = slot(name);
            synchronized (this) {
                // READY: nothing to do. UNLOADING: an unload asked after this load is draining the model,
                // which this load found loaded when it was asked.
                if (s.state == State.READY || s.state == State.UNLOADING) {
                    return;
                }
                s.state = State.LOADING;
                s.reason = "";
            }
            ModelService m;
            try {
                m = repository.load(name);
            } catch (RuntimeException | Error e) {
                ApiException a = e instanceof ApiException x ? x : new ApiException(400, "invalid_request_error", null,
                        "model_load_failed", "model '" + name + "' did not load: " + e.getMessage(), 0);
                synchronized (this) {
                    s.state = State.UNAVAILABLE;
                    s.reason = a.getMessage();
                }
                LOG.log(System.Logger.Level.WARNING, "model ''{0}'' did not load: {1}", name, a.getMessage());
                throw a;
            }
            ServedModel served;
            try {
                served = serve.apply(m);
            } catch (RuntimeException | Error e) {
                m.close();
                synchronized (this) {
                    s.state = State.UNAVAILABLE;
                    s.reason = "model '" + name + "' did not start: " + e;
                }
                throw e;
            }
            synchronized (this) {
                s.served = served;
                s.state = State.READY;
            }
            LOG.log(System.Logger.Level.INFO, "model ''{0}'' loaded", name);
        }, control);
    }

    /**
     * Starts unloading {@code name}: it stops admitting at once (the future completes then); its
     * in-flight requests finish (cancelled after the drain timeout) and it is closed on the
     * model-control thread.
     */
    CompletableFuture<Void> unload(String name) {
        Slot s;
        ServedModel served;
        try {
            checkControl();
            synchronized (this) {
                s = slots.get(name);
                if (s == null || s.state != State.READY) {
                    if (!repository.names().contains(name) && s == null) {
                        throw new ApiException(404, "not_found", "model", "model_not_found",
                                "the model repository has no model '" + name + "'", 0);
                    }
                    throw new ApiException(400, "invalid_request_error", "model", "model_not_loaded", "model '" + name
                            + "' is not loaded (it is " + (s == null ? State.UNAVAILABLE : s.state) + ")", 0);
                }
                s.state = State.UNLOADING;
                s.reason = "";
                served = s.served;
                served.unloading = true;
            }
        } catch (ApiException e) {
            return CompletableFuture.failedFuture(e);
        }
        control.execute(() -> {
            String reason = "unloaded";
            try {
                drainAndClose(served, why -> {
                    synchronized (this) {
                        s.reason = why;
                    }
                });
            } catch (RuntimeException | Error e) {
                reason = "unloaded; closing it failed: " + e;
                LOG.log(System.Logger.Level.WARNING, "model ''{0}'': {1}", name, reason);
            } finally {
                synchronized (this) {
                    if (s.served == served) {
                        s.served = null;
                        s.state = State.UNAVAILABLE;
                        s.reason = reason;
                    }
                }
            }
            LOG.log(System.Logger.Level.INFO, "model ''{0}'' unloaded", name);
        });
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Takes out a model whose engine stopped after a failure: UNAVAILABLE with the reason at once (its
     * in-flight requests already got their errors), closed on the model-control thread; in explicit
     * control it can be loaded again.
     */
    void failed(ServedModel served, String failure) {
        Slot s;
        synchronized (this) {
            s = slots.get(served.name());
            if (s == null || s.served != served) {
                return;   // already taken out
            }
            s.served = null;
            s.state = State.UNAVAILABLE;
            s.reason = "the engine stopped after a failure: " + failure;
        }
        served.unloading = true;
        LOG.log(System.Logger.Level.ERROR, "model ''{0}'': the engine stopped after a failure ({1}); taken out, the"
                + " other models serve on", served.name(), failure);
        control.execute(() -> {
            try {
                served.model.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing model ''{0}'': {1}", served.name(), e.toString());
            }
        });
    }

    /** Lets the model's in-flight requests finish within the drain timeout, cancels the rest, closes it. */
    private void drainAndClose(ServedModel served, java.util.function.Consumer<String> reason) {
        long deadline = System.nanoTime() + repository.drainTimeout().toNanos();
        try {
            while (served.busy() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            int left = served.busy();
            if (left > 0) {
                LOG.log(System.Logger.Level.WARNING, "model ''{0}'': cancelling {1} requests still running after the"
                        + " drain timeout", served.name(), left);
                served.aborting = true;
                reason.accept("the drain timeout passed; cancelling " + left + " requests");
            }
            served.model.close();
            long after = System.nanoTime() + 5_000_000_000L;   // the cancelled streams write their last events
            while (left > 0 && served.busy() > 0 && System.nanoTime() < after) {
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            served.model.close();
        }
    }

    /** Closes every model still loaded (at shutdown, after the server drained). */
    void closeModels() {
        for (ServedModel s : active()) {
            try {
                s.model.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing model ''{0}'': {1}", s.name(), e.toString());
            }
        }
    }

    @Override
    public void close() {
        control.shutdownNow();
    }
}
