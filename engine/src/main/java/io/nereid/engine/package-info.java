/**
 * The engine: everything that serves a model, and no HTTP. Front ends (the gateway, the
 * benchmarks) use {@code api} only: {@link io.nereid.engine.api.Engines#open} opens a model on a
 * backend and starts an {@link io.nereid.engine.api.Engine} over it. Inside, {@code core} is the
 * scheduler and its engine thread; {@code backend} is the seam to compute, with the pure-Java
 * backend in {@code cpu} (its kernels in {@code cpu.kernel}, weight formats in
 * {@code cpu.tensor}); {@code sampling} picks tokens; {@code tokenizer}, {@code template} (chat
 * templates) and {@code text} (incremental detokenizing, stop strings) go between text and
 * tokens; {@code model}, {@code gguf}, {@code safetensors}, {@code mmap} and {@code json} open
 * model files, and {@code tools} holds the command-line tools on them. Depends on {@code kvcache}
 * and the JDK only (checked by {@code ArchitectureTest}).
 */
package io.nereid.engine;
