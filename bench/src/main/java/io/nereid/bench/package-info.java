/**
 * GenAI-Perf-style load generator and analyzer. Talks HTTP only, never engine internals.
 * Empty until its issue lands; see the README status table. (Microbenchmarks of internal
 * classes live in each module's {@code src/jmh/java}.)
 */
package io.nereid.bench;
