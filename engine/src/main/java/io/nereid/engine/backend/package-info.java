/**
 * The seam between the engine core and compute: {@link io.nereid.engine.backend.Backend} (forward
 * passes over paged K/V: {@link io.nereid.engine.backend.Step} in,
 * {@link io.nereid.engine.backend.StepOutput} out), what its KV cache costs
 * ({@link io.nereid.engine.backend.KvCacheSpec}), and the
 * {@link io.nereid.engine.backend.BackendProvider} through which the engine finds implementations
 * by name (the CPU backend in {@code io.nereid.engine.cpu}, CUDA in the {@code native} module).
 * Depends on {@code kvcache} (block copies) and the model description only.
 */
package io.nereid.engine.backend;
