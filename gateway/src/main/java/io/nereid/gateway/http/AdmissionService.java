package io.nereid.gateway.http;

import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.EngineHealth;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.TokenSink;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.WorkerExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;

/**
 * Admission, protocol-neutral: everything between a parsed request and its first response byte,
 * so a front end (OpenAI today; KServe v2 and gRPC next) only parses and formats.
 *
 * <pre>
 *   event loop        {@link #checkAvailable}: draining or a stopped engine is a 503 at once
 *   worker pool       {@link Plan#prepare}: render templates, tokenize (may block)
 *   connection's context, in order:
 *                     {@link Plan#request} for every prompt, then Engine.validate for every prompt
 *                     {@link Plan#respond}: the response object, sized by what was just checked
 *                     Engine.submit for every prompt; if one is refused, the admitted are cancelled
 *                     and the refusal is the answer ({@link Responder#abandon})
 *                     {@link Responder#start}: only now may the response write
 * </pre>
 *
 * Every failure is an {@link ApiException} (status, code, field, message, retry hint), which each
 * front end writes in its own envelope. Thread-safe; stateless but for the server it serves.
 */
final class AdmissionService {

    /** How one front-end request is admitted, with {@code P} its per-prompt preparation. */
    interface Plan<P> {
        /** Worker pool (may block): one entry per prompt, its template rendered and tokenized. */
        List<P> prepare();

        /** Context: prompt {@code k}'s engine request; an {@link ApiException} is the answer (e.g. context length). */
        GenerationRequest request(int k, P prepared);

        /** Prompt {@code k}'s refusal by the engine (validation, a full queue, shutdown), as the front end names it. */
        ApiException refused(int k, RuntimeException e);

        /** Context, once every request passed the engine's checks: the response that will receive their output. */
        Responder respond(List<P> prepared);
    }

    /** The response of an admitted request. Context only. */
    interface Responder {
        /** Prompt {@code k}'s sink (called before {@link #start}, from the engine thread after). */
        TokenSink sink(int k);

        /** A later prompt was refused: cancel the admitted ones, write nothing. */
        void abandon(List<RequestHandle> admitted);

        /** Every prompt is admitted: write the response's head and stream what arrives. */
        void start(List<RequestHandle> admitted);

        /** The responder made of these three. */
        static Responder of(java.util.function.IntFunction<TokenSink> sink,
                java.util.function.Consumer<List<RequestHandle>> abandon,
                java.util.function.Consumer<List<RequestHandle>> start) {
            return new Responder() {
                @Override
                public TokenSink sink(int k) {
                    return sink.apply(k);
                }

                @Override
                public void abandon(List<RequestHandle> admitted) {
                    abandon.accept(admitted);
                }

                @Override
                public void start(List<RequestHandle> admitted) {
                    start.accept(admitted);
                }
            };
        }
    }

    private final ModelService model;
    private final WorkerExecutor prep;
    private final ServingMetrics metrics;
    private final BooleanSupplier draining;
    private final BooleanSupplier unloading;
    private final java.util.concurrent.atomic.AtomicInteger admitting;

    /**
     * @param draining  whether the server is shutting down
     * @param unloading whether this model is being unloaded
     * @param admitting requests between their last check and their response's start: counted before the
     *                  check, so an unload that sees it at 0 after setting {@code unloading} knows no
     *                  request can still reach the engine
     */
    AdmissionService(ModelService model, WorkerExecutor prep, ServingMetrics metrics, BooleanSupplier draining,
            BooleanSupplier unloading, java.util.concurrent.atomic.AtomicInteger admitting) {
        this.model = model;
        this.prep = prep;
        this.metrics = metrics;
        this.draining = draining;
        this.unloading = unloading;
        this.admitting = admitting;
    }


    /** @throws ApiException 503 while the server drains, the model is being unloaded, or after the engine stopped */
    void checkAvailable() {
        checkServer(draining);
        if (unloading.getAsBoolean()) {
            throw new ApiException(503, "service_unavailable", "model", "model_unloading", "the model '" + model.name()
                    + "' is being unloaded", 0);
        }
        EngineHealth h = model.engine().health();
        if (h.failed()) {
            throw engineDown(h);
        }
    }

    /** @throws ApiException 503 while the server drains */
    static void checkServer(BooleanSupplier draining) {
        if (draining.getAsBoolean()) {
            throw new ApiException(503, "service_unavailable", null, "draining", "the server is shutting down", 5);
        }
    }

    /** The 503 for a request while the engine thread is not running. */
    static ApiException engineDown(EngineHealth h) {
        return h.failed()
                ? new ApiException(503, "service_unavailable", null, "engine_failed",
                        "the engine stopped after a failure (" + h.failure() + "); the server must be restarted", 0)
                : new ApiException(503, "service_unavailable", null, "draining", "the engine has stopped", 0);
    }

    /**
     * Runs the plan: prepare on the worker pool, then check and submit on {@code context}. The
     * future completes with the admitted handles once the responder started, or fails with the
     * {@link ApiException} to answer (nothing was written then).
     */
    <P> Future<List<RequestHandle>> admit(Context context, Plan<P> plan) {
        Promise<List<RequestHandle>> admitted = Promise.promise();
        prep.executeBlocking(plan::prepare, false).onComplete(ar -> {
            if (ar.failed()) {
                admitted.fail(GatewayServer.mapFailure(ar.cause()));
                return;
            }
            context.runOnContext(v -> {
                admitting.incrementAndGet();   // before the check: an unload waits for this to drop
                try {
                    checkAvailable();   // again: the model may have begun unloading while this was prepared
                    admitted.complete(submit(plan, ar.result()));
                } catch (ApiException e) {
                    admitted.fail(e);
                } catch (RuntimeException e) {
                    admitted.fail(GatewayServer.mapFailure(e));
                } finally {
                    admitting.decrementAndGet();   // the responder's start counted it as in flight, if it got there
                }
            });
        });
        return admitted.future();
    }

    private <P> List<RequestHandle> submit(Plan<P> plan, List<P> prepared) {
        // Every prompt's engine request is built and checked before anything is sized by the request (n, prompts).
        List<GenerationRequest> requests = new ArrayList<>();
        for (int k = 0; k < prepared.size(); k++) {
            try {
                GenerationRequest g = plan.request(k, prepared.get(k));
                model.engine().validate(g);
                requests.add(g);
            } catch (ApiException e) {
                throw e;
            } catch (RuntimeException e) {
                throw plan.refused(k, e);
            }
        }
        Responder responder = plan.respond(prepared);
        List<RequestHandle> handles = new ArrayList<>();
        for (int k = 0; k < requests.size(); k++) {
            try {
                handles.add(model.engine().submit(requests.get(k), responder.sink(k)));
            } catch (RuntimeException e) {
                responder.abandon(handles);
                if (e instanceof AdmissionException a) {
                    metrics.admissionRejected(a.reason().name().toLowerCase(Locale.ROOT));
                }
                throw plan.refused(k, e);
            }
        }
        responder.start(handles);
        return handles;
    }
}
