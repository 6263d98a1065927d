/**
 * The engine: model runtime, tokenizers, chat templates, sampling, scheduler and the Engine API.
 * Empty until its issues land; see the README status table. Depends on {@code kvcache} and the
 * JDK only (checked by {@code ArchitectureTest}).
 */
package io.nereid.engine;
