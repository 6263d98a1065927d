/**
 * Native backends, built only with {@code -Pcuda}: the CUDA backend in {@code cuda}; TensorRT-LLM is
 * not started (see the README status table).
 */
package io.nereid.nativebackend;
