/**
 * The CUDA backend ({@code --backend cuda}, {@code -Pcuda}): the driver API, NVRTC and cuBLAS bound
 * through FFM ({@link io.nereid.nativebackend.cuda.CudaDriver} says why not the JavaCPP presets), kernels
 * as CUDA C in {@code kernels.cu} compiled at start-up for the device, and the llama forward pass over
 * the engine's paged KV cache. Written, not yet run on a GPU: {@code native/device/check.sh} validates
 * it on one.
 */
package io.nereid.nativebackend.cuda;
