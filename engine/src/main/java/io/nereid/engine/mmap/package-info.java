/** Read-only memory mapping of model files through FFM, shared by the GGUF and safetensors readers. */
package io.nereid.engine.mmap;
