package io.nereid.gateway.http;

import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.EngineHealth;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.template.TemplateException;
import io.nereid.openapi.ErrorResponse;
import io.nereid.openapi.OpenApiDocument;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP server: what every route shares — request ids, CORS and API keys ({@link AccessControl}),
 * the body limit and request timeout, health ({@code GET /health}, {@code GET /health/ready}),
 * {@code GET /metrics}, {@code GET /openapi.json}, 404 / 405 and the failure handler — and the
 * front ends mounted on it: the OpenAI routes ({@link OpenAiRoutes}: completions, chat, models,
 * tokenize) and the KServe v2 / Triton routes ({@link KServeRoutes}: {@code /v2/...}), which admit through the protocol-neutral {@link AdmissionService} and stream through a
 * {@link StepEventPump}.
 * Lifecycle: {@link #start} binds; {@link #drain} stops admitting (503) and waits for in-flight
 * requests; {@link #close} closes the server and Vert.x (not the model). If the engine of the one
 * {@code --model} stops after a failure, {@code /health} and {@code /health/ready} answer 503 at once,
 * new requests get 503, and {@link #engineFailure()} completes so the process can drain and exit
 * non-zero; a model of a repository whose engine fails is taken out instead (UNAVAILABLE with the
 * reason, within a second) and the others serve on.
 *
 * <p>HTTP hardening: message framing is checked before routing ({@link HttpFraming}); a request
 * body that has not arrived within {@link GatewayOptions#requestTimeout()} gets a 408 and its
 * connection is closed; a failure that carries only a status keeps it (400, 404, 405, 413, 417,
 * ...), only real faults are a 500; a client gone mid-upload is logged at debug, not answered.
 */
public final class GatewayServer implements AutoCloseable {

    static final long BODY_LIMIT = 8L << 20;
    static final System.Logger LOG = System.getLogger("io.nereid.gateway");
    /** The routing-context key of the request's id (the client's valid {@code X-Request-Id}, or a generated one). */
    static final String REQUEST_ID = "nereid.requestId";
    static final int MAX_REQUEST_ID = 128;

    private final Vertx vertx;
    private final ServedModels models;
    private final WorkerExecutor prep;
    private final GatewayOptions options;
    private final ThreadCpuMetrics threadCpu = new ThreadCpuMetrics();
    private final KServeGrpc grpc;
    private final ResponsesRoutes responses;
    private final AccessControl access;
    private volatile boolean draining;
    private volatile boolean aborting;
    private final CompletableFuture<String> engineFailure = new CompletableFuture<>();
    private HttpServer server;
    private boolean grpcStarted;
    private Router router;

    private GatewayServer(ModelRepository repository, List<ModelService> loaded, Map<String, String> failed,
            GatewayOptions options, int prepThreads) {
        this.vertx = Vertx.vertx();
        this.options = options;
        this.prep = vertx.createSharedWorkerExecutor("nereid-prep", prepThreads);
        this.models = new ServedModels(repository, m -> new ServedModel(vertx, m, options, prep, () -> draining,
                () -> aborting), loaded, failed);
        this.access = new AccessControl(options, GatewayServer::errorFor);
        try {
            this.responses = new ResponsesRoutes(models, prep, options, () -> draining);
        } catch (RuntimeException e) {
            models.close();
            vertx.close();
            throw e;
        }
        this.grpc = new KServeGrpc(vertx, options, models, this::alive, this::isReady, access);
        // Sample the engines between probes too, so a loop that stops between two probes is noticed.
        vertx.setPeriodic(1000, id -> {
            for (ServedModel s : models.active()) {
                s.readiness.observe(s.model.engine().stats(), System.nanoTime());
                EngineHealth h = s.health();
                if (h.failed() && models.repository().isolatesFailures()) {
                    models.failed(s, h.failure());   // the others serve on
                } else if (h.failed() && engineFailure.complete(h.failure())) {
                    LOG.log(System.Logger.Level.ERROR, "the engine of model ''{0}'' stopped after a failure: {1}",
                            s.name(), h.failure());
                }
            }
        });
    }

    /** {@link #start(ModelService, GatewayOptions, String, int)} with {@link GatewayOptions#DEFAULTS}. */
    public static GatewayServer start(ModelService model, String host, int port) throws Exception {
        return start(model, GatewayOptions.DEFAULTS, host, port);
    }

    /** Binds {@code host:port} (0: any free port) and returns the running server, without gRPC. */
    public static GatewayServer start(ModelService model, GatewayOptions options, String host, int port)
            throws Exception {
        return start(model, options, host, port, -1);
    }

    /**
     * Binds HTTP on {@code host:port} and the KServe v2 gRPC service on {@code host:grpcPort} (0:
     * any free port; -1: no gRPC) and returns the running server, serving {@code model}, which the
     * caller closes (after {@link #close}; {@link #closeModels} closes it too); no load or unload.
     */
    public static GatewayServer start(ModelService model, GatewayOptions options, String host, int port, int grpcPort)
            throws Exception {
        return start(ModelRepository.of(model, Duration.ofSeconds(30)), List.of(model), Map.of(), options, host, port,
                grpcPort);
    }

    /**
     * As {@link #start(ModelService, GatewayOptions, String, int, int)}, serving the models of
     * {@code repository}: {@code loaded} (already loaded, READY) and, in explicit control, whatever
     * clients load; {@code failed} names the models whose startup load failed, with the reason. The
     * server closes the models it unloads; {@link #closeModels} closes the rest.
     */
    public static GatewayServer start(ModelRepository repository, List<ModelService> loaded, Map<String, String> failed,
            GatewayOptions options, String host, int port, int grpcPort) throws Exception {
        GatewayServer g = new GatewayServer(repository, loaded, failed, options,
                Math.max(2, Runtime.getRuntime().availableProcessors() / 2));
        try {
            g.router = g.router();
            // HTTP/1.1 only (as vLLM's server): no h2c upgrade, whose handler takes over the pipeline after the
            // first request and would see the framing decoder replaced mid-request.
            HttpServerOptions http = new HttpServerOptions().setHttp2ClearTextEnabled(false);
            g.server = g.vertx.createHttpServer(http)
                    .connectionHandler(connection -> HttpFraming.install(connection, http,
                            options.requestTimeout().toMillis()))
                    .invalidRequestHandler(HttpFraming::answer)
                    .requestHandler(g.router).listen(port, host)
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            if (grpcPort >= 0) {
                g.grpc.start(host, grpcPort);
                g.grpcStarted = true;
            }
        } catch (Exception e) {
            g.close();
            throw e;
        }
        return g;
    }

    public int port() {
        return server.actualPort();
    }

    /** The gRPC port, or -1 when gRPC is off. */
    public int grpcPort() {
        return grpcStarted ? grpc.port() : -1;
    }

    /** Every registered route as {@code "METHOD /path"}, path parameters written {@code {name}} as in OpenAPI. */
    public List<String> routes() {
        List<String> out = new java.util.ArrayList<>();
        for (io.vertx.ext.web.Route route : router.getRoutes()) {
            if (route.getPath() != null && route.methods() != null) {
                for (io.vertx.core.http.HttpMethod m : route.methods()) {
                    out.add(m.name() + " " + route.getPath().replaceAll(":([A-Za-z0-9_]+)", "{$1}"));
                }
            }
        }
        return out;
    }

    /** Requests admitted and not yet answered, over every model and protocol. */
    public int inflight() {
        int n = 0;
        for (ServedModel s : models.active()) {
            n += s.inflight.get();
        }
        return n;
    }


    /**
     * Completes, with the reason, when the engine is seen to have stopped after a failure (checked
     * every second): the server then refuses everything with 503 and should be restarted.
     */
    public CompletableFuture<String> engineFailure() {
        return engineFailure;
    }

    private Router router() {
        Router r = Router.router(vertx);
        r.route().handler(ctx -> {
            String rid = requestId(ctx.request().getHeader("X-Request-Id"));
            ctx.put(REQUEST_ID, rid);
            ctx.response().putHeader("X-Request-Id", rid);
            bodyDeadline(ctx);
            ctx.next();
        });
        r.route().handler(access);
        r.get("/health").handler(this::live);
        r.get("/health/ready").handler(this::ready);
        io.vertx.core.buffer.Buffer openapi = io.vertx.core.buffer.Buffer.buffer(OpenApiDocument.bytes());
        r.get("/openapi.json").handler(ctx -> ctx.response().putHeader("Content-Type", "application/json").end(openapi));
        if (options.playground()) {
            playground(r);
        }
        r.get("/metrics").handler(ctx -> ctx.response().setStatusCode(200)
                .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8").end(metricsPage()));
        r.post().handler(BodyHandler.create().setBodyLimit(BODY_LIMIT));
        OpenAiRoutes.register(r, models, () -> draining);
        responses.register(r);
        KServeRoutes.register(r, models, this::alive, this::isReady);
        RouteTable routes = new RouteTable(r);
        r.route().last().handler(ctx -> {
            List<HttpMethod> allowed = routes.methods(ctx.request().path());
            if (allowed.isEmpty()) {
                errorFor(ctx, new ApiException(404, "invalid_request_error", null, "not_found",
                        "no route " + ctx.request().method() + " " + ctx.request().path(), 0));
            } else {
                ctx.response().putHeader("Allow", String.join(", ", allowed.stream().map(HttpMethod::name).toList()));
                errorFor(ctx, new ApiException(405, "invalid_request_error", null, "method_not_allowed",
                        ctx.request().path() + " takes " + String.join(" or ", allowed.stream().map(HttpMethod::name).toList())
                                + ", not " + ctx.request().method(), 0));
            }
        });
        r.route().failureHandler(this::failed);
        return r;
    }

    /**
     * The chat playground: a static page and its script, from the jar (no CDN, no fonts), under a
     * content security policy that allows scripts from this server only and requests to it only.
     */
    private static void playground(Router r) {
        io.vertx.core.buffer.Buffer page = resource("index.html");
        io.vertx.core.buffer.Buffer script = resource("app.js");
        String csp = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self';"
                + " base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
        r.get("/").handler(ctx -> ctx.response().putHeader("Content-Type", "text/html; charset=utf-8")
                .putHeader("Content-Security-Policy", csp).putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("Cache-Control", "no-cache").end(page));
        r.get("/playground/app.js").handler(ctx -> ctx.response().putHeader("Content-Type", "text/javascript; charset=utf-8")
                .putHeader("X-Content-Type-Options", "nosniff").putHeader("Cache-Control", "no-cache").end(script));
    }

    private static io.vertx.core.buffer.Buffer resource(String name) {
        try (java.io.InputStream in = GatewayServer.class.getResourceAsStream("/io/nereid/gateway/playground/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the playground's " + name + " is missing from the jar");
            }
            return io.vertx.core.buffer.Buffer.buffer(in.readAllBytes());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Every registered path (path parameters as one segment) and the methods it answers, for 405 and Allow. */
    private static final class RouteTable {
        private final List<java.util.regex.Pattern> paths = new ArrayList<>();
        private final List<HttpMethod> methods = new ArrayList<>();

        RouteTable(Router router) {
            for (io.vertx.ext.web.Route route : router.getRoutes()) {
                if (route.getPath() != null && route.methods() != null) {
                    String regex = java.util.Arrays.stream(route.getPath().split("/", -1))
                            .map(seg -> seg.startsWith(":") ? "[^/]+" : java.util.regex.Pattern.quote(seg))
                            .collect(java.util.stream.Collectors.joining("/"));
                    for (HttpMethod m : route.methods()) {
                        paths.add(java.util.regex.Pattern.compile(regex));
                        methods.add(m);
                    }
                }
            }
        }

        List<HttpMethod> methods(String path) {
            List<HttpMethod> out = new ArrayList<>();
            for (int i = 0; i < paths.size(); i++) {
                if (paths.get(i).matcher(path).matches() && !out.contains(methods.get(i))) {
                    out.add(methods.get(i));
                }
            }
            return out;
        }
    }

    /**
     * The router's failure handler. A failure that carries only a status (the body handler's 413,
     * 417 for an Expect it cannot meet, ...) keeps it; a client that went away mid-request gets no
     * answer and is not an error; anything else is mapped as a handler's failure would be.
     */
    private void failed(RoutingContext ctx) {
        Throwable t = ctx.failure();
        if (t instanceof HttpClosedException || ctx.response().closed()) {
            LOG.log(System.Logger.Level.DEBUG, "request {0}: the client closed the connection before the request was"
                    + " read", (Object) ctx.get(REQUEST_ID));
            return;
        }
        int status = ctx.statusCode();
        if (status >= 400 && status < 500 && !(t instanceof ApiException)) {
            errorFor(ctx, statusOnly(status, ctx.request(), t));
        } else {
            errorFor(ctx, mapFailure(t == null ? new IllegalStateException("status " + status) : t));
        }
    }

    /** The OpenAI envelope of a client error that came with a status and at most a cause, never a 500. */
    private static ApiException statusOnly(int status, HttpServerRequest req, Throwable cause) {
        String why = cause == null || cause.getMessage() == null ? "" : ": " + cause.getMessage();
        return switch (status) {
            case 413 -> new ApiException(413, "invalid_request_error", null, "request_too_large",
                    "the request body is over " + BODY_LIMIT + " bytes", 0);
            case 417 -> new ApiException(417, "invalid_request_error", null, "expectation_failed", "the Expect header '"
                    + req.getHeader("Expect") + "' cannot be met (only 100-continue is supported)", 0);
            case 404 -> new ApiException(404, "invalid_request_error", null, "not_found", "no route " + req.method() + " "
                    + req.path(), 0);
            case 405 -> new ApiException(405, "invalid_request_error", null, "method_not_allowed", req.method()
                    + " is not allowed on " + req.path(), 0);
            default -> new ApiException(status, "invalid_request_error", null, null, "HTTP " + status + " "
                    + io.netty.handler.codec.http.HttpResponseStatus.valueOf(status).reasonPhrase() + why, 0);
        };
    }

    /**
     * Arms the request-body timeout: a request whose body has not ended within
     * {@link GatewayOptions#requestTimeout()} gets a 408 and its connection is closed (a body that
     * never ends would hold the connection forever).
     */
    private void bodyDeadline(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        if (req.isEnded()) {
            return;
        }
        long timer = vertx.setTimer(options.requestTimeout().toMillis(), t -> {
            if (!req.isEnded() && !ctx.response().headWritten() && !ctx.response().closed()) {
                LOG.log(System.Logger.Level.INFO, "request {0}: body not received within {1} s; 408 and connection closed",
                        (Object) ctx.get(REQUEST_ID), options.requestTimeout().toSeconds());
                ctx.response().putHeader("Connection", "close");
                errorFor(ctx, new ApiException(408, "invalid_request_error", null, "request_timeout",
                        "the request body did not arrive within " + options.requestTimeout().toSeconds()
                                + " s (--request-timeout)", 0));
                req.connection().close();
            }
        });
        ctx.addEndHandler(v -> vertx.cancelTimer(timer));
    }

    /** Every loaded model's page, merged, and the CPU time by thread group. */
    private String metricsPage() {
        List<String> pages = new ArrayList<>();
        for (ServedModel s : models.active()) {
            pages.add(s.metrics.render(s.model.engine().stats(), s.health(), s.model.blockSize(), s.model.numKvBlocks()));
        }
        StringBuilder sb = new StringBuilder(ServingMetrics.merge(pages));
        threadCpu.write(sb);
        return sb.toString();
    }

    /** Whether every loaded model's engine thread runs. */
    private boolean alive() {
        return models.active().stream().allMatch(s -> s.health().alive());
    }

    /** Whether the server is ready: not draining and every READY model ready. */
    private boolean isReady() {
        return !draining && models.ready().stream().allMatch(ServedModel::ready);
    }

    /** Liveness: 200 while every model's engine thread runs; 503 once one stopped (after a failure, or at shutdown). */
    private void live(RoutingContext ctx) {
        for (ServedModel s : models.active()) {
            if (!s.health().alive()) {
                error(ctx.response(), AdmissionService.engineDown(s.health()));
                return;
            }
        }
        ctx.response().setStatusCode(200).end();
    }

    /**
     * 200 while not draining and every ready model's engine is idle or made progress within the
     * stall timeout, else 503.
     */
    private void ready(RoutingContext ctx) {
        long now = System.nanoTime();
        if (draining) {
            error(ctx.response(), new ApiException(503, "service_unavailable", null, "draining",
                    "the server is shutting down", 0));
            return;
        }
        for (ServedModel s : models.active()) {
            EngineHealth h = s.health();
            if (!h.alive() && !s.unloading) {
                error(ctx.response(), AdmissionService.engineDown(h));
                return;
            }
        }
        for (ServedModel s : models.ready()) {
            if (!s.readiness.observe(s.model.engine().stats(), now)) {
                error(ctx.response(), new ApiException(503, "service_unavailable", null, "engine_stalled", String.format(
                        "the engine of model '%s' has work pending and made no progress for %.1f s"
                                + " (--engine-stall-timeout %d s)", s.name(), s.readiness.secondsSinceProgress(now),
                        options.stallTimeout().toSeconds()), 0));
                return;
            }
        }
        json(ctx.response(), 200, java.util.Map.of("status", "ready"));
    }

    /** The client's id if it is 1..128 printable ASCII characters (not all blank), else a fresh random one. */
    static String requestId(String fromClient) {
        if (fromClient != null && !fromClient.isBlank() && fromClient.length() <= MAX_REQUEST_ID
                && fromClient.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
            return fromClient;
        }
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        return HexFormat.of().toHexDigits(rnd.nextLong()) + HexFormat.of().toHexDigits(rnd.nextLong());
    }

    static ApiException notFound(String name) {
        return new ApiException(404, "invalid_request_error", "model", "model_not_found",
                "the model '" + name + "' does not exist", 0);
    }

    /** The status a failure before the 200 maps to. */
    static ApiException mapFailure(Throwable t) {
        return switch (t) {
            case ApiException a -> a;
            case RequestValidationException v -> ApiException.invalid(v.param(), v.getMessage());
            case AdmissionException a when a.reason() == AdmissionException.Reason.SHUTTING_DOWN ->
                    new ApiException(503, "service_unavailable", null, "draining", a.getMessage(), seconds(a.retryAfter()));
            case AdmissionException a when a.reason() == AdmissionException.Reason.ENGINE_FAILED ->
                    new ApiException(503, "service_unavailable", null, "engine_failed", a.getMessage(), 0);
            case AdmissionException a -> new ApiException(429, "rate_limit_error", null, "rate_limit_exceeded", a.getMessage(),
                    seconds(a.retryAfter()));
            case TemplateException e -> ApiException.invalid("messages", "chat template: " + e.getMessage());
            default -> new ApiException(500, "server_error", null, null, "internal error: " + t, 0);
        };
    }

    private static long seconds(Duration d) {
        return Math.max(1, (d.toMillis() + 999) / 1000);
    }

    /** The failure in the envelope of the route's protocol: KServe's under {@code /v2}, else OpenAI's. */
    static void errorFor(RoutingContext ctx, ApiException e) {
        if (ctx.request().path().equals("/v2") || ctx.request().path().startsWith("/v2/")) {
            KServeRoutes.fail(ctx, e);
        } else {
            error(ctx.response(), e);
        }
    }

    static void error(HttpServerResponse resp, ApiException e) {
        if (resp.headWritten()) {
            resp.reset();
            return;
        }
        if (e.status() >= 500) {
            LOG.log(System.Logger.Level.WARNING, "request {0}: {1} {2}", resp.headers().get("X-Request-Id"), e.status(),
                    e.getMessage());
        }
        if (e.retryAfterSeconds() > 0) {
            resp.putHeader("Retry-After", Long.toString(e.retryAfterSeconds()));
        }
        json(resp, e.status(), ErrorResponse.of(e.getMessage(), e.type(), e.param(), e.code()));
    }

    static void json(HttpServerResponse resp, int status, Object body) {
        if (!resp.closed() && !resp.ended()) {
            resp.setStatusCode(status).putHeader("Content-Type", "application/json").end(SseChunks.json(body));
        }
    }

    /**
     * Stops admitting new completions (503) and waits up to {@code timeout} for in-flight ones to
     * finish; returns how many are still running. Any thread but an event loop.
     */
    public int drain(Duration timeout) throws InterruptedException {
        draining = true;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (inflight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        return inflight();
    }

    /** Closes every model the server loaded and has not unloaded (at shutdown, after {@link #drain}). */
    public void closeModels() {
        models.closeModels();
    }

    /**
     * After a drain timed out, before the engine is closed: requests cancelled from now on end with a
     * terminal error ({@code code: "shutdown"}: an in-band event and [DONE] on a stream, else a 503)
     * instead of finish_reason "abort".
     */
    public void abortInflight() {
        draining = true;
        aborting = true;
    }

    @Override
    public void close() {
        try {
            if (server != null) {
                server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            grpc.close();
            responses.close();
            models.close();
            prep.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            Thread.currentThread().interrupt();
        }
    }
}
