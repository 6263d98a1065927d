package io.nereid.gateway.http;

import io.nereid.engine.api.EngineHealth;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * One loaded model and what the front ends keep per model: its metrics, readiness, admission, the
 * OpenAI and KServe handlers bound to it and its in-flight count (an unload waits for it). Made by
 * the server when a model is loaded; dropped once it is unloaded. Thread-safe.
 */
final class ServedModel {

    final ModelService model;
    final ServingMetrics metrics;
    final Readiness readiness;
    final AdmissionService admission;
    final OpenAiRoutes openAi;
    final KServeRoutes kserve;
    /** Requests admitted and not yet answered, over every protocol. */
    final AtomicInteger inflight = new AtomicInteger();
    /** Requests between their last availability check and their response's start (see {@link AdmissionService}). */
    final AtomicInteger admitting = new AtomicInteger();
    private final BooleanSupplier serverDraining;
    /** Set when an unload starts: new requests get 503, in-flight ones finish. */
    volatile boolean unloading;
    /** Set when an unload's drain timed out: requests cancelled from now on end with a shutdown error. */
    volatile boolean aborting;

    ServedModel(Vertx vertx, ModelService model, GatewayOptions options, WorkerExecutor prep, BooleanSupplier serverDraining,
            BooleanSupplier serverAborting) {
        this.model = model;
        this.serverDraining = serverDraining;
        this.metrics = new ServingMetrics(model.name());
        this.readiness = new Readiness(options.stallTimeout());
        this.admission = new AdmissionService(model, prep, metrics, serverDraining, () -> unloading, admitting);
        this.openAi = new OpenAiRoutes(vertx, model, options, metrics, prep, admission, inflight,
                () -> serverAborting.getAsBoolean() ? "the server shut down before the request finished"
                        : aborting ? "the model '" + model.name() + "' was unloaded before the request finished" : null);
        this.kserve = new KServeRoutes(vertx, model, options, metrics, admission, inflight, this::ready);
    }

    String name() {
        return model.name();
    }

    /** What an unload waits for: requests being admitted and requests answering. */
    int busy() {
        return admitting.get() + inflight.get();
    }

    /** Ready for requests: loaded, not being unloaded, the server not draining, its engine alive and making progress. */
    boolean ready() {
        return !unloading && !serverDraining.getAsBoolean() && model.engine().health().alive()
                && readiness.observe(model.engine().stats(), System.nanoTime());
    }

    EngineHealth health() {
        return model.engine().health();
    }
}
