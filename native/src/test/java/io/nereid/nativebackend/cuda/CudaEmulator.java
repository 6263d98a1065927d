package io.nereid.nativebackend.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Nereid's CUDA emulator for the tests: the driver API, NVRTC and cuBLAS functions the backend binds,
 * implemented on the CPU ({@code emulator/emulator.cpp}), with {@code kernels.cu} compiled for the host by
 * a C++ compiler ({@code emulator/cuda_emu.h} gives it threads, barriers and shuffles as fibers). One
 * shared library, exposed as {@code libcuda.so.1}, {@code libnvrtc.so.13} and {@code libcublas.so.13}.
 *
 * <p>The native module's {@code cuda-emulator} test execution sets {@value #PROPERTY} to a directory and
 * {@code NEREID_CUDA_LIB_PATH} to its {@code lib} folder, and runs the gpu-tagged tests; their
 * {@code @BeforeAll} calls {@link #prepare} before anything loads the driver, so the whole CUDA backend
 * (argument packing, launches, memory, cuBLAS's operands, the forward pass) runs on this machine. Without
 * the property (the default execution, the GPU machine's check.sh) {@link #prepare} does nothing. Without
 * a C++ compiler nothing is built and the gpu tests skip as they do without a driver.
 */
final class CudaEmulator {

    static final String PROPERTY = "nereid.cuda.emulator";
    static final String LIBRARY = "libnereid-cuda-emulator.so";
    static final List<String> SONAMES = List.of("libcuda.so.1", "libnvrtc.so.13", "libcublas.so.13");

    private static boolean prepared;

    private CudaEmulator() {
    }

    /** True when this JVM runs the tests on the emulator (the property is set). */
    static boolean requested() {
        return System.getProperty(PROPERTY) != null;
    }

    /** Builds the emulator into the property's directory, once per JVM; does nothing when the property is unset. */
    static synchronized void prepare() {
        if (prepared || !requested()) {
            return;
        }
        prepared = true;
        Path dir = Path.of(System.getProperty(PROPERTY)).toAbsolutePath();
        Optional<Path> cxx = compiler();
        if (cxx.isEmpty()) {
            System.err.println("nereid cuda emulator: no C++ compiler (c++ or g++) on the PATH: not built, the gpu tests skip");
            return;
        }
        String libPath = System.getenv("NEREID_CUDA_LIB_PATH");
        if (libPath == null || !NativeLibraries.userDirectories(libPath).contains(dir.resolve("lib"))) {
            throw new IllegalStateException(PROPERTY + " is set but NEREID_CUDA_LIB_PATH (" + libPath + ") does not name "
                    + dir.resolve("lib"));
        }
        try {
            build(cxx.get(), dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * For a gpu-tagged test's {@code @BeforeAll}: prepares the emulator (in its execution) and skips the test class
     * unless a CUDA driver, real or emulated, is there.
     */
    static void assumeDevice() {
        prepare();
        String reason = CudaDriver.unavailableReason();
        org.junit.jupiter.api.Assumptions.assumeTrue(reason == null, "no CUDA device here (" + reason + "): skipped");
    }

    static Optional<Path> compiler() {
        return KernelSourceTest.executable("c++").or(() -> KernelSourceTest.executable("g++"));
    }

    /** Writes the sources into {@code dir/src}, compiles {@code dir/lib/}{@value #LIBRARY} and links the sonames to it. */
    static Path build(Path cxx, Path dir) throws IOException, InterruptedException {
        Path src = Files.createDirectories(dir.resolve("src"));
        Path lib = Files.createDirectories(dir.resolve("lib"));
        String kernels = KernelSource.load().text();
        Files.writeString(src.resolve("kernels.cu"), kernels);
        for (String f : List.of("cuda_emu.h", "emulator.cpp")) {
            try (InputStream in = CudaEmulator.class.getResourceAsStream("emulator/" + f)) {
                if (in == null) {
                    throw new IllegalStateException("emulator/" + f + " is not on the test class path");
                }
                Files.write(src.resolve(f), in.readAllBytes());
            }
        }
        Files.writeString(src.resolve("kernels_host.cpp"), registry(kernels));
        Path so = lib.resolve(LIBRARY);
        Path tmp = lib.resolve(LIBRARY + ".tmp");
        List<String> command = List.of(cxx.toString(), "-std=c++17", "-O2", "-g", "-shared", "-fPIC", "-fvisibility=hidden",
                "-Wno-unknown-pragmas", "-o", tmp.toString(), "kernels_host.cpp");
        Process p = new ProcessBuilder(command).directory(src.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("the CUDA emulator does not compile: " + command + "\n" + out);
        }
        Files.move(tmp, so, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        for (String soname : SONAMES) {
            Path link = lib.resolve(soname);
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, so.getFileName());
        }
        return so;
    }

    /** The host translation unit: the shim, kernels.cu, the emulator, and a table of every kernel by name. */
    static String registry(String kernels) {
        StringBuilder b = new StringBuilder();
        b.append("// Generated by CudaEmulator: kernels.cu for the host, the emulator, and the kernels by name.\n");
        b.append("#include \"cuda_emu.h\"\n#include \"kernels.cu\"\n#include \"emulator.cpp\"\n\n");
        b.append("extern \"C\" const unsigned long long emu_kernels_source_hash = 0x")
                .append(String.format("%016x", fnv1a(kernels))).append("ULL;\n");
        b.append("extern \"C\" const EmuKernel emu_kernels[] = {\n");
        for (String name : new KernelSource(kernels).kernelNames()) {
            b.append("    {\"").append(name).append("\", [](void** p) { emu_invoke(").append(name)
                    .append(", p); }, [](void** p) { return emu_check(").append(name)
                    .append(", p); }, [](void** p) { return emu_save(").append(name).append(", p); }},\n");
        }
        b.append("    {nullptr, nullptr, nullptr, nullptr}};\n");
        return b.toString();
    }

    /** FNV-1a, 64 bits, over the UTF-8 bytes: the emulator's NVRTC accepts only the source it was built from. */
    static long fnv1a(String text) {
        long h = 0xcbf29ce484222325L;
        for (byte x : text.getBytes(StandardCharsets.UTF_8)) {
            h ^= x & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }
}
