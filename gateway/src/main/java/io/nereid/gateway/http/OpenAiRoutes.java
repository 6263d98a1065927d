package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nereid.engine.api.GenerationRequest;
import io.nereid.engine.api.RequestValidationException;
import io.nereid.gateway.http.ParsedRequest.Kind;
import io.nereid.openapi.ModelList;
import io.nereid.openapi.Tokenization;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The OpenAI front end: {@code GET /v1/models[/{id}]}, {@code POST /v1/completions},
 * {@code POST /v1/chat/completions} and vLLM's {@code POST /tokenize} and {@code POST /detokenize}.
 * It parses and validates (on the event loop, {@link RequestValidator}), renders and tokenizes
 * (worker pool) and admits through the protocol-neutral {@link AdmissionService}; an admitted
 * completion is answered by an {@link Exchange}, which formats what its {@link StepEventPump}
 * delivers. Threads: handlers run on the event loop; nothing here blocks it.
 */
final class OpenAiRoutes {

    private final Vertx vertx;
    private final ModelService model;
    private final GatewayOptions options;
    private final ServingMetrics metrics;
    private final WorkerExecutor prep;
    private final AdmissionService admission;
    private final LogprobFormat logprobFormat;
    private final AtomicInteger inflight;
    private final java.util.function.Supplier<String> aborting;

    /**
     * @param inflight completions admitted and not yet answered (the server's drain waits for 0)
     * @param aborting once a drain (the server's, or an unload's) timed out, why: cancelled requests then end with
     *                 that error (null before)
     */
    OpenAiRoutes(Vertx vertx, ModelService model, GatewayOptions options, ServingMetrics metrics, WorkerExecutor prep,
            AdmissionService admission, AtomicInteger inflight, java.util.function.Supplier<String> aborting) {
        this.vertx = vertx;
        this.model = model;
        this.options = options;
        this.metrics = metrics;
        this.prep = prep;
        this.admission = admission;
        this.logprobFormat = new LogprobFormat(model::tokenBytes);
        this.inflight = inflight;
        this.aborting = aborting;
    }

    /**
     * Adds the routes (after the body handler). Each request goes to the model its {@code model}
     * field names; a request for a model that is not served is still validated (a bad request is a
     * 400 before the unknown model's 404).
     */
    static void register(Router r, ServedModels models, BooleanSupplier draining) {
        r.get("/v1/models").handler(ctx -> GatewayServer.json(ctx.response(), 200,
                new ModelList(models.ready().stream().map(s -> s.openAi.card()).toList())));
        r.get("/v1/models/:id").handler(ctx -> {
            ServedModel s = models.find(ctx.pathParam("id"));
            if (s != null && !s.unloading) {
                GatewayServer.json(ctx.response(), 200, s.openAi.card());
            } else {
                GatewayServer.error(ctx.response(), GatewayServer.notFound(ctx.pathParam("id")));
            }
        });
        r.post("/v1/completions").handler(ctx -> dispatch(ctx, models, draining, (o, body) -> o.complete(ctx, body,
                Kind.COMPLETION), true));
        r.post("/v1/chat/completions").handler(ctx -> dispatch(ctx, models, draining, (o, body) -> o.complete(ctx, body,
                Kind.CHAT), true));
        r.post("/v1/embeddings").handler(ctx -> dispatch(ctx, models, draining, (o, body) -> o.embed(ctx, body), true));
        r.post("/tokenize").handler(ctx -> dispatch(ctx, models, () -> false, (o, body) -> o.tokenize(ctx, body), false));
        r.post("/detokenize").handler(ctx -> dispatch(ctx, models, () -> false, (o, body) -> o.detokenize(ctx, body),
                false));
    }

    /**
     * Parses the body and hands it to the routes of the model it names. A model that is not served
     * goes to any served model's routes, whose checks answer the 400 for a bad request or else the
     * 404; with no model loaded it is a 404 at once. Without {@code model} ({@code required}
     * false: tokenize), the one model served takes it.
     */
    private static void dispatch(RoutingContext ctx, ServedModels models, BooleanSupplier draining,
            java.util.function.BiConsumer<OpenAiRoutes, JsonNode> handle, boolean required) {
        JsonNode body;
        try {
            AdmissionService.checkServer(draining);
            body = body(ctx);
        } catch (RuntimeException e) {
            GatewayServer.error(ctx.response(), GatewayServer.mapFailure(e));
            return;
        }
        JsonNode m = body == null ? null : body.get("model");
        String name = m != null && m.isTextual() ? m.asText() : null;
        ServedModel s = models.find(name);
        if (s == null) {
            List<ServedModel> ready = models.ready();
            if (!required && (m == null || m.isNull()) && ready.size() > 1) {
                GatewayServer.error(ctx.response(), ApiException.invalid("model", "this server serves " + ready.size()
                        + " models (" + String.join(", ", ready.stream().map(ServedModel::name).toList())
                        + "); name one in 'model'"));
                return;
            }
            if (ready.isEmpty()) {
                GatewayServer.error(ctx.response(), GatewayServer.notFound(name == null ? String.valueOf(m) : name));
                return;
            }
            s = ready.getFirst();
        }
        handle.accept(s.openAi, body);
    }

    ModelList.Model card() {
        return new ModelList.Model(model.name(), model.created(), model.maxModelLen(), model.description());
    }

    private void complete(RoutingContext ctx, JsonNode body, Kind kind) {
        HttpServerResponse resp = ctx.response();
        ParsedRequest req;
        try {
            admission.checkAvailable();
            req = RequestValidator.validate(body, kind);
            unknownFields(resp, req.ignoredFields());
            req = forThisModel(req, kind);
        } catch (RuntimeException e) {
            GatewayServer.error(resp, GatewayServer.mapFailure(e));
            return;
        }
        String id = (kind == Kind.CHAT ? "chatcmpl-" : "cmpl-") + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        admission.admit(vertx.getOrCreateContext(), new OpenAiPlan(resp, req, ctx.get(GatewayServer.REQUEST_ID), id))
                .onFailure(e -> GatewayServer.error(resp, GatewayServer.mapFailure(e)));
    }

    /**
     * The request as this model serves it: its chat template, tool-call syntax and reasoning parser.
     *
     * @throws ApiException 404 for another model, 400 for what this model cannot do (chat without a
     *                      template, tools without a tool-call syntax)
     */
    private ParsedRequest forThisModel(ParsedRequest req, Kind kind) {
        if (!req.model().equals(model.name())) {
            throw GatewayServer.notFound(req.model());
        }
        if (kind == Kind.CHAT && !model.hasChatTemplate()) {
            throw ApiException.invalid("messages", "the model has no chat template; start the server with"
                    + " --chat-template NAME|FILE, or use /v1/completions");
        }
        if (req.tools() != null && req.tools().active()) {
            if (model.toolCallFormat() == null) {
                throw ApiException.invalid(req.tools().toolsField(), "this model's chat template shows no tool-call syntax (Hermes"
                        + " <tool_call>, Llama 3 JSON, Mistral [TOOL_CALLS]); start the server with --tool-call-parser"
                        + " hermes|llama3_json|mistral");
            }
            req = req.withToolFormat(model.toolCallFormat());
        }
        if (kind == Kind.CHAT && model.reasoningParser() != null) {
            req = req.withReasoning(ReasoningParser.Format.named(model.reasoningParser()));
        }
        return req;
    }

    /** {@code POST /v1/embeddings} for this model: one pooling engine request per input, all admitted before the 200. */
    private void embed(RoutingContext ctx, JsonNode body) {
        HttpServerResponse resp = ctx.response();
        Embeddings.Request req;
        io.nereid.engine.api.EmbeddingSpec spec = model.embedding();
        try {
            admission.checkAvailable();
            req = Embeddings.parse(body);
            unknownFields(resp, req.ignored());
            if (!req.model().equals(model.name())) {
                throw GatewayServer.notFound(req.model());
            }
            if (spec == null) {
                throw ApiException.invalid("model", "the model '" + model.name() + "' serves no embeddings: its files"
                        + " declare no pooling (GGUF pooling_type, sentence-transformers modules.json); start the server"
                        + " with --task embed to embed with it (last-token pooling, normalised, as vLLM)");
            }
            if (req.dimensions() > 0 && !spec.truncatesTo(req.dimensions(), model.hiddenSize())) {
                throw ApiException.invalid("dimensions", spec.matryoshka() == null ? "this model declares no Matryoshka"
                        + " dimensions: omit dimensions or ask for all " + model.hiddenSize()
                        : "this model's Matryoshka dimensions are " + (spec.matryoshka().isEmpty() ? "1.." + model.hiddenSize()
                        : spec.matryoshka()) + ", not " + req.dimensions());
            }
        } catch (RuntimeException e) {
            GatewayServer.error(resp, GatewayServer.mapFailure(e));
            return;
        }
        String id = "embd-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        io.vertx.core.Context context = vertx.getOrCreateContext();
        admission.admit(context, new AdmissionService.Plan<int[]>() {
            @Override
            public List<int[]> prepare() {
                if (req.texts() == null) {
                    for (int k = 0; k < req.tokens().size(); k++) {
                        checkVocabulary(req.tokens().get(k), req.count() > 1 ? k : -1, "input");
                    }
                    return req.tokens();
                }
                return req.texts().stream().map(t -> model.tokenize(t, true)).toList();
            }

            @Override
            public GenerationRequest request(int k, int[] tokens) {
                String at = req.count() > 1 ? "input[" + k + "]" : "input";
                if (tokens.length > model.maxModelLen()) {
                    throw new ApiException(400, "invalid_request_error", at, "context_length_exceeded", "this model's"
                            + " maximum context length is " + model.maxModelLen() + " tokens; " + at + " has "
                            + tokens.length + " tokens", 0);
                }
                return GenerationRequest.builder(req.count() > 1 ? id + "-" + k : id, tokens).maxTokens(0)
                        .pooling(spec.pooling()).build();
            }

            @Override
            public ApiException refused(int k, RuntimeException e) {
                String at = req.count() > 1 ? "input[" + k + "]" : "input";
                return e instanceof RequestValidationException v ? ApiException.invalid(at, at + ": " + v.getMessage())
                        : GatewayServer.mapFailure(e);
            }

            @Override
            public AdmissionService.Responder respond(List<int[]> prompts) {
                Embeddings.Exchange x = new Embeddings.Exchange(context, resp, req, spec, model.name(), metrics,
                        inflight::decrementAndGet);
                return AdmissionService.Responder.of(x::sink, x::abandon, admitted -> {
                    inflight.incrementAndGet();
                    x.start(admitted);
                });
            }
        }).onFailure(e -> GatewayServer.error(resp, GatewayServer.mapFailure(e)));
    }

    /**
     * {@code POST /v1/responses} for this model: {@code rq} runs as the chat completion it
     * translates into and is answered (streamed, whole or in the background) by a
     * {@link ResponsesExchange}; stored for {@code owner} through {@code api}.
     */
    void respond(RoutingContext ctx, ResponsesRequest rq, String owner, ResponsesRoutes api) {
        HttpServerResponse resp = ctx.response();
        ParsedRequest req;
        try {
            admission.checkAvailable();
            req = forThisModel(RequestValidator.validate(rq.chat, Kind.CHAT), Kind.CHAT);
            if (rq.logprobs && (req.readsToolCalls() || req.reasoning() != null)) {
                throw ApiException.invalid("include", "message.output_text.logprobs together with tools or a reasoning"
                        + " parser is not supported yet");
            }
        } catch (RuntimeException e) {
            GatewayServer.error(resp, ResponsesRequest.rename(GatewayServer.mapFailure(e)));
            return;
        }
        String id = ResponsesRequest.id("resp_");
        String requestId = ctx.get(GatewayServer.REQUEST_ID);
        admission.admit(vertx.getOrCreateContext(), new OpenAiPlan(resp, req, requestId, id) {
            @Override
            public ApiException refused(int k, RuntimeException e) {
                return ResponsesRequest.rename(super.refused(k, e));
            }

            @Override
            public AdmissionService.Responder respond(List<Prompt> prompts) {
                long created = System.currentTimeMillis() / 1000;
                ResponsesExchange x = new ResponsesExchange(vertx.getOrCreateContext(), rq.background ? null : resp, rq,
                        req, id, model.name(), metrics, inflight::decrementAndGet, requestId, options.clientStallTimeout(),
                        aborting, (status, r, conversation) -> api.persist(owner, id, r.path("created_at").asLong(created),
                                status, r, rq.inputItems, conversation), logprobFormat);
                return AdmissionService.Responder.of(x::sink, x::abandon, admitted -> {
                    inflight.incrementAndGet();
                    if (!rq.background) {
                        x.start(admitted);
                        return;
                    }
                    // In the background: stored as queued, answered at once; the exchange stores the end.
                    api.running(x);
                    ObjectNode queued = x.object("queued", null);
                    api.persist(owner, id, created, "queued", queued, rq.inputItems, rq.conversation).onComplete(ar -> {
                        x.start(admitted);
                        if (ar.failed()) {
                            x.discard();   // the client gets the error, not the id: nothing to keep
                            x.cancel();
                            GatewayServer.error(resp, GatewayServer.mapFailure(ar.cause()));
                        } else {
                            GatewayServer.json(resp, 200, queued);
                        }
                    });
                });
            }
        }).onFailure(e -> GatewayServer.error(resp, ResponsesRequest.rename(GatewayServer.mapFailure(e))));
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
    private void tokenize(RoutingContext ctx, JsonNode body) {
        TokenizeRequest req;
        try {
            req = RequestValidator.tokenize(body);
            unknownFields(ctx.response(), unknown(body, TOKENIZE_FIELDS));
            if (req.model() != null && !req.model().equals(model.name())) {
                throw GatewayServer.notFound(req.model());
            }
            if (req.messages() != null && !model.hasChatTemplate()) {
                throw ApiException.invalid("messages", "the model has no chat template; start the server with"
                        + " --chat-template NAME|FILE, or send 'prompt'");
            }
        } catch (RuntimeException e) {
            GatewayServer.error(ctx.response(), GatewayServer.mapFailure(e));
            return;
        }
        prep.executeBlocking(() -> model.tokenize(req.messages() == null ? req.prompt()
                : model.renderChat(req.messages(), req.addGenerationPrompt()), req.addSpecialTokens()), false)
                .onComplete(ar -> {
                    if (ar.failed()) {
                        GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
                    } else {
                        GatewayServer.json(ctx.response(), 200, new Tokenization.Tokens(ar.result(), model.maxModelLen()));
                    }
                });
    }

    /** {@code POST /detokenize}. */
    private void detokenize(RoutingContext ctx, JsonNode body) {
        int[] tokens;
        try {
            tokens = RequestValidator.detokenize(body, model.vocabSize());
            unknownFields(ctx.response(), unknown(body, DETOKENIZE_FIELDS));
            if (body.hasNonNull("model") && !body.get("model").asText().equals(model.name())) {
                throw GatewayServer.notFound(body.get("model").asText());
            }
        } catch (RuntimeException e) {
            GatewayServer.error(ctx.response(), GatewayServer.mapFailure(e));
            return;
        }
        prep.executeBlocking(() -> model.detokenize(tokens), false).onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
            } else {
                GatewayServer.json(ctx.response(), 200, new Tokenization.Prompt(ar.result()));
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
        checkVocabulary(tokens, k, "prompt");
    }

    /** As {@link #checkVocabulary(int[], int)}, naming {@code field} ({@code input} for embeddings). */
    private void checkVocabulary(int[] tokens, int k, String field) {
        for (int id : tokens) {
            if (id < 0 || id >= model.vocabSize()) {
                String message = "token id " + id + " is outside the vocabulary of " + model.vocabSize();
                throw k < 0 ? ApiException.invalid(field, message)
                        : ApiException.invalid(field + "[" + k + "]", field + "[" + k + "]: " + message);
            }
        }
    }

    /** Worker pool: each prompt's tokens and echo (a batch of completions prompts, else one). */
    private List<Prompt> prompts(ParsedRequest req) {
        if (req.kind() == Kind.CHAT) {
            // A rendered chat template writes its own BOS text (vLLM: add_special_tokens=False).
            int[] tokens = model.tokenize(model.renderChat(req.messages(), true,
                    req.tools() == null ? null : req.tools().definitions(), req.templateKwargs()), false);
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
     * How an OpenAI completion is admitted ({@link AdmissionService}): its prompts rendered and
     * tokenized with their echoes, one engine request per prompt (max_tokens up to the context when
     * not given), refusals named as OpenAI names the fields ({@code prompt[k]} in a batch), and an
     * {@link Exchange} as the response.
     */
    private class OpenAiPlan implements AdmissionService.Plan<Prompt> {
        private final HttpServerResponse resp;
        private final ParsedRequest req;
        private final String requestId;
        private final String id;
        private final boolean batch;

        OpenAiPlan(HttpServerResponse resp, ParsedRequest req, String requestId, String id) {
            this.resp = resp;
            this.req = req;
            this.requestId = requestId;
            this.id = id;
            this.batch = req.promptCount() > 1;
        }

        @Override
        public List<Prompt> prepare() {
            if (req.structured() != null) {
                try {
                    model.engine().prepare(req.structured().constraint());   // compiled here, not on the event loop
                } catch (RequestValidationException e) {
                    throw refusedConstraint(e);
                }
            }
            return prompts(req);
        }

        /**
         * The 400 for a constraint the engine refused. Tools sent with a response_format compile as one
         * constraint; only when that fails is the answer's format compiled alone, to name the field at fault.
         */
        private ApiException refusedConstraint(RequestValidationException e) {
            StructuredOutputs.Parsed answer = req.tools() == null ? null : req.tools().answer();
            if (answer != null && req.readsToolCalls()) {
                try {
                    model.engine().prepare(answer.constraint());
                } catch (RequestValidationException inAnswer) {
                    return ApiException.invalid(answer.param(), inAnswer.getMessage());
                }
            }
            return req.invalid(e);
        }

        @Override
        public GenerationRequest request(int k, Prompt p) {
            return req.engineRequest(batch ? id + "-" + k : id, p.tokens(), maxTokens(req, p.tokens().length, batch ? k : -1));
        }

        @Override
        public ApiException refused(int k, RuntimeException e) {
            return forPrompt(e instanceof RequestValidationException v ? req.invalid(v)
                    : GatewayServer.mapFailure(e), batch ? k : -1);
        }

        @Override
        public AdmissionService.Responder respond(List<Prompt> prompts) {
            Exchange exchange = new Exchange(vertx.getOrCreateContext(), resp, req, prompts.stream().map(Prompt::echo).toList(),
                    id, model.name(), metrics, logprobFormat, inflight::decrementAndGet, requestId,
                    options.clientStallTimeout(), aborting);
            return AdmissionService.Responder.of(exchange::sink, exchange::abandon, admitted -> {
                inflight.incrementAndGet();   // before any byte: the drain waits for this response
                GatewayServer.LOG.log(System.Logger.Level.DEBUG, "request {0}: admitted as {1} ({2} prompt(s), {3} prompt"
                        + " tokens, stream {4})", requestId, id, prompts.size(), prompts.stream().mapToInt(p -> p.tokens().length)
                        .sum(), req.stream());
                exchange.start(admitted);
            });
        }
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
}
