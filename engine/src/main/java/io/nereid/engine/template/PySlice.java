package io.nereid.engine.template;

/** The key of {@code x[start:stop:step]}; each bound may be null (omitted) or {@code None}. Immutable. */
record PySlice(Object start, Object stop, Object step) { }
