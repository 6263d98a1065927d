/**
 * The engine core (DESIGN.md section 4): {@link io.nereid.engine.core.InflightEngine} owns the inbox
 * and the loop around three units with one job each — the {@code Scheduler} (which slices a step
 * holds: decodes first, prompt chunks within the token budget, prefix reuse, watermark admission,
 * recompute preemption; and the bookkeeping after it: computed K/V, accepted drafts and rolled-back
 * ones, forks, releases), the {@code Executor} (a plan on the {@link io.nereid.engine.backend.Backend})
 * and the {@code OutputProcessor} (sampling chain, detokenizer, stops, events through {@code Events}).
 * A request's own failure fails that request alone; see {@code InflightEngine} for the failure
 * policy. {@link io.nereid.engine.core.Generator} runs one sequence over any backend, for tools and
 * model tests. Everything here but {@code submit}, {@code validate}, {@code stats}, {@code health}
 * and {@code cancel} runs on the engine thread. Never imports the CPU backend (checked by
 * {@code ArchitectureTest}).
 */
package io.nereid.engine.core;
