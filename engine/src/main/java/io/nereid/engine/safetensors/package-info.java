/**
 * Safetensors files (Hugging Face's weight format): a validating memory-mapped reader and a
 * writer. The engine computes with F32, F16 and BF16 tensors from them; see
 * {@link io.nereid.engine.model.HfModelLoader} for how a model directory becomes a model.
 */
package io.nereid.engine.safetensors;
