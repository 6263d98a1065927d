/**
 * CUDA and TensorRT-LLM backends bound through JavaCPP; built only with {@code -Pcuda}.
 * Empty until those backends land; see the README status table.
 */
package io.nereid.nativebackend;
