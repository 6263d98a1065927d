package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.nereid.engine.api.AdmissionException;
import io.nereid.engine.api.EngineHealth;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestHandle;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.engine.template.TemplateException;
import io.nereid.gateway.http.ParsedRequest.Kind;
import io.nereid.openapi.ErrorResponse;
import io.nereid.openapi.ModelList;
import io.nereid.openapi.OpenApiDocument;
import io.nereid.openapi.Tokenization;
import io.vertx.core.Context;
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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The OpenAI-compatible HTTP server: {@code GET /health}, {@code GET /v1/models[/{id}]},
 * {@code POST /v1/completions}, {@code POST /v1/chat/completions}, {@code POST /tokenize},
 * {@code POST /detokenize}, {@code GET /health/ready}, {@code GET /metrics}, {@code GET /openapi.json}.
 *
 * <p>A completion request is parsed and validated on the event loop, rendered and tokenized on a
 * bounded worker pool, checked against the context length and submitted to the engine back on the
 * event loop; only once the engine has admitted it are the 200 headers written ({@link Exchange}).
 * Lifecycle: {@link #start} binds; {@link #drain} stops admitting (503) and waits for in-flight
 * requests; {@link #close} closes the server and Vert.x (not the model). If the engine stops after a
 * failure, {@code /health} and {@code /health/ready} answer 503 at once, new requests get 503, and
 * {@link #engineFailure()} completes so the process can drain and exit non-zero.
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
    private final ModelService model;
    private final WorkerExecutor prep;
    private final GatewayOptions options;
    private final Readiness readiness;
    private final ServingMetrics metrics;
    private final LogprobFormat logprobFormat;
    private final AtomicInteger inflight = new AtomicInteger();
    private volatile boolean draining;
    private volatile boolean aborting;
    private final CompletableFuture<String> engineFailure = new CompletableFuture<>();
    private HttpServer server;
    private Router router;

    private GatewayServer(ModelService model, GatewayOptions options, int prepThreads) {
        this.vertx = Vertx.vertx();
        this.model = model;
        this.options = options;
        this.readiness = new Readiness(options.stallTimeout());
        this.metrics = new ServingMetrics(model.name());
        this.logprobFormat = new LogprobFormat(model::tokenBytes);
        this.prep = vertx.createSharedWorkerExecutor("nereid-prep", prepThreads);
        // Sample the engine between probes too, so a loop that stops between two probes is noticed.
        vertx.setPeriodic(1000, id -> {
            readiness.observe(model.engine().stats(), System.nanoTime());
            EngineHealth h = model.engine().health();
            if (h.failed() && engineFailure.complete(h.failure())) {
                LOG.log(System.Logger.Level.ERROR, "the engine stopped after a failure: {0}", h.failure());
            }
        });
    }

    /** {@link #start(ModelService, GatewayOptions, String, int)} with {@link GatewayOptions#DEFAULTS}. */
    public static GatewayServer start(ModelService model, String host, int port) throws Exception {
        return start(model, GatewayOptions.DEFAULTS, host, port);
    }

    /** Binds {@code host:port} (0: any free port) and returns the running server. */
    public static GatewayServer start(ModelService model, GatewayOptions options, String host, int port)
            throws Exception {
        GatewayServer g = new GatewayServer(model, options, Math.max(2, Runtime.getRuntime().availableProcessors() / 2));
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
        } catch (Exception e) {
            g.close();
            throw e;
        }
        return g;
    }

    public int port() {
        return server.actualPort();
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

    public int inflight() {
        return inflight.get();
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
        r.route().handler(new AccessControl(options, (ctx, e) -> error(ctx.response(), e)));
        r.get("/health").handler(this::live);
        r.get("/health/ready").handler(this::ready);
        io.vertx.core.buffer.Buffer openapi = io.vertx.core.buffer.Buffer.buffer(OpenApiDocument.bytes());
        r.get("/openapi.json").handler(ctx -> ctx.response().putHeader("Content-Type", "application/json").end(openapi));
        r.get("/metrics").handler(ctx -> ctx.response().setStatusCode(200)
                .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                .end(metrics.render(model.engine().stats(), model.engine().health(), model.blockSize(),
                        model.numKvBlocks())));
        r.get("/v1/models").handler(ctx -> json(ctx.response(), 200, new ModelList(List.of(card()))));
        r.get("/v1/models/:id").handler(ctx -> {
            if (ctx.pathParam("id").equals(model.name())) {
                json(ctx.response(), 200, card());
            } else {
                error(ctx.response(), notFound(ctx.pathParam("id")));
            }
        });
        r.post().handler(BodyHandler.create().setBodyLimit(BODY_LIMIT));
        r.post("/v1/completions").handler(ctx -> complete(ctx, Kind.COMPLETION));
        r.post("/v1/chat/completions").handler(ctx -> complete(ctx, Kind.CHAT));
        r.post("/tokenize").handler(this::tokenize);
        r.post("/detokenize").handler(this::detokenize);
        RouteTable routes = new RouteTable(r);
        r.route().last().handler(ctx -> {
            List<HttpMethod> allowed = routes.methods(ctx.request().path());
            if (allowed.isEmpty()) {
                error(ctx.response(), new ApiException(404, "invalid_request_error", null, "not_found",
                        "no route " + ctx.request().method() + " " + ctx.request().path(), 0));
            } else {
                ctx.response().putHeader("Allow", String.join(", ", allowed.stream().map(HttpMethod::name).toList()));
                error(ctx.response(), new ApiException(405, "invalid_request_error", null, "method_not_allowed",
                        ctx.request().path() + " takes " + String.join(" or ", allowed.stream().map(HttpMethod::name).toList())
                                + ", not " + ctx.request().method(), 0));
            }
        });
        r.route().failureHandler(this::failed);
        return r;
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
            error(ctx.response(), statusOnly(status, ctx.request(), t));
        } else {
            error(ctx.response(), mapFailure(t == null ? new IllegalStateException("status " + status) : t));
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
                error(ctx.response(), new ApiException(408, "invalid_request_error", null, "request_timeout",
                        "the request body did not arrive within " + options.requestTimeout().toSeconds()
                                + " s (--request-timeout)", 0));
                req.connection().close();
            }
        });
        ctx.addEndHandler(v -> vertx.cancelTimer(timer));
    }

    /** Liveness: 200 while the engine thread runs; 503 once it stopped (after a failure, or at shutdown). */
    private void live(RoutingContext ctx) {
        EngineHealth h = model.engine().health();
        if (h.alive()) {
            ctx.response().setStatusCode(200).end();
        } else {
            error(ctx.response(), engineDown(h));
        }
    }

    /** The 503 for a request while the engine thread is not running. */
    private static ApiException engineDown(EngineHealth h) {
        return h.failed()
                ? new ApiException(503, "service_unavailable", null, "engine_failed",
                        "the engine stopped after a failure (" + h.failure() + "); the server must be restarted", 0)
                : new ApiException(503, "service_unavailable", null, "draining", "the engine has stopped", 0);
    }

    /** 200 while not draining and the engine is idle or made progress within the stall timeout, else 503. */
    private void ready(RoutingContext ctx) {
        long now = System.nanoTime();
        EngineHealth h = model.engine().health();
        if (!h.alive() && !draining) {
            error(ctx.response(), engineDown(h));
        } else if (draining) {
            error(ctx.response(), new ApiException(503, "service_unavailable", null, "draining",
                    "the server is shutting down", 0));
        } else if (!readiness.observe(model.engine().stats(), now)) {
            error(ctx.response(), new ApiException(503, "service_unavailable", null, "engine_stalled", String.format(
                    "the engine has work pending and made no progress for %.1f s (--engine-stall-timeout %d s)",
                    readiness.secondsSinceProgress(now), options.stallTimeout().toSeconds()), 0));
        } else {
            json(ctx.response(), 200, java.util.Map.of("status", "ready"));
        }
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

    private ModelList.Model card() {
        return new ModelList.Model(model.name(), model.created(), model.maxModelLen(), model.description());
    }

    private void complete(RoutingContext ctx, Kind kind) {
        HttpServerResponse resp = ctx.response();
        ParsedRequest req;
        try {
            if (draining) {
                throw new ApiException(503, "service_unavailable", null, "draining", "the server is shutting down", 5);
            }
            if (model.engine().health().failed()) {
                throw engineDown(model.engine().health());
            }
            req = RequestValidator.validate(body(ctx), kind);
            unknownFields(resp, req.ignoredFields());
            if (!req.model().equals(model.name())) {
                throw notFound(req.model());
            }
            if (kind == Kind.CHAT && !model.hasChatTemplate()) {
                throw ApiException.invalid("messages", "the model has no chat template; start the server with"
                        + " --chat-template NAME|FILE, or use /v1/completions");
            }
        } catch (RuntimeException e) {
            error(resp, mapFailure(e));
            return;
        }
        Context context = vertx.getOrCreateContext();
        prep.executeBlocking(() -> prompts(req), false).onComplete(ar -> {
            if (ar.failed()) {
                error(resp, mapFailure(ar.cause()));
            } else if (!resp.closed()) {
                submit(context, resp, req, ar.result(), ctx.get(REQUEST_ID));
            }
        });
    }

    private static JsonNode body(RoutingContext ctx) {
        try {
            return SseChunks.REQUEST_READER.readTree(ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes());
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw ApiException.invalid(null, "the request body is not valid JSON: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            throw ApiException.invalid(null, "the request body cannot be read: " + e.getMessage());
        }
    }

    static final java.util.Set<String> TOKENIZE_FIELDS = java.util.Set.of("model", "prompt", "messages",
            "add_generation_prompt", "add_special_tokens");
    static final java.util.Set<String> DETOKENIZE_FIELDS = java.util.Set.of("model", "tokens");

    /**
     * Unknown request fields: with --strict a 400 naming them, else named in {@code x-nereid-ignored-fields}.
     *
     * @throws ApiException 400 {@code unknown_field} in strict mode
     */
    private void unknownFields(HttpServerResponse resp, List<String> unknown) {
        if (unknown.isEmpty()) {
            return;
        }
        if (options.strict()) {
            throw new ApiException(400, "invalid_request_error", unknown.getFirst(), "unknown_field", "unknown field"
                    + (unknown.size() > 1 ? "s " : " ") + String.join(", ", unknown) + " (the server runs with --strict)", 0);
        }
        resp.putHeader("x-nereid-ignored-fields", String.join(", ", unknown));
    }

    private static List<String> unknown(JsonNode body, java.util.Set<String> known) {
        List<String> out = new java.util.ArrayList<>();
        if (body != null && body.isObject()) {
            body.fieldNames().forEachRemaining(f -> {
                if (!known.contains(f)) {
                    out.add(f);
                }
            });
        }
        return out;
    }

    /** {@code POST /tokenize}: validated here, rendered and tokenized on the worker pool. */
    private void tokenize(RoutingContext ctx) {
        TokenizeRequest req;
        try {
            JsonNode body = body(ctx);
            req = RequestValidator.tokenize(body);
            unknownFields(ctx.response(), unknown(body, TOKENIZE_FIELDS));
            if (req.model() != null && !req.model().equals(model.name())) {
                throw notFound(req.model());
            }
            if (req.messages() != null && !model.hasChatTemplate()) {
                throw ApiException.invalid("messages", "the model has no chat template; start the server with"
                        + " --chat-template NAME|FILE, or send 'prompt'");
            }
        } catch (RuntimeException e) {
            error(ctx.response(), mapFailure(e));
            return;
        }
        prep.executeBlocking(() -> model.tokenize(req.messages() == null ? req.prompt()
                : model.renderChat(req.messages(), req.addGenerationPrompt()), req.addSpecialTokens()), false)
                .onComplete(ar -> {
                    if (ar.failed()) {
                        error(ctx.response(), mapFailure(ar.cause()));
                    } else {
                        json(ctx.response(), 200, new Tokenization.Tokens(ar.result(), model.maxModelLen()));
                    }
                });
    }

    /** {@code POST /detokenize}. */
    private void detokenize(RoutingContext ctx) {
        int[] tokens;
        try {
            JsonNode body = body(ctx);
            tokens = RequestValidator.detokenize(body, model.vocabSize());
            unknownFields(ctx.response(), unknown(body, DETOKENIZE_FIELDS));
            if (body.hasNonNull("model") && !body.get("model").asText().equals(model.name())) {
                throw notFound(body.get("model").asText());
            }
        } catch (RuntimeException e) {
            error(ctx.response(), mapFailure(e));
            return;
        }
        prep.executeBlocking(() -> model.detokenize(tokens), false).onComplete(ar -> {
            if (ar.failed()) {
                error(ctx.response(), mapFailure(ar.cause()));
            } else {
                json(ctx.response(), 200, new Tokenization.Prompt(ar.result()));
            }
        });
    }

    /**
     * A prompt ready for the engine.
     *
     * @param tokens the prompt's token ids, template rendered
     * @param echo   what {@code echo} puts before each choice's output
     */
    private record Prompt(int[] tokens, Exchange.Echo echo) {
    }

    /** A 400 naming {@code prompt} ({@code prompt[k]} in a batch, k >= 0) as the engine's check would. */
    private void checkVocabulary(int[] tokens, int k) {
        for (int id : tokens) {
            if (id < 0 || id >= model.vocabSize()) {
                String message = "token id " + id + " is outside the vocabulary of " + model.vocabSize();
                throw k < 0 ? ApiException.invalid("prompt", message)
                        : ApiException.invalid("prompt[" + k + "]", "prompt[" + k + "]: " + message);
            }
        }
    }

    /** Worker pool: each prompt's tokens and echo (a batch of completions prompts, else one). */
    private List<Prompt> prompts(ParsedRequest req) {
        if (req.kind() == Kind.CHAT) {
            // A rendered chat template writes its own BOS text (vLLM: add_special_tokens=False).
            int[] tokens = model.tokenize(model.renderChat(req.messages()), false);
            // vLLM's chat echo: the last message's content, when that message is the assistant's.
            Map<String, Object> last = req.messages().getLast();
            return List.of(new Prompt(tokens, new Exchange.Echo(req.echo() && "assistant".equals(last.get("role"))
                    ? (String) last.get("content") : "", null, null)));
        }
        // A token prompt echoes its decoded text, special tokens included; a text prompt echoes
        // itself, which holds none of the special tokens (BOS) the tokenizer added.
        if (req.promptTokens() != null) {
            List<Prompt> prompts = new ArrayList<>();
            for (int k = 0; k < req.promptTokens().size(); k++) {
                int[] t = req.promptTokens().get(k);
                if (req.echo()) {
                    checkVocabulary(t, req.promptCount() > 1 ? k : -1);   // before echo decodes them
                }
                prompts.add(new Prompt(t, echo(req, req.echo() ? model.detokenize(t) : "", t, false)));
            }
            return prompts;
        }
        return req.prompts().stream().map(text -> {
            int[] t = model.tokenize(text, true);
            return new Prompt(t, echo(req, req.echo() ? text : "", t, true));
        }).toList();
    }

    /** Worker pool: the echo of a completions prompt, with its tokens' text offsets when logprobs are asked for. */
    private Exchange.Echo echo(ParsedRequest req, String text, int[] tokens, boolean skipSpecial) {
        return req.echoLogprobs() ? new Exchange.Echo(text, tokens, model.textOffsets(tokens, skipSpecial, text.length()))
                : new Exchange.Echo(text, null, null);
    }

    /**
     * On the context: checks every prompt against the context length, then admits one engine request
     * per prompt; if admitting one fails, the ones already admitted are cancelled and the error is the
     * answer. Only when all are admitted does the {@link Exchange} write its 200.
     */
    private void submit(Context context, HttpServerResponse resp, ParsedRequest req, List<Prompt> prompts,
            String requestId) {
        boolean batch = prompts.size() > 1;
        String id = (req.kind() == Kind.CHAT ? "chatcmpl-" : "cmpl-")
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        // Every prompt's engine request is built and checked before anything is sized by the request (n, prompts).
        List<GenerationRequest> requests = new ArrayList<>();
        for (int k = 0; k < prompts.size(); k++) {
            try {
                GenerationRequest g = req.engineRequest(batch ? id + "-" + k : id, prompts.get(k).tokens(),
                        maxTokens(req, prompts.get(k).tokens().length, batch ? k : -1));
                model.engine().validate(g);
                requests.add(g);
            } catch (RuntimeException e) {
                error(resp, forPrompt(e instanceof RequestValidationException v ? ParsedRequest.invalid(req.kind(), v)
                        : mapFailure(e), batch ? k : -1));
                return;
            }
        }
        Exchange exchange = new Exchange(context, resp, req, prompts.stream().map(Prompt::echo).toList(), id,
                model.name(), metrics, logprobFormat, inflight::decrementAndGet, requestId, options.clientStallTimeout(),
                () -> aborting);
        List<RequestHandle> handles = new java.util.ArrayList<>();
        for (int k = 0; k < requests.size(); k++) {
            try {
                handles.add(model.engine().submit(requests.get(k), exchange.sink(k)));
            } catch (RuntimeException e) {
                exchange.abandon(handles);
                if (e instanceof AdmissionException a) {
                    metrics.admissionRejected(a.reason().name().toLowerCase(java.util.Locale.ROOT));
                }
                error(resp, forPrompt(mapFailure(e), batch ? k : -1));
                return;
            }
        }
        inflight.incrementAndGet();
        LOG.log(System.Logger.Level.DEBUG, "request {0}: admitted as {1} ({2} prompt(s), {3} prompt tokens, stream {4})",
                requestId, id, prompts.size(), prompts.stream().mapToInt(p -> p.tokens().length).sum(), req.stream());
        exchange.start(handles);
    }

    /** A 400 about prompt {@code k} of a batch names it ({@code prompt[k]}); other failures and single prompts are as they are. */
    private static ApiException forPrompt(ApiException failure, int k) {
        if (k < 0 || failure.status() != 400 || "context_length_exceeded".equals(failure.code())) {
            return failure;
        }
        return new ApiException(400, failure.type(), "prompt".equals(failure.param()) ? "prompt[" + k + "]" : failure.param(),
                failure.code(), "prompt[" + k + "]: " + failure.getMessage(), 0);
    }

    /**
     * The tokens prompt {@code k} (-1: the only prompt) may generate: {@code max_tokens}, or up to the
     * context length.
     *
     * @throws ApiException 400 {@code context_length_exceeded} naming the prompt and the token counts
     */
    private int maxTokens(ParsedRequest req, int promptLength, int k) {
        int ctxLen = model.maxModelLen();
        String maxParam = req.kind() == Kind.CHAT ? "max_completion_tokens" : "max_tokens";
        int maxTokens = req.maxTokens() == null ? ctxLen - promptLength : req.maxTokens();
        // With no max_tokens the prompt must leave room for one token (vLLM); an explicit 0 (echo scoring) need not.
        if ((req.maxTokens() == null && promptLength >= ctxLen) || (long) promptLength + maxTokens > ctxLen) {
            String prompt = k < 0 ? "prompt" : "prompt[" + k + "]";
            throw new ApiException(400, "invalid_request_error", req.maxTokens() == null
                    ? (req.kind() == Kind.CHAT ? "messages" : prompt) : maxParam, "context_length_exceeded",
                    "this model's maximum context length is " + ctxLen + " tokens; " + (k < 0 ? "the prompt" : prompt)
                    + " has " + promptLength + " tokens"
                    + (req.maxTokens() == null ? "" : " and " + maxParam + " asks for " + maxTokens + " more"), 0);
        }
        return maxTokens;
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

    private static void error(HttpServerResponse resp, ApiException e) {
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

    private static void json(HttpServerResponse resp, int status, Object body) {
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
        while (inflight.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        return inflight.get();
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
            prep.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            Thread.currentThread().interrupt();
        }
    }
}
