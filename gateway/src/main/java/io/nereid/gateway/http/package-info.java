/**
 * The HTTP server (Vert.x, DESIGN.md section 7). What every route shares is
 * {@link io.nereid.gateway.http.GatewayServer}: request ids, auth and CORS, framing rules and
 * timeouts ({@code HttpFraming}), health, metrics, the failure handler. The protocol-neutral core
 * is {@code AdmissionService} (checks, templates and tokenization on the worker pool, validate then
 * submit with rollback, all before the first response byte) and {@code StepEventPump} (each engine
 * step's events to the connection's context, with backpressure, stall and disconnect handling).
 * The OpenAI front end ({@code OpenAiRoutes}, {@code RequestValidator}, {@code Exchange},
 * {@code ChoiceState}, {@code SseChunks}, {@code LogprobFormat}) only parses and formats. Threads:
 * handlers on the event loops, blocking work on the bounded worker pool, engine callbacks hop to
 * the connection's context.
 */
package io.nereid.gateway.http;
