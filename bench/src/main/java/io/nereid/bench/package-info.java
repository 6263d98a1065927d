/**
 * GenAI-Perf-style load generator and analyzer ({@code bin/nereid bench}). Talks HTTP only, never
 * engine internals: {@link io.nereid.bench.LoadGenerator} records every request's send time and
 * each SSE chunk's arrival, {@link io.nereid.bench.RunMetrics} turns the recordings into GenAI-Perf's
 * metrics, and the exporters write the console table, GenAI-Perf's JSON/CSV and an HTML report.
 * (Microbenchmarks of internal classes live in each module's {@code src/jmh/java}.)
 */
package io.nereid.bench;
