/**
 * GGUF (llama.cpp's model file format, versions 2 and 3): {@link io.nereid.engine.gguf.GgufFile}
 * maps a file and validates its header, {@link io.nereid.engine.gguf.GgufMetadata} gives typed
 * access to its key/values, {@link io.nereid.engine.gguf.GgufTensorInfo} and
 * {@link io.nereid.engine.gguf.GgmlType} describe its tensors, and
 * {@link io.nereid.engine.gguf.GgufWriter} writes version 3 files. JDK only; every malformed input
 * is a {@link io.nereid.engine.gguf.GgufException}.
 */
package io.nereid.engine.gguf;
