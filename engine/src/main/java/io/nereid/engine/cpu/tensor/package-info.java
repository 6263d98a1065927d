/**
 * Weight tensors in ggml's storage formats and the products the forward pass takes of them.
 *
 * <p>{@link io.nereid.engine.cpu.tensor.WeightMatrix} views a 2-D GGUF tensor ({@code ne0 = cols}
 * contiguous elements per row, {@code ne1 = rows}) in place, in its mapped file, and computes
 * {@code W·x} for a batch of tokens over any row range, so that the kernel pool can split one
 * product across threads; {@link io.nereid.engine.cpu.tensor.Quantizer} converts F32 values to
 * every supported format with llama.cpp's reference quantizers and decodes them.
 *
 * <p>Supported formats: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, with the block layouts of
 * llama.cpp's {@code ggml-common.h}. Each format has one small package-private class that is the
 * scalar specification ({@code Q4_0Format}, ...) and one Vector API twin ({@code Q4_0Vector}, ...)
 * at a {@link io.nereid.engine.cpu.kernel.VectorWidth}; {@code RowKernels} uses the Vector API set
 * ({@code VectorRowKernels}) when {@link io.nereid.engine.cpu.kernel.Kernels} chose the Vector API
 * for this JVM, and the scalar set otherwise. Tests hold the two to the same results at every
 * width.
 */
package io.nereid.engine.cpu.tensor;
