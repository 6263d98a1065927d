package io.nereid.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * OpenAI's Responses API: {@code POST /v1/responses} (each request goes to the model it names, whose
 * {@link OpenAiRoutes} admits it as the chat completion it translates into, {@link ResponsesRequest},
 * and answers it with a {@link ResponsesExchange}), and the stored responses: {@code GET} and
 * {@code DELETE /v1/responses/{id}}, {@code GET /v1/responses/{id}/input_items}, {@code POST
 * /v1/responses/{id}/cancel} (background responses). Stored responses live in a
 * {@link ResponseStore}, owned by the API key that made them: another key gets a 404, as for a
 * response that does not exist. Threads: handlers on the event loop, the store on the worker pool.
 */
final class ResponsesRoutes implements AutoCloseable {

    private final ServedModels models;
    private final WorkerExecutor prep;
    private final GatewayOptions options;
    private final BooleanSupplier draining;
    private final ResponseStore store;
    /** Background responses still running in this process, by id. */
    private final Map<String, ResponsesExchange> background = new ConcurrentHashMap<>();

    ResponsesRoutes(ServedModels models, WorkerExecutor prep, GatewayOptions options, BooleanSupplier draining) {
        this.models = models;
        this.prep = prep;
        this.options = options;
        this.draining = draining;
        this.store = new ResponseStore(options.responses());
    }

    void register(Router r) {
        r.post("/v1/responses").handler(this::create);
        r.get("/v1/responses/:id").handler(this::retrieve);
        r.delete("/v1/responses/:id").handler(this::delete);
        r.get("/v1/responses/:id/input_items").handler(this::inputItems);
        r.post("/v1/responses/:id/cancel").handler(this::cancel);
    }

    /** Whose responses a request may read: a digest of its API key ("" when the server has no keys). */
    static String owner(RoutingContext ctx) {
        String h = ctx.request().getHeader("Authorization");
        if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return "";
        }
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(h.substring(7).trim().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ApiException notFound(String id) {
        return new ApiException(404, "invalid_request_error", null, "not_found", "no response with id '" + id + "'", 0);
    }

    private <T> Future<T> blocking(java.util.concurrent.Callable<T> work) {
        return prep.executeBlocking(work, false);
    }

    // ---- create ----------------------------------------------------------------------------------

    private void create(RoutingContext ctx) {
        JsonNode body;
        try {
            AdmissionService.checkServer(draining);
            body = SseChunks.REQUEST_READER.readTree(ctx.body().buffer() == null ? new byte[0]
                    : ctx.body().buffer().getBytes());
        } catch (ApiException e) {
            GatewayServer.error(ctx.response(), e);
            return;
        } catch (java.io.IOException e) {
            GatewayServer.error(ctx.response(), ApiException.invalid(null, "the request body is not valid JSON: "
                    + e.getMessage()));
            return;
        }
        String owner = owner(ctx);
        JsonNode prev = body == null ? null : body.get("previous_response_id");
        if (prev == null || prev.isNull()) {
            create(ctx, body, owner, null);
            return;
        }
        if (!prev.isTextual()) {
            GatewayServer.error(ctx.response(), ApiException.invalid("previous_response_id", "'previous_response_id' must"
                    + " be a string"));
            return;
        }
        blocking(() -> java.util.Optional.ofNullable(store.get(owner, prev.asText()))).onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
                return;
            }
            ResponseStore.Stored s = ar.result().orElse(null);
            if (s == null) {
                GatewayServer.error(ctx.response(), new ApiException(400, "invalid_request_error", "previous_response_id",
                        "previous_response_not_found", "previous response with id '" + prev.asText() + "' not found", 0));
                return;
            }
            if (!terminal(s.status())) {
                GatewayServer.error(ctx.response(), ApiException.invalid("previous_response_id", "previous response '"
                        + prev.asText() + "' is still " + s.status() + "; continue it once it has finished"));
                return;
            }
            ArrayNode conversation;
            try {
                conversation = (ArrayNode) SseChunks.REQUEST_READER.readTree(s.conversation());
            } catch (java.io.IOException e) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(e));
                return;
            }
            create(ctx, body, owner, conversation);
        });
    }

    private void create(RoutingContext ctx, JsonNode body, String owner, ArrayNode previous) {
        ResponsesRequest rq;
        try {
            rq = new ResponsesRequest(body, previous);
            if (!rq.ignored.isEmpty()) {
                if (options.strict()) {
                    throw new ApiException(400, "invalid_request_error", rq.ignored.getFirst(), "unknown_field",
                            "unknown field" + (rq.ignored.size() > 1 ? "s " : " ") + String.join(", ", rq.ignored)
                                    + " (the server runs with --strict)", 0);
                }
                ctx.response().putHeader("x-nereid-ignored-fields", String.join(", ", rq.ignored));
            }
        } catch (RuntimeException e) {
            GatewayServer.error(ctx.response(), GatewayServer.mapFailure(e));
            return;
        }
        ServedModel s = models.find(rq.model);
        if (s == null) {
            GatewayServer.error(ctx.response(), GatewayServer.notFound(rq.model));
            return;
        }
        s.openAi.respond(ctx, rq, owner, this);
    }

    /** Ids deleted while their response was still running: its last write must not bring it back. */
    private final java.util.Set<String> deleted = ConcurrentHashMap.newKeySet();

    /** Worker pool: stores a response of {@code owner}; the future completes once it is written. */
    Future<Void> persist(String owner, String id, long created, String status, ObjectNode response, ArrayNode inputItems,
            ArrayNode conversation) {
        if (deleted.contains(id)) {
            return Future.succeededFuture();
        }
        ResponseStore.Stored s = new ResponseStore.Stored(id, owner, created, status, SseChunks.json(response),
                SseChunks.json(inputItems), SseChunks.json(conversation));
        return blocking(() -> {
            store.put(s);
            return null;
        });
    }

    /** A background response started: cancel finds it until it ends. */
    void running(ResponsesExchange x) {
        background.put(x.id(), x);
        x.over().onComplete(v -> {
            background.remove(x.id());
            deleted.remove(x.id());
        });
    }

    static boolean terminal(String status) {
        return !status.equals("queued") && !status.equals("in_progress");
    }

    // ---- stored responses --------------------------------------------------------------------------

    /** The stored response, as it stands: one left unfinished by an earlier process is failed. */
    private Future<ObjectNode> load(String owner, String id) {
        return blocking(() -> {
            ResponseStore.Stored s = store.get(owner, id);
            if (s == null) {
                throw notFound(id);
            }
            ObjectNode r = (ObjectNode) SseChunks.REQUEST_READER.readTree(s.response());
            if (!terminal(s.status()) && !background.containsKey(id)) {
                r.put("status", "failed");
                r.set("error", ResponsesRequest.NODES.objectNode().put("code", "server_error")
                        .put("message", "the server stopped before the response finished"));
            }
            return r;
        });
    }

    private void retrieve(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        load(owner(ctx), id).onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
            } else {
                GatewayServer.json(ctx.response(), 200, ar.result());
            }
        });
    }

    private void delete(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        String owner = owner(ctx);
        blocking(() -> store.delete(owner, id)).onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
            } else if (!ar.result()) {
                GatewayServer.error(ctx.response(), notFound(id));
            } else {
                ResponsesExchange running = background.get(id);
                if (running != null) {
                    deleted.add(id);
                    running.discard();
                    running.cancel();
                }
                GatewayServer.json(ctx.response(), 200, Map.of("id", id, "object", "response", "deleted", true));
            }
        });
    }

    private void inputItems(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        String owner = owner(ctx);
        int limit;
        boolean asc;
        String after = ctx.queryParams().get("after");
        try {
            String l = ctx.queryParams().get("limit");
            limit = l == null ? 20 : Integer.parseInt(l);
            if (limit < 1 || limit > 100) {
                throw new NumberFormatException();
            }
            String order = ctx.queryParams().get("order");
            if (order != null && !order.equals("asc") && !order.equals("desc")) {
                throw ApiException.invalid("order", "order must be asc or desc");
            }
            asc = "asc".equals(order);
        } catch (NumberFormatException e) {
            GatewayServer.error(ctx.response(), ApiException.invalid("limit", "limit must be an integer in [1, 100]"));
            return;
        } catch (ApiException e) {
            GatewayServer.error(ctx.response(), e);
            return;
        }
        blocking(() -> {
            ResponseStore.Stored s = store.get(owner, id);
            if (s == null) {
                throw notFound(id);
            }
            return (ArrayNode) SseChunks.REQUEST_READER.readTree(s.inputItems());
        }).onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
                return;
            }
            java.util.List<JsonNode> items = new java.util.ArrayList<>();
            ar.result().forEach(items::add);
            if (!asc) {
                java.util.Collections.reverse(items);
            }
            int from = 0;
            if (after != null) {
                from = items.size();
                for (int i = 0; i < items.size(); i++) {
                    if (after.equals(items.get(i).path("id").asText())) {
                        from = i + 1;
                        break;
                    }
                }
            }
            java.util.List<JsonNode> page = items.subList(from, Math.min(items.size(), from + limit));
            ObjectNode list = ResponsesRequest.NODES.objectNode().put("object", "list");
            list.putArray("data").addAll(page);
            list.put("first_id", page.isEmpty() ? null : page.getFirst().path("id").asText());
            list.put("last_id", page.isEmpty() ? null : page.getLast().path("id").asText());
            list.put("has_more", from + limit < items.size());
            GatewayServer.json(ctx.response(), 200, list);
        });
    }

    private void cancel(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        String owner = owner(ctx);
        load(owner, id).onComplete(ar -> {
            if (ar.failed()) {
                GatewayServer.error(ctx.response(), GatewayServer.mapFailure(ar.cause()));
                return;
            }
            ObjectNode r = ar.result();
            if (!r.path("background").asBoolean(false)) {
                GatewayServer.error(ctx.response(), ApiException.invalid(null, "only background responses can be"
                        + " cancelled; response '" + id + "' was not created with background: true"));
                return;
            }
            ResponsesExchange running = background.get(id);
            if (running == null) {
                GatewayServer.json(ctx.response(), 200, r);   // already over: as it ended
                return;
            }
            io.vertx.core.Context caller = ctx.vertx().getOrCreateContext();
            running.cancel();
            running.over().onComplete(v -> caller.runOnContext(x -> load(owner, id).onComplete(after -> {
                if (after.failed()) {
                    GatewayServer.error(ctx.response(), GatewayServer.mapFailure(after.cause()));
                } else {
                    GatewayServer.json(ctx.response(), 200, after.result());
                }
            })));
        });
    }

    @Override
    public void close() {
        background.values().forEach(ResponsesExchange::cancel);
        store.close();
    }
}
