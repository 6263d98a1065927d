/**
 * The engine's command-line tools that work on model files rather than serve them: {@link
 * io.nereid.engine.tools.Quantize}, {@link io.nereid.engine.tools.BenchModel} and {@link
 * io.nereid.engine.tools.StructuredBench}, each with a typed entry point. Their command lines are
 * parsed in the gateway ({@code io.nereid.gateway.ToolCommands}, with picocli, as {@code serve} and
 * {@code generate} are), so the engine keeps to the JDK and kvcache.
 */
package io.nereid.engine.tools;
