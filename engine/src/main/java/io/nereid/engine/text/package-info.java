/**
 * Streaming text of a generated sequence: {@link io.nereid.engine.text.IncrementalDetokenizer}
 * turns token ids into text deltas that never split a character, and
 * {@link io.nereid.engine.text.StopStringMatcher} cuts those deltas at the request's stop strings.
 * Both are per-sequence, single-threaded state owned by the engine thread; both are pure
 * (no I/O, no clocks), so their tests feed input in every fragmentation.
 */
package io.nereid.engine.text;
