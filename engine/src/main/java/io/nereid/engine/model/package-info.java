/**
 * A model as the engine opens it, before any backend binds it:
 * {@link io.nereid.engine.model.ModelSource} holds the hyper-parameters
 * ({@link io.nereid.engine.model.ModelConfig}, {@link io.nereid.engine.model.Architecture},
 * {@link io.nereid.engine.model.RopeScaling}), the tokenizer, the chat template and the
 * memory-mapped tensors ({@link io.nereid.engine.model.TensorSource}, by GGUF name), read from a
 * GGUF file or a Hugging Face directory ({@code config.json}, safetensors, {@code tokenizer.json}).
 * A file that cannot be served is a {@link io.nereid.engine.model.ModelLoadException} naming the
 * file, the tensor or key, and the reason. Also here, as tools on the same types:
 * {@link io.nereid.engine.model.ModelQuantizer} ({@code bin/nereid quantize}) and
 * {@link io.nereid.engine.model.RandomModelWriter} (seeded random models for tests and demos).
 *
 * <p>Threading: loading runs on the caller's thread; a loaded model is immutable and may be shared
 * until it is closed, which unmaps its files. Depends on {@code gguf}, {@code safetensors},
 * {@code json}, {@code tokenizer}, {@code template} and, for quantizing, {@code cpu.tensor}.
 */
package io.nereid.engine.model;
