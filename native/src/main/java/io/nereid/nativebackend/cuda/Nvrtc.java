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
import java.util.Optional;

/**
 * NVRTC ({@code libnvrtc.so.13}, {@code .12} or CUDA 11's {@code .11.2}) through FFM: compiles CUDA C to a cubin for one compute
 * capability. Needs no GPU, only the library (with its {@code libnvrtc-builtins} beside it).
 */
final class Nvrtc {

    private static volatile Optional<Nvrtc> instance;
    private static volatile String unavailable;

    final String library;
    private final MethodHandle nvrtcVersion;
    private final MethodHandle nvrtcCreateProgram;
    private final MethodHandle nvrtcCompileProgram;
    private final MethodHandle nvrtcGetProgramLogSize;
    private final MethodHandle nvrtcGetProgramLog;
    private final MethodHandle nvrtcGetCUBINSize;
    private final MethodHandle nvrtcGetCUBIN;
    private final MethodHandle nvrtcDestroyProgram;
    private final MethodHandle nvrtcGetErrorString;

    private Nvrtc(NativeLibraries.Library lib) {
        library = lib.foundAs();
        nvrtcVersion = lib.function("nvrtcVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        nvrtcCreateProgram = lib.function("nvrtcCreateProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS,
                JAVA_INT, ADDRESS, ADDRESS));
        nvrtcCompileProgram = lib.function("nvrtcCompileProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
        nvrtcGetProgramLogSize = lib.function("nvrtcGetProgramLogSize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        nvrtcGetProgramLog = lib.function("nvrtcGetProgramLog", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        nvrtcGetCUBINSize = lib.function("nvrtcGetCUBINSize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        nvrtcGetCUBIN = lib.function("nvrtcGetCUBIN", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        nvrtcDestroyProgram = lib.function("nvrtcDestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        nvrtcGetErrorString = lib.function("nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    /** NVRTC if its library is found here, else empty ({@link #unavailableReason} says what was tried). */
    static synchronized Optional<Nvrtc> find() {
        if (instance == null) {
            List<String> tried = new ArrayList<>();
            var lib = NativeLibraries.open(List.of("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"), tried);
            try {
                instance = lib.map(Nvrtc::new);
            } catch (UnsatisfiedLinkError e) {
                instance = Optional.empty();
                unavailable = e.getMessage();
            }
            if (lib.isEmpty()) {
                unavailable = "libnvrtc not found (tried " + String.join(", ", tried) + ")";
            }
        }
        return instance;
    }

    static String unavailableReason() {
        find();
        return unavailable;
    }

    /** {major, minor}. */
    int[] version() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment major = a.allocate(JAVA_INT);
            MemorySegment minor = a.allocate(JAVA_INT);
            check((int) nvrtcVersion.invoke(major, minor), "nvrtcVersion", null);
            return new int[] {major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0)};
        } catch (CudaException e) {
            throw e;
        } catch (Throwable t) {
            throw new CudaException("nvrtcVersion: " + t);
        }
    }

    /**
     * Compiles {@code source} (named {@code name} in messages) with {@code options} (e.g.
     * {@code --gpu-architecture=sm_90}) to a cubin; a {@link CudaException} carrying the compiler's log when
     * it does not compile.
     */
    byte[] compile(String source, String name, List<String> options) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment prog = a.allocate(ADDRESS);
            check((int) nvrtcCreateProgram.invoke(prog, a.allocateFrom(source), a.allocateFrom(name), 0,
                    MemorySegment.NULL, MemorySegment.NULL), "nvrtcCreateProgram", null);
            MemorySegment p = prog.get(ADDRESS, 0);
            try {
                MemorySegment opts = a.allocate(ADDRESS, Math.max(1, options.size()));
                for (int i = 0; i < options.size(); i++) {
                    opts.setAtIndex(ADDRESS, i, a.allocateFrom(options.get(i)));
                }
                int r = (int) nvrtcCompileProgram.invoke(p, options.size(), opts);
                check(r, "nvrtcCompileProgram " + name, r == 0 ? null : log(a, p));
                MemorySegment size = a.allocate(JAVA_LONG);
                check((int) nvrtcGetCUBINSize.invoke(p, size), "nvrtcGetCUBINSize", null);
                MemorySegment cubin = a.allocate(size.get(JAVA_LONG, 0));
                check((int) nvrtcGetCUBIN.invoke(p, cubin), "nvrtcGetCUBIN", null);
                return cubin.toArray(JAVA_BYTE);
            } finally {
                nvrtcDestroyProgram.invoke(prog);
            }
        } catch (CudaException e) {
            throw e;
        } catch (Throwable t) {
            throw new CudaException("NVRTC: " + t);
        }
    }

    private String log(Arena a, MemorySegment program) throws Throwable {
        MemorySegment size = a.allocate(JAVA_LONG);
        nvrtcGetProgramLogSize.invoke(program, size);
        MemorySegment log = a.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
        nvrtcGetProgramLog.invoke(program, log);
        return log.getString(0);
    }

    private void check(int result, String what, String log) throws Throwable {
        if (result != 0) {
            MemorySegment s = (MemorySegment) nvrtcGetErrorString.invoke(result);
            throw new CudaException(what + " failed: " + s.reinterpret(256).getString(0) + (log == null ? "" : "\n" + log));
        }
    }
}
