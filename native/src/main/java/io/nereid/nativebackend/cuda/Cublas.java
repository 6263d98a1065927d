package io.nereid.nativebackend.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * cuBLAS ({@code libcublas.so.13} or {@code .12}) through FFM: one handle on the device's primary context,
 * and {@code cublasGemmEx} for the F16 / BF16 matrix products of prefill. One per backend; engine thread only.
 */
final class Cublas implements AutoCloseable {

    static final int CUDA_R_32F = 0;
    static final int CUDA_R_16F = 2;
    static final int CUDA_R_16BF = 14;
    static final int CUBLAS_COMPUTE_32F = 68;
    static final int CUBLAS_OP_N = 0;
    static final int CUBLAS_OP_T = 1;
    static final int CUBLAS_GEMM_DEFAULT = -1;

    final String library;
    private final MethodHandle cublasDestroy;
    private final MethodHandle cublasGemmEx;
    private final MethodHandle cublasSetStream;
    private final MethodHandle cublasSetWorkspace;
    private final MemorySegment handle;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment one;
    private final MemorySegment zero;

    private Cublas(NativeLibraries.Library lib) {
        library = lib.foundAs();
        MethodHandle create = lib.function("cublasCreate_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cublasDestroy = lib.function("cublasDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cublasGemmEx = lib.function("cublasGemmEx", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT,
                ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
        cublasSetStream = lib.function("cublasSetStream_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        cublasSetWorkspace = lib.function("cublasSetWorkspace_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG,
                JAVA_LONG));
        MemorySegment p = arena.allocate(ADDRESS);
        int r;
        try {
            r = (int) create.invoke(p);
        } catch (Throwable t) {
            throw new CudaException("cublasCreate: " + t);
        }
        if (r != 0) {
            throw new CudaException("cublasCreate failed: status " + r);
        }
        handle = p.get(ADDRESS, 0);
        one = arena.allocate(JAVA_FLOAT);
        one.set(JAVA_FLOAT, 0, 1f);
        zero = arena.allocate(JAVA_FLOAT);
        zero.set(JAVA_FLOAT, 0, 0f);
    }

    /** A handle on the current context; {@link CudaException} naming what was tried when cuBLAS is not there. */
    static Cublas open() {
        List<String> tried = new ArrayList<>();
        var lib = NativeLibraries.open(List.of("libcublas.so.13", "libcublas.so.12", "libcublas.so"), tried);
        if (lib.isEmpty()) {
            throw new CudaException("libcublas not found (tried " + String.join(", ", tried) + ")");
        }
        return new Cublas(lib.get());
    }

    /**
     * Runs the products on {@code stream} with {@code bytes} of device memory at {@code workspace} for cuBLAS's
     * scratch, so that a product recorded into a CUDA graph allocates nothing (NVIDIA's advice: 32 MiB on
     * Hopper, 4 MiB before). The stream first: setting it puts the library's own workspace back.
     */
    void bind(MemorySegment stream, long workspace, long bytes) {
        status(() -> (int) cublasSetStream.invoke(handle, stream), "cublasSetStream");
        status(() -> (int) cublasSetWorkspace.invoke(handle, workspace, bytes), "cublasSetWorkspace");
    }

    @FunctionalInterface
    private interface Status {
        int run() throws Throwable;
    }

    private static void status(Status call, String what) {
        int r;
        try {
            r = call.run();
        } catch (Throwable t) {
            throw new CudaException(what + ": " + t);
        }
        if (r != 0) {
            throw new CudaException(what + " failed: status " + r);
        }
    }

    /**
     * {@code Y (tokens x rows, F32, row-major) = X (tokens x cols) · Wᵀ} with {@code W} row-major
     * {@code rows x cols}, both of {@code type} (F16 or BF16), F32 accumulation; {@code accumulate} adds
     * the product to {@code Y} instead (beta 1). In cuBLAS's column-major terms:
     * {@code Yᵀ (rows x tokens) = op_T(W as cols x rows) · Xᵀ (cols x tokens) + beta Yᵀ}.
     */
    void gemm(long w, long x, long y, int rows, int cols, int tokens, int type, boolean accumulate) {
        int r;
        try {
            r = (int) cublasGemmEx.invoke(handle, CUBLAS_OP_T, CUBLAS_OP_N, rows, tokens, cols, one, w, type, cols, x,
                    type, cols, accumulate ? one : zero, y, CUDA_R_32F, rows, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        } catch (Throwable t) {
            throw new CudaException("cublasGemmEx: " + t);
        }
        if (r != 0) {
            throw new CudaException("cublasGemmEx (" + rows + " x " + cols + ", " + tokens + " tokens) failed: status " + r);
        }
    }

    @Override
    public void close() {
        try {
            cublasDestroy.invoke(handle);
        } catch (Throwable ignored) {
            // freeing at shutdown: nothing to do about a failure
        }
        arena.close();
    }
}
