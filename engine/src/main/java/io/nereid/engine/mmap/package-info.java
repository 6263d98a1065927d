/**
 * Read-only memory mapping of model files through FFM, shared by the GGUF and safetensors readers,
 * and huge-page-backed off-heap memory for the weights' repacked copies ({@link io.nereid.engine.mmap.HugePages}).
 */
package io.nereid.engine.mmap;
