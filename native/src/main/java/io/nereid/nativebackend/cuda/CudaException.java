package io.nereid.nativebackend.cuda;

/** A CUDA, NVRTC or cuBLAS call that failed, or a CUDA library that is not there; the message names the call and the error. */
public final class CudaException extends RuntimeException {

    public CudaException(String message) {
        super(message);
    }
}
