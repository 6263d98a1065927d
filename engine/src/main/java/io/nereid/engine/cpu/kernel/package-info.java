/**
 * The element-wise and attention kernels of the CPU forward pass and the threads that run them.
 *
 * <p>{@link io.nereid.engine.cpu.kernel.KernelSupport} is the small interface of kernels (dot,
 * axpy, RMS norm, softmax, SiLU, RoPE, paged attention over F32 or F16 K/V);
 * {@link io.nereid.engine.cpu.kernel.ScalarKernels} is its reference and fallback, and the
 * package-private {@code VectorMathKernels} its Vector API implementation at a
 * {@link io.nereid.engine.cpu.kernel.VectorWidth} of 128, 256 or 512 bits (Lucene's vectorization
 * provider). {@link io.nereid.engine.cpu.kernel.Kernels} decides once per JVM, for these kernels
 * and for the weight-format kernels of {@code cpu.tensor}, whether the Vector API is used
 * ({@code -Dnereid.kernels=auto|scalar}); it never fails, and logs one INFO line with the reason
 * when it falls back. Tests hold the vector kernels to the scalar ones at every width.
 * {@link io.nereid.engine.cpu.kernel.RopeTables} precomputes the rotary angles
 * {@code rope} reads; {@link io.nereid.engine.cpu.kernel.ComputePool} is the dedicated kernel
 * thread pool.
 *
 * <p>Threading: kernels are stateless and may run concurrently on disjoint outputs; the pool is
 * thread-safe and closed with its backend. JDK only, plus {@code jdk.incubator.vector}, which only
 * the vector classes touch and only once the module is known to be present.
 */
package io.nereid.engine.cpu.kernel;
