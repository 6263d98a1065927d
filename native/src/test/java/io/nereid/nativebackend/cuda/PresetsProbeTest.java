package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Why the backend binds CUDA with FFM and not the JavaCPP presets, shown rather than argued: the presets'
 * 1.5.14 JNI libraries (built for CUDA 13.3) against a CUDA 13.0 runtime, as the GPU machine has it
 * (here the toolkit's own {@code libcudart.so.13}; the emulator stands in for {@code libcuda.so.1}).
 * They load, and a function 13.0 has works; a function it lacks ends the JVM in the dynamic linker (exit
 * 127, "undefined symbol"), which no Java code can catch. Each run is a process of its own
 * ({@code DeviceCheck presets}, as check.sh runs it on the GPU machine). Runs in the cuda-emulator
 * execution, where a CUDA 13.0 runtime is installed (skipped elsewhere).
 */
@Tag("gpu")
class PresetsProbeTest {

    private static final Path PRESETS = Path.of("target", "device-lib", "javacpp");

    private static Optional<Path> runtime() {
        List<Path> candidates = new ArrayList<>();
        String home = System.getenv("CUDA_HOME");
        if (home != null) {
            candidates.add(Path.of(home, "lib64"));
            candidates.add(Path.of(home, "lib"));
        }
        try (Stream<Path> dirs = Files.list(Path.of("/usr/local"))) {
            dirs.filter(d -> d.getFileName().toString().startsWith("cuda")).sorted().forEach(d -> {
                candidates.add(d.resolve("lib64"));
                candidates.add(d.resolve("lib"));
            });
        } catch (IOException e) {
            // no /usr/local: no toolkit
        }
        return candidates.stream().filter(d -> Files.exists(d.resolve("libcudart.so.13"))).findFirst();
    }

    private record Run(int exit, String output, String json) {
    }

    private static Run probe(Path dir, Path runtime, String... extra) throws Exception {
        Path out = dir.resolve("presets-" + extra.length + ".json");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Dorg.bytedeco.javacpp.cachedir=" + dir.resolve("cache"),
                "-cp", System.getProperty("java.class.path") + java.io.File.pathSeparator + PRESETS.toAbsolutePath() + "/*",
                DeviceCheck.class.getName(), "presets", "--out", out.toString()));
        command.addAll(List.of(extra));
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
        b.environment().put("LD_LIBRARY_PATH", runtime + ":" + Path.of(System.getProperty(CudaEmulator.PROPERTY), "lib")
                .toAbsolutePath());
        Process p = b.start();
        String output = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the probe ended");
        return new Run(p.exitValue(), output, Files.exists(out) ? Files.readString(out) : "");
    }

    @Test
    void thePresetsLoadAgainstCuda130ButACallToANewerFunctionKillsTheProcess(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(CudaEmulator.requested(), "runs in the cuda-emulator execution only");
        CudaEmulator.prepare();
        Optional<Path> runtime = runtime();
        Assumptions.assumeTrue(runtime.isPresent(), "no CUDA 13 runtime (libcudart.so.13) installed here");
        Assumptions.assumeTrue(Files.isDirectory(PRESETS), PRESETS + " missing (the build copies the presets there)");

        Run plain = probe(dir, runtime.get());
        assertEquals(0, plain.exit(), plain.output());
        assertTrue(plain.json().contains("\"cudart\":\"loaded\""), plain.json());
        assertTrue(plain.json().contains("\"nvrtc\":\"loaded\""), plain.json());
        int version = Integer.parseInt(plain.json().replaceAll(".*\"runtime_version\":(\\d+).*", "$1").strip());
        assertTrue(version >= 13000 && version < 14000, plain.json());

        // cudaFuncGetParamCount came with CUDA 13.1; the 1.5.14 presets reference it (and 26 others 13.0 lacks)
        Run newer = probe(dir, runtime.get(), "--call", "cudaFuncGetParamCount");
        if (version < 13010) {
            assertEquals(127, newer.exit(), newer.output());
            assertTrue(newer.output().contains("undefined symbol: cudaFuncGetParamCount"), newer.output());
            assertTrue(newer.json().isEmpty(), "the process ended before it wrote anything");
        } else {
            assertEquals(0, newer.exit(), newer.output());
        }
    }
}
