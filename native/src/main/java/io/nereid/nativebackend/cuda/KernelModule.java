package io.nereid.nativebackend.cuda;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The kernels compiled for the device and loaded into its context: NVRTC compiles {@code kernels.cu}
 * for the device's compute capability once, the cubin is cached under {@code
 * $XDG_CACHE_HOME/nereid/cuda} (or {@code ~/.cache/nereid/cuda}) by a hash of the source, the options
 * and the NVRTC version, and later starts load it from there.
 */
final class KernelModule implements AutoCloseable {

    private final CudaDriver driver;
    private final MemorySegment module;
    private final Map<String, MemorySegment> functions = new HashMap<>();
    final String origin;   // "compiled by NVRTC x.y" or "cached cubin FILE", for the log

    private KernelModule(CudaDriver driver, MemorySegment module, String origin) {
        this.driver = driver;
        this.module = module;
        this.origin = origin;
    }

    /** Compiles (or takes from the cache) and loads the kernels for compute capability {@code major.minor}. */
    static KernelModule load(CudaDriver driver, int major, int minor) {
        KernelSource source = KernelSource.load();
        List<String> options = KernelSource.nvrtcOptions(major, minor);
        Nvrtc nvrtc = Nvrtc.find().orElse(null);
        String version = nvrtc == null ? "none" : nvrtc.version()[0] + "." + nvrtc.version()[1];
        Path cached = cacheDir().resolve(hash(source.text() + "\n" + options + "\n" + version) + ".cubin");
        byte[] cubin;
        String origin;
        if (Files.isRegularFile(cached)) {
            try {
                cubin = Files.readAllBytes(cached);
                origin = "cached cubin " + cached;
            } catch (IOException e) {
                throw new CudaException("cannot read " + cached + ": " + e.getMessage());
            }
        } else {
            if (nvrtc == null) {
                throw new CudaException("the kernels need NVRTC to compile: " + Nvrtc.unavailableReason());
            }
            cubin = nvrtc.compile(source.text(), "kernels.cu", options);
            origin = "compiled by NVRTC " + version + " (" + nvrtc.library + ") for sm_" + major + minor;
            try {
                Files.createDirectories(cached.getParent());
                Path tmp = Files.createTempFile(cached.getParent(), "kernels", ".tmp");
                Files.write(tmp, cubin);
                Files.move(tmp, cached, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                // no cache this time: the next start compiles again
            }
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment image = a.allocate(cubin.length + 1L);
            MemorySegment.copy(cubin, 0, image, ValueLayout.JAVA_BYTE, 0, cubin.length);
            KernelModule m = new KernelModule(driver, driver.loadModule(image), origin);
            for (String name : KernelSource.launched()) {
                m.functions.put(name, driver.function(m.module, name));
            }
            return m;
        }
    }

    MemorySegment function(String name) {
        MemorySegment f = functions.get(name);
        if (f == null) {
            throw new IllegalArgumentException("no kernel " + name);
        }
        return f;
    }

    static Path cacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("nereid").resolve("cuda");
    }

    static String hash(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 24);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        driver.unloadModule(module);
    }
}
