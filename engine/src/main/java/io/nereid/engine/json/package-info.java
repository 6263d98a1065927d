/**
 * A small strict JSON reader ({@link io.nereid.engine.json.Json}) for the model files the engine
 * reads itself: {@code config.json}, {@code tokenizer.json}, {@code tokenizer_config.json},
 * {@code model.safetensors.index.json}. It exists because the engine may not depend on Jackson
 * (DESIGN.md section 1); the gateway's HTTP JSON is not its business. Malformed input is a
 * {@link io.nereid.engine.json.JsonException} naming the offset and the reason.
 *
 * <p>Stateless and thread-safe; the values it returns are unmodifiable. JDK only.
 */
package io.nereid.engine.json;
