/**
 * The engine as front ends see it (DESIGN.md section 3): {@link io.nereid.engine.api.Engines#open}
 * assembles an engine from an {@link io.nereid.engine.api.EngineSpec} into a
 * {@link io.nereid.engine.api.LoadedModel}; {@link io.nereid.engine.api.Engine#submit} takes a
 * {@link io.nereid.engine.api.GenerationRequest} (built and field-checked by its builder) and a
 * {@link io.nereid.engine.api.TokenSink} that receives the output on the engine thread;
 * {@link io.nereid.engine.api.RequestHandle#cancel()} stops it. Typed errors —
 * {@link io.nereid.engine.api.RequestValidationException} (a field the request cannot have) and
 * {@link io.nereid.engine.api.AdmissionException} (not now: queue full, shutting down, engine
 * failed) — are what front ends map to statuses. {@link io.nereid.engine.api.EngineStats} and
 * {@link io.nereid.engine.api.EngineHealth} are snapshots safe from any thread. No OpenAI, HTTP or
 * backend types appear here but the backend decorator of {@code EngineSpec} (for tests).
 */
package io.nereid.engine.api;
