/**
 * The pure-Java CPU backend ({@code cpu}, registered through
 * {@link io.nereid.engine.cpu.CpuBackendProvider}): {@link io.nereid.engine.cpu.CpuModel} binds a
 * model's mapped weights in place ({@link io.nereid.engine.cpu.ModelWeights}),
 * {@link io.nereid.engine.cpu.CpuForward} runs one forward pass over a step of decode slices and
 * prefill chunks, {@link io.nereid.engine.cpu.KvStorage} holds the paged K/V as on-heap arrays in
 * the block ids the KV-cache manager hands out, and {@link io.nereid.engine.cpu.CpuBackend} ties
 * them to the engine's {@link io.nereid.engine.backend.Backend} seam. The math is in the
 * subpackages: {@code cpu.kernel} (element-wise and attention kernels, the kernel thread pool) and
 * {@code cpu.tensor} (weight formats and matrix products).
 *
 * <p>Threading: the engine thread calls a backend, one step at a time; inside a step the forward
 * pass splits rows and heads over a {@link io.nereid.engine.cpu.RangeRunner} (the kernel pool in
 * production, {@code RangeRunner.SERIAL} in tests) on disjoint outputs. Depends on
 * {@code backend}, {@code model}, {@code kvcache} and the JDK, including
 * {@code jdk.incubator.vector} when it is loaded.
 */
package io.nereid.engine.cpu;
