/**
 * The HTTP and gRPC servers (Vert.x, DESIGN.md section 7). What every route shares is
 * {@link io.nereid.gateway.http.GatewayServer}: request ids, auth and CORS, framing rules and
 * timeouts ({@code HttpFraming}), health, metrics, the failure handler. The protocol-neutral core
 * is {@code AdmissionService} (checks, templates and tokenization on the worker pool, validate then
 * submit with rollback, all before the first response byte) and {@code StepEventPump} (each engine
 * step's events to the connection's context, with backpressure, stall and disconnect handling).
 * The OpenAI front end ({@code OpenAiRoutes}, {@code RequestValidator}, {@code Exchange},
 * {@code ChoiceState}, {@code SseChunks}, {@code LogprobFormat}) only parses and formats; so do the
 * KServe v2 / Triton front ends: {@code KServeRoutes} and {@code KServeExchange} over HTTP (same port),
 * {@code KServeGrpc} over gRPC ({@code inference.GRPCInferenceService} on its own port, Vert.x gRPC
 * with the service bound by hand over the messages protoc makes from {@code src/main/protobuf}),
 * both reading requests through {@code KServeInputs} (the TensorRT-LLM ensemble's input names) and
 * counting Triton's statistics in {@code InferenceStats}. Several models: {@code ServedModels}
 * keeps every model of the {@link io.nereid.gateway.http.ModelRepository} with its state
 * (Triton's READY / LOADING / UNLOADING / UNAVAILABLE) and runs loads and unloads in order on one
 * model-control thread; each loaded model is a {@code ServedModel} (its engine, metrics, readiness,
 * admission and front-end handlers), and every route hands a request to the one its model names.
 * Threads: handlers on the event loops, blocking work on the bounded worker pool, engine callbacks
 * hop to the connection's context, loads and unloads on the model-control thread.
 */
package io.nereid.gateway.http;
