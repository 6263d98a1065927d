package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The CUDA emulator catches what a GPU would reject or silently get wrong, so that a backend passing on
 * it has passed something (runs only in the native module's cuda-emulator execution): a kernel given a
 * host pointer, a copy or free outside an allocation, a call from a thread with no current context, a
 * block larger than the hardware's, memory read before it was written (NaN); and a kernel and cuBLAS
 * compute what they should through the backend's own bindings.
 */
@Tag("gpu")
class CudaEmulatorTest {

    private static CudaDriver driver;
    private static MemorySegment context;
    private static KernelModule kernels;
    private static final Arena ARENA = Arena.ofShared();

    @BeforeAll
    static void emulator() {
        Assumptions.assumeTrue(CudaEmulator.requested(), "runs in the cuda-emulator execution only");
        CudaEmulator.prepare();
        String reason = CudaDriver.unavailableReason();
        Assumptions.assumeTrue(reason == null, "the emulator was not built (" + reason + ")");
        driver = CudaDriver.load();
        Assumptions.assumeTrue(driver.deviceName(0).contains("emulator"), "a real driver was found first");
        context = driver.retainPrimaryContext(0);
        driver.makeCurrent(context);
        kernels = KernelModule.load(driver, 9, 0);
    }

    @AfterAll
    static void release() {
        if (kernels != null) {
            driver.makeCurrent(context);
            kernels.close();
            driver.releasePrimaryContext(0);
        }
    }

    private static long upload(float... values) {
        long p = driver.alloc(4L * values.length);
        MemorySegment s = ARENA.allocate(4L * values.length, 8);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_FLOAT, 0, values.length);
        driver.copyToDevice(p, s, 4L * values.length);
        return p;
    }

    private static float[] download(long p, int n) {
        MemorySegment s = ARENA.allocate(4L * n, 8);
        driver.copyToHost(s, p, 4L * n);
        return s.toArray(ValueLayout.JAVA_FLOAT);
    }

    /** x[i] += y[i] (add_bias over one row of n). */
    private static void launchAdd(long x, long y, int n) {
        launchAdd(x, y, n, MemorySegment.NULL);
    }

    /** x[i] += y[i] on {@code stream}. */
    private static void launchAdd(long x, long y, int n, MemorySegment stream) {
        KernelArgs a = new KernelArgs(ARENA).reset().ptr(x).ptr(y).i32(n).i32(1);
        LaunchGeometry g = LaunchGeometry.elementwise(n);
        driver.launch(kernels.function("add_bias"), g.gridX(), g.gridY(), 1, g.blockX(), 1, 1, 0, stream, a.pointers());
    }

    @Test
    void aKernelRunsAndFreshMemoryIsNaN() {
        driver.makeCurrent(context);
        long x = upload(1, 2, 3);
        long y = upload(10, 20, 30);
        launchAdd(x, y, 3);
        assertArrayEquals(new float[] {11, 22, 33}, download(x, 3));
        long fresh = driver.alloc(8);
        float[] garbage = download(fresh, 2);
        assertTrue(Float.isNaN(garbage[0]) && Float.isNaN(garbage[1]), "unwritten device memory reads as NaN");
        for (long p : new long[] {x, y, fresh}) {
            driver.free(p);
        }
    }

    @Test
    void aHostPointerOrACopyPastTheEndIsRefused() {
        driver.makeCurrent(context);
        long x = upload(1, 2, 3);
        MemorySegment host = ARENA.allocate(64, 8);
        CudaException e = assertThrows(CudaException.class, () -> launchAdd(x, host.address(), 3));
        assertTrue(e.getMessage().contains("CUDA_ERROR_INVALID_VALUE"), e.getMessage());
        e = assertThrows(CudaException.class, () -> driver.copyToDevice(x + 4, host, 12));
        assertTrue(e.getMessage().contains("cuMemcpyHtoD"), e.getMessage());
        e = assertThrows(CudaException.class, () -> driver.free(x + 4));
        assertTrue(e.getMessage().contains("cuMemFree"), e.getMessage());
        assertArrayEquals(new float[] {1, 2, 3}, download(x, 3), "nothing was written");
        driver.free(x);
    }

    @Test
    void aThreadWithoutTheContextIsRefused() throws Exception {
        CudaException e = CompletableFuture.supplyAsync(() -> assertThrows(CudaException.class, () -> driver.alloc(16))).get();
        assertTrue(e.getMessage().contains("CUDA_ERROR_INVALID_CONTEXT"), e.getMessage());
    }

    @Test
    void cublasMultipliesAsTheBackendAsks() {
        driver.makeCurrent(context);
        // W (rows 3 x cols 2) and X (tokens 2 x cols 2) as F16, Y = X · Wᵀ (tokens x rows).
        short[] w = {f16(1), f16(2), f16(3), f16(4), f16(5), f16(6)};
        short[] x = {f16(1), f16(0.5f), f16(-1), f16(2)};
        long dw = driver.alloc(2L * w.length);
        long dx = driver.alloc(2L * x.length);
        long dy = driver.alloc(4L * 6);
        MemorySegment s = ARENA.allocate(64, 8);
        MemorySegment.copy(w, 0, s, ValueLayout.JAVA_SHORT, 0, w.length);
        driver.copyToDevice(dw, s, 2L * w.length);
        MemorySegment.copy(x, 0, s, ValueLayout.JAVA_SHORT, 0, x.length);
        driver.copyToDevice(dx, s, 2L * x.length);
        try (Cublas blas = Cublas.open()) {
            blas.gemm(dw, dx, dy, 3, 2, 2, Cublas.CUDA_R_16F, false);
            assertArrayEquals(new float[] {2, 5, 8, 3, 5, 7}, download(dy, 6));
            blas.gemm(dw, dx, dy, 3, 2, 2, Cublas.CUDA_R_16F, true);   // beta 1: added to what is there
        }
        assertArrayEquals(new float[] {4, 10, 16, 6, 10, 14}, download(dy, 6));
        for (long p : new long[] {dw, dx, dy}) {
            driver.free(p);
        }
    }

    @Test
    void aBlockBeyondTheHardwaresLimitIsRefused() {
        driver.makeCurrent(context);
        long x = upload(1);
        KernelArgs a = new KernelArgs(ARENA).reset().ptr(x).ptr(x).i32(1).i32(1);
        CudaException e = assertThrows(CudaException.class,
                () -> driver.launch(kernels.function("add_bias"), 1, 1, 1, 2048, 1, 1, 0, MemorySegment.NULL, a.pointers()));
        assertTrue(e.getMessage().contains("CUDA_ERROR_INVALID_VALUE"), e.getMessage());
        assertEquals(1f, download(x, 1)[0]);
        driver.free(x);
    }

    @Test
    void aCapturedGraphReplaysItsLaunchesWithTheArgumentsOfTheirRecording() {
        driver.makeCurrent(context);
        MemorySegment stream = driver.createStream();
        long x = upload(1, 2, 3);
        long y = upload(10, 20, 30);
        long z = upload(100, 200, 300);
        driver.beginCapture(stream);
        launchAdd(x, y, 3, stream);
        launchAdd(x, z, 3, stream);   // the same KernelArgs memory rewritten: the graph keeps each launch's own values
        MemorySegment graph = driver.endCapture(stream);
        assertArrayEquals(new float[] {1, 2, 3}, download(x, 3), "recorded, not run");
        MemorySegment exec = driver.instantiate(graph);
        driver.destroyGraph(graph);
        driver.launchGraph(exec, stream);
        driver.launchGraph(exec, stream);
        driver.synchronize(stream);
        assertArrayEquals(new float[] {221, 442, 663}, download(x, 3));
        driver.free(z);   // a buffer the graph was recorded with, gone: its replay fails, as on a GPU it would fault
        driver.launchGraph(exec, stream);   // queued: the fault shows when the stream is synchronised
        CudaException e = assertThrows(CudaException.class, () -> driver.synchronize(stream));
        assertTrue(e.getMessage().contains("cuStreamSynchronize"), e.getMessage());
        driver.destroyGraphExec(exec);
        driver.destroyStream(stream);
        driver.free(x);
        driver.free(y);
    }

    @Test
    void queuedWorkRunsAtASynchronisationAndAsyncCopiesTouchTheHostOnlyThen() {
        driver.makeCurrent(context);
        MemorySegment stream = driver.createStream();
        MemorySegment pinned = driver.allocHost(16);
        long x = upload(1, 2, 3);
        long y = upload(10, 20, 30);
        launchAdd(x, y, 3, stream);
        pinned.set(ValueLayout.JAVA_FLOAT, 0, -1f);
        driver.copyToHostAsync(pinned, x, 12, stream);
        assertEquals(-1f, pinned.get(ValueLayout.JAVA_FLOAT, 0), "nothing written before the stream is synchronised");
        driver.synchronize(stream);
        assertArrayEquals(new float[] {11, 22, 33}, pinned.asSlice(0, 12).toArray(ValueLayout.JAVA_FLOAT));
        // an upload reads its source when it runs: a host that rewrites it first sends what it wrote last
        pinned.set(ValueLayout.JAVA_FLOAT, 0, 5f);
        driver.copyToDeviceAsync(x, pinned, 4, stream);
        pinned.set(ValueLayout.JAVA_FLOAT, 0, 6f);
        driver.synchronize(stream);
        assertEquals(6f, download(x, 1)[0]);
        CudaException e = assertThrows(CudaException.class, () -> driver.copyToHostAsync(ARENA.allocate(16, 8), x, 4, stream));
        assertTrue(e.getMessage().contains("cuMemcpyDtoHAsync"), e.getMessage());
        // the stream is a non-blocking one: the default stream's work neither waits for it nor spoils its capture
        launchAdd(x, y, 1, stream);
        assertEquals(6f, download(x, 1)[0], "a synchronous copy does not wait for a non-blocking stream");
        driver.synchronize(stream);
        assertEquals(16f, download(x, 1)[0]);
        driver.beginCapture(stream);
        launchAdd(y, y, 1);   // on the default stream
        driver.destroyGraph(driver.endCapture(stream));
        assertEquals(20f, download(y, 1)[0]);
        driver.destroyStream(stream);
        driver.freeHost(pinned);
        driver.free(x);
        driver.free(y);
    }

    @Test
    void anAllocationWhileCapturingSpoilsTheCapture() {
        driver.makeCurrent(context);
        MemorySegment stream = driver.createStream();
        long x = upload(1);
        driver.beginCapture(stream);
        launchAdd(x, x, 1, stream);
        CudaException e = assertThrows(CudaException.class, () -> driver.alloc(16));
        assertTrue(e.getMessage().contains("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"), e.getMessage());
        e = assertThrows(CudaException.class, () -> driver.endCapture(stream));
        assertTrue(e.getMessage().contains("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"), e.getMessage());
        assertEquals(1f, download(x, 1)[0], "nothing ran");
        driver.destroyStream(stream);
        driver.free(x);
    }

    @Test
    void cublasRecordsIntoAGraphOnlyWithItsOwnWorkspace() {
        driver.makeCurrent(context);
        MemorySegment stream = driver.createStream();
        short[] w = {f16(1), f16(2)};
        long dw = driver.alloc(4);
        long dy = driver.alloc(4);
        long ws = driver.alloc(1 << 20);
        MemorySegment s = ARENA.allocate(16, 8);
        MemorySegment.copy(w, 0, s, ValueLayout.JAVA_SHORT, 0, 2);
        driver.copyToDevice(dw, s, 4);
        try (Cublas blas = Cublas.open()) {
            blas.bind(stream, 0, 0);   // no workspace of ours: cuBLAS would allocate while capturing
            driver.beginCapture(stream);
            assertThrows(CudaException.class, () -> blas.gemm(dw, dw, dy, 1, 2, 1, Cublas.CUDA_R_16F, false));
            assertThrows(CudaException.class, () -> driver.endCapture(stream));
            blas.bind(stream, ws, 1 << 20);
            driver.beginCapture(stream);
            blas.gemm(dw, dw, dy, 1, 2, 1, Cublas.CUDA_R_16F, false);   // 1 + 4
            MemorySegment graph = driver.endCapture(stream);
            MemorySegment exec = driver.instantiate(graph);
            driver.destroyGraph(graph);
            driver.launchGraph(exec, stream);
            driver.synchronize(stream);
            assertEquals(5f, download(dy, 1)[0]);
            driver.destroyGraphExec(exec);
        }
        driver.destroyStream(stream);
        for (long p : new long[] {dw, dy, ws}) {
            driver.free(p);
        }
    }

    private static short f16(float v) {
        return Float.floatToFloat16(v);
    }
}
