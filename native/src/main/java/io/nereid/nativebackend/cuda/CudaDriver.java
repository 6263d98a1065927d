package io.nereid.nativebackend.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The CUDA driver API ({@code libcuda.so.1}, installed with the driver) through FFM downcalls: only the
 * functions the backend calls, bound by their versioned names ({@code cuMemAlloc_v2}), which every driver
 * since CUDA 3.2 exports. No JNI library, no CUDA toolkit needed at run time for this part.
 *
 * <p>Why FFM rather than the JavaCPP presets DESIGN.md names (shown by {@link PresetsProbe},
 * {@code PresetsProbeTest} and check.sh's presets line, not only argued): the presets' 1.5.14 JNI
 * libraries are built against CUDA 13.3 and reference 27 runtime functions that the GPU machine's 13.0
 * runtime lacks. They still load there (they are not linked to bind at load time) and the functions 13.0
 * has work, but a call to one of the 27 ends the JVM in the dynamic linker ("undefined symbol", exit 127),
 * which no Java code can catch; and they link the major version's sonames ({@code libcudart.so.13},
 * {@code libcublas.so.13}), so a CUDA 12 install cannot load them at all. FFM binds only the ~50
 * functions we call, by name, against any 12.x or 13.x install; a missing one is an exception when the
 * backend opens, before any request; and it carries no native code. One instance per JVM ({@link #load}); thread-safe (the
 * driver is), but a context must be current on the calling thread ({@link #makeCurrent}).
 */
final class CudaDriver {

    static final int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
    static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
    static final int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
    static final int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
    static final int CU_STREAM_NON_BLOCKING = 1;

    private static volatile CudaDriver instance;
    private static volatile String unavailable;

    final String library;
    private final MethodHandle cuInit;
    private final MethodHandle cuDriverGetVersion;
    private final MethodHandle cuDeviceGetCount;
    private final MethodHandle cuDeviceGet;
    private final MethodHandle cuDeviceGetName;
    private final MethodHandle cuDeviceGetAttribute;
    private final MethodHandle cuDeviceTotalMem;
    private final MethodHandle cuDevicePrimaryCtxRetain;
    private final MethodHandle cuDevicePrimaryCtxRelease;
    private final MethodHandle cuCtxSetCurrent;
    private final MethodHandle cuMemGetInfo;
    private final MethodHandle cuMemAlloc;
    private final MethodHandle cuMemFree;
    private final MethodHandle cuMemAllocHost;
    private final MethodHandle cuMemFreeHost;
    private final MethodHandle cuMemcpyHtoD;
    private final MethodHandle cuMemcpyDtoH;
    private final MethodHandle cuModuleLoadData;
    private final MethodHandle cuModuleGetFunction;
    private final MethodHandle cuModuleUnload;
    private final MethodHandle cuLaunchKernel;
    private final MethodHandle cuGetErrorName;
    private final MethodHandle cuStreamCreate;
    private final MethodHandle cuMemsetD8Async;
    private final MethodHandle cuStreamDestroy;
    private final MethodHandle cuStreamSynchronize;
    private final MethodHandle cuMemcpyHtoDAsync;
    private final MethodHandle cuMemcpyDtoHAsync;
    private final MethodHandle cuStreamBeginCapture;
    private final MethodHandle cuStreamEndCapture;
    private final MethodHandle cuGraphInstantiate;
    private final MethodHandle cuGraphLaunch;
    private final MethodHandle cuGraphExecDestroy;
    private final MethodHandle cuGraphDestroy;

    private CudaDriver(NativeLibraries.Library lib) {
        this.library = lib.foundAs();
        cuInit = lib.function("cuInit", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        cuDriverGetVersion = lib.function("cuDriverGetVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuDeviceGetCount = lib.function("cuDeviceGetCount", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuDeviceGet = lib.function("cuDeviceGet", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuDeviceGetName = lib.function("cuDeviceGetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        cuDeviceGetAttribute = lib.function("cuDeviceGetAttribute",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
        cuDeviceTotalMem = lib.function("cuDeviceTotalMem_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuDevicePrimaryCtxRetain = lib.function("cuDevicePrimaryCtxRetain",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuDevicePrimaryCtxRelease = lib.function("cuDevicePrimaryCtxRelease_v2", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        cuCtxSetCurrent = lib.function("cuCtxSetCurrent", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuMemGetInfo = lib.function("cuMemGetInfo_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        cuMemAlloc = lib.function("cuMemAlloc_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        cuMemFree = lib.function("cuMemFree_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        cuMemAllocHost = lib.function("cuMemAllocHost_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        cuMemFreeHost = lib.function("cuMemFreeHost", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuMemcpyHtoD = lib.function("cuMemcpyHtoD_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG));
        cuMemcpyDtoH = lib.function("cuMemcpyDtoH_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
        cuModuleLoadData = lib.function("cuModuleLoadData", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        cuModuleGetFunction = lib.function("cuModuleGetFunction", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        cuModuleUnload = lib.function("cuModuleUnload", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuLaunchKernel = lib.function("cuLaunchKernel", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        cuGetErrorName = lib.function("cuGetErrorName", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        cuStreamCreate = lib.function("cuStreamCreate", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuMemsetD8Async = lib.function("cuMemsetD8Async", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_BYTE, JAVA_LONG,
                ADDRESS));
        cuStreamDestroy = lib.function("cuStreamDestroy_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuStreamSynchronize = lib.function("cuStreamSynchronize", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuMemcpyHtoDAsync = lib.function("cuMemcpyHtoDAsync_v2",
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
        cuMemcpyDtoHAsync = lib.function("cuMemcpyDtoHAsync_v2",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
        cuStreamBeginCapture = lib.function("cuStreamBeginCapture_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        cuStreamEndCapture = lib.function("cuStreamEndCapture", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        // by its own name: the exported "cuGraphInstantiate" of a 12.x driver is the old five-argument form
        cuGraphInstantiate = lib.function("cuGraphInstantiateWithFlags",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
        cuGraphLaunch = lib.function("cuGraphLaunch", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        cuGraphExecDestroy = lib.function("cuGraphExecDestroy", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        cuGraphDestroy = lib.function("cuGraphDestroy", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    /**
     * The driver, loaded and initialised once; {@link CudaException} with the reason (no library, no
     * device, {@code cuInit} failed) when it cannot be.
     */
    static CudaDriver load() {
        CudaDriver d = instance;
        if (d != null) {
            return d;
        }
        synchronized (CudaDriver.class) {
            if (instance != null) {
                return instance;
            }
            if (unavailable != null) {
                throw new CudaException(unavailable);
            }
            List<String> tried = new ArrayList<>();
            var lib = NativeLibraries.open(List.of("libcuda.so.1", "libcuda.so"), tried);
            if (lib.isEmpty()) {
                unavailable = "no CUDA driver: libcuda.so.1 not found (tried " + String.join(", ", tried) + ")";
                throw new CudaException(unavailable);
            }
            try {
                CudaDriver driver = new CudaDriver(lib.get());
                driver.check((int) driver.cuInit.invoke(0), "cuInit");
                if (driver.deviceCount() == 0) {
                    throw new CudaException("the CUDA driver sees no device");
                }
                instance = driver;
                return driver;
            } catch (CudaException | UnsatisfiedLinkError e) {
                unavailable = e.getMessage();
                throw new CudaException(unavailable);
            } catch (Throwable t) {
                unavailable = "CUDA driver: " + t;
                throw new CudaException(unavailable);
            }
        }
    }

    /** Why the driver cannot be used here, or null when it can (loads it the first time). */
    static String unavailableReason() {
        try {
            load();
            return null;
        } catch (CudaException e) {
            return e.getMessage();
        }
    }

    /** Throws a {@link CudaException} naming {@code what} and the driver's error name unless {@code result} is CUDA_SUCCESS. */
    void check(int result, String what) {
        if (result != 0) {
            throw new CudaException(what + " failed: " + errorName(result) + " (" + result + ")");
        }
    }

    String errorName(int result) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            int r = (int) cuGetErrorName.invoke(result, p);
            return r == 0 ? p.get(ADDRESS, 0).reinterpret(256).getString(0) : "CUDA error " + result;
        } catch (Throwable t) {
            return "CUDA error " + result;
        }
    }

    int driverVersion() {
        return intOut(seg -> (int) cuDriverGetVersion.invoke(seg), "cuDriverGetVersion");
    }

    int deviceCount() {
        return intOut(seg -> (int) cuDeviceGetCount.invoke(seg), "cuDeviceGetCount");
    }

    int device(int ordinal) {
        return intOut(seg -> (int) cuDeviceGet.invoke(seg, ordinal), "cuDeviceGet");
    }

    String deviceName(int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment name = a.allocate(256);
            check((int) cuDeviceGetName.invoke(name, 256, device), "cuDeviceGetName");
            return name.getString(0);
        } catch (CudaException e) {
            throw e;
        } catch (Throwable t) {
            throw new CudaException("cuDeviceGetName: " + t);
        }
    }

    int attribute(int device, int attribute) {
        return intOut(seg -> (int) cuDeviceGetAttribute.invoke(seg, attribute, device), "cuDeviceGetAttribute");
    }

    long totalMemory(int device) {
        return longOut(seg -> (int) cuDeviceTotalMem.invoke(seg, device), "cuDeviceTotalMem");
    }

    /** The device's primary context (shared with cuBLAS and the runtime), retained. */
    MemorySegment retainPrimaryContext(int device) {
        return addressOut(seg -> (int) cuDevicePrimaryCtxRetain.invoke(seg, device), "cuDevicePrimaryCtxRetain");
    }

    void releasePrimaryContext(int device) {
        call(() -> (int) cuDevicePrimaryCtxRelease.invoke(device), "cuDevicePrimaryCtxRelease");
    }

    void makeCurrent(MemorySegment context) {
        call(() -> (int) cuCtxSetCurrent.invoke(context), "cuCtxSetCurrent");
    }

    /** Free and total device memory of the current context's device: {free, total}. */
    long[] memoryInfo() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment total = a.allocate(JAVA_LONG);
            long free = longOut(seg -> (int) cuMemGetInfo.invoke(seg, total), "cuMemGetInfo");
            return new long[] {free, total.get(JAVA_LONG, 0)};
        }
    }

    long alloc(long bytes) {
        return longOut(seg -> (int) cuMemAlloc.invoke(seg, Math.max(bytes, 1)), "cuMemAlloc of " + bytes + " bytes");
    }

    void free(long pointer) {
        if (pointer != 0) {
            call(() -> (int) cuMemFree.invoke(pointer), "cuMemFree");
        }
    }

    /**
     * Page-locked host memory of {@code bytes} (copies to and from it run at the bus's full speed, a pageable
     * buffer's go through the driver's own staging), until {@link #freeHost}.
     */
    MemorySegment allocHost(long bytes) {
        return addressOut(seg -> (int) cuMemAllocHost.invoke(seg, Math.max(bytes, 1)), "cuMemAllocHost of " + bytes
                + " bytes").reinterpret(Math.max(bytes, 1));
    }

    void freeHost(MemorySegment p) {
        if (!p.equals(MemorySegment.NULL)) {
            call(() -> (int) cuMemFreeHost.invoke(p), "cuMemFreeHost");
        }
    }

    void copyToDevice(long dst, MemorySegment src, long bytes) {
        call(() -> (int) cuMemcpyHtoD.invoke(dst, src, bytes), "cuMemcpyHtoD");
    }

    void copyToHost(MemorySegment dst, long src, long bytes) {
        call(() -> (int) cuMemcpyDtoH.invoke(dst, src, bytes), "cuMemcpyDtoH");
    }

    /** Loads a cubin or PTX image (NUL-terminated for PTX) into the current context. */
    MemorySegment loadModule(MemorySegment image) {
        return addressOut(seg -> (int) cuModuleLoadData.invoke(seg, image), "cuModuleLoadData");
    }

    MemorySegment function(MemorySegment module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cName = a.allocateFrom(name);
            return addressOut(seg -> (int) cuModuleGetFunction.invoke(seg, module, cName), "cuModuleGetFunction " + name);
        }
    }

    void unloadModule(MemorySegment module) {
        call(() -> (int) cuModuleUnload.invoke(module), "cuModuleUnload");
    }

    /**
     * Launches {@code function} on {@code stream} ({@link MemorySegment#NULL}: the default stream); {@code params}
     * holds one pointer per kernel argument (the driver copies the values before this returns).
     */
    void launch(MemorySegment function, int gx, int gy, int gz, int bx, int by, int bz, int sharedBytes,
            MemorySegment stream, MemorySegment params) {
        int r;
        try {
            r = (int) cuLaunchKernel.invokeExact(function, gx, gy, gz, bx, by, bz, sharedBytes, stream, params,
                    MemorySegment.NULL);
        } catch (Throwable t) {
            throw new CudaException("cuLaunchKernel: " + t);
        }
        check(r, "cuLaunchKernel");
    }

    /**
     * A stream of the current context that does not synchronise with the default stream
     * ({@code CU_STREAM_NON_BLOCKING}): what a graph is captured from, and launched on. Non-blocking, so that another
     * thread's work on the default stream (another model's weights being uploaded) neither waits for it nor spoils
     * a capture on it; the default stream's work is ordered before it only by synchronising the default stream.
     */
    MemorySegment createStream() {
        return addressOut(seg -> (int) cuStreamCreate.invoke(seg, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    }

    /** Queues {@code bytes} zero bytes at {@code dst} on {@code stream}. */
    void zeroAsync(long dst, long bytes, MemorySegment stream) {
        call(() -> (int) cuMemsetD8Async.invoke(dst, (byte) 0, bytes, stream), "cuMemsetD8Async");
    }

    void destroyStream(MemorySegment stream) {
        call(() -> (int) cuStreamDestroy.invoke(stream), "cuStreamDestroy");
    }

    /** Waits until everything queued on {@code stream} has run; a kernel's failure shows here. */
    void synchronize(MemorySegment stream) {
        call(() -> (int) cuStreamSynchronize.invoke(stream), "cuStreamSynchronize (a kernel failed, or the stream captures)");
    }

    /** Queues a copy from page-locked {@code src}, which must not change until the stream has run it. */
    void copyToDeviceAsync(long dst, MemorySegment src, long bytes, MemorySegment stream) {
        call(() -> (int) cuMemcpyHtoDAsync.invoke(dst, src, bytes, stream), "cuMemcpyHtoDAsync");
    }

    /** Queues a copy into page-locked {@code dst}, whose contents are there once the stream is synchronised. */
    void copyToHostAsync(MemorySegment dst, long src, long bytes, MemorySegment stream) {
        call(() -> (int) cuMemcpyDtoHAsync.invoke(dst, src, bytes, stream), "cuMemcpyDtoHAsync");
    }

    /**
     * Starts recording {@code stream}'s work into a graph instead of running it, in thread-local mode: an
     * allocation, a free or a synchronous copy on this thread while it records fails and spoils the capture.
     */
    void beginCapture(MemorySegment stream) {
        call(() -> (int) cuStreamBeginCapture.invoke(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    }

    /**
     * Ends the capture and returns the recorded graph; {@link CudaException} when the capture was spoilt (the
     * stream records no more either way).
     */
    MemorySegment endCapture(MemorySegment stream) {
        return addressOut(seg -> (int) cuStreamEndCapture.invoke(stream, seg), "cuStreamEndCapture");
    }

    /** An executable graph of {@code graph} (which may then be destroyed). */
    MemorySegment instantiate(MemorySegment graph) {
        return addressOut(seg -> (int) cuGraphInstantiate.invoke(seg, graph, 0L), "cuGraphInstantiateWithFlags");
    }

    /** Queues every launch of {@code exec} on {@code stream}, with the arguments they were recorded with. */
    void launchGraph(MemorySegment exec, MemorySegment stream) {
        call(() -> (int) cuGraphLaunch.invoke(exec, stream), "cuGraphLaunch");
    }

    void destroyGraphExec(MemorySegment exec) {
        call(() -> (int) cuGraphExecDestroy.invoke(exec), "cuGraphExecDestroy");
    }

    void destroyGraph(MemorySegment graph) {
        call(() -> (int) cuGraphDestroy.invoke(graph), "cuGraphDestroy");
    }

    @FunctionalInterface
    private interface Call {
        int run() throws Throwable;
    }

    @FunctionalInterface
    private interface OutCall {
        int run(MemorySegment out) throws Throwable;
    }

    private void call(Call c, String what) {
        int r;
        try {
            r = c.run();
        } catch (Throwable t) {
            throw new CudaException(what + ": " + t);
        }
        check(r, what);
    }

    private int intOut(OutCall c, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            call(() -> c.run(out), what);
            return out.get(JAVA_INT, 0);
        }
    }

    private MemorySegment addressOut(OutCall c, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            call(() -> c.run(out), what);
            return out.get(ADDRESS, 0);
        }
    }

    private long longOut(OutCall c, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            call(() -> c.run(out), what);
            return out.get(JAVA_LONG, 0);
        }
    }
}
