package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel source against the host: its launch constants and type ids are the host's, every kernel the
 * backend launches is defined, and the whole file compiles for the GPUs we target — with nvcc where the
 * CUDA toolkit is installed (no GPU needed), and with NVRTC, as the backend compiles it, where that
 * library is present. Each compiler's part skips, saying so, where it is absent.
 */
class KernelSourceTest {

    @Test
    void theSourcesConstantsAndKernelsAreTheHosts() {
        KernelSource s = KernelSource.load();   // checks the #defines against LaunchGeometry and GgmlType ids
        assertEquals(LaunchGeometry.GEMV_TOKENS, s.constant("GEMV_TOKENS"));
        assertTrue(s.kernelNames().containsAll(KernelSource.launched()), "missing: "
                + KernelSource.launched().stream().filter(n -> !s.kernelNames().contains(n)).toList());
        assertTrue(s.kernelNames().contains("gemv_q4_k") && s.kernelNames().contains("attention"), s.kernelNames().toString());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new KernelSource(s.text().replace("#define GEMV_TOKENS 8", "#define GEMV_TOKENS 4")).checkConstants());
        assertTrue(e.getMessage().contains("disagree"), e.getMessage());
    }

    @Test
    void nvrtcOptionsNameTheDevicesArchitectureAndRefuseOldOnes() {
        assertTrue(KernelSource.nvrtcOptions(9, 0).contains("--gpu-architecture=sm_90"));
        assertTrue(KernelSource.nvrtcOptions(8, 6).contains("--gpu-architecture=sm_86"));
        assertThrows(IllegalArgumentException.class, () -> KernelSource.nvrtcOptions(6, 1));
    }

    /** nvcc from the PATH or the toolkit's usual place, if installed. */
    static Optional<Path> nvcc() {
        return executable("nvcc", Path.of("/usr/local/cuda/bin/nvcc"));
    }

    /** The first executable {@code name} in the PATH's directories, else the first executable fallback. */
    static Optional<Path> executable(String name, Path... fallbacks) {
        List<Path> candidates = new ArrayList<>();
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty()) {
                candidates.add(Path.of(d, name));
            }
        }
        candidates.addAll(List.of(fallbacks));
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    static String run(List<String> command, Path dir) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + ": no answer in 120 s");
        }
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.exitValue(), command + "\n" + out);
        return out;
    }

    @Test
    void nvccCompilesEveryKernelForTuringAmpereAndHopper(@TempDir Path dir) throws Exception {
        Optional<Path> nvcc = nvcc();
        Assumptions.assumeTrue(nvcc.isPresent(), "no nvcc here: the kernels' nvcc compile is skipped");
        Path cu = dir.resolve("kernels.cu");
        Files.writeString(cu, KernelSource.load().text());
        for (String arch : List.of("sm_75", "sm_80", "sm_90")) {
            Path ptx = dir.resolve(arch + ".ptx");
            run(List.of(nvcc.get().toString(), "-arch=" + arch, "--ptx", "-Werror", "all-warnings", "-o", ptx.toString(),
                    cu.toString()), dir);
            String text = Files.readString(ptx);
            for (String kernel : KernelSource.launched()) {
                assertTrue(text.contains(".entry " + kernel + "("), arch + ": no entry " + kernel);
            }
        }
    }

    @Test
    void nvrtcCompilesTheKernelsAsTheBackendDoes() {
        Optional<Nvrtc> nvrtc = Nvrtc.find();
        Assumptions.assumeTrue(nvrtc.isPresent(), "no NVRTC here (" + Nvrtc.unavailableReason() + "): skipped");
        byte[] cubin = nvrtc.get().compile(KernelSource.load().text(), "kernels.cu", KernelSource.nvrtcOptions(9, 0));
        Assumptions.assumeFalse(new String(cubin, 0, Math.min(cubin.length, 26), java.nio.charset.StandardCharsets.US_ASCII)
                .equals("NEREID-CUDA-EMULATOR-IMAGE"), "the NVRTC found is the CUDA emulator's (no cubin): skipped");
        assertTrue(cubin.length > 10_000 && cubin[0] == 0x7f && cubin[1] == 'E', "an ELF cubin");
        CudaException e = assertThrows(CudaException.class, () -> nvrtc.get().compile("__global__ void broken( {",
                "broken.cu", KernelSource.nvrtcOptions(9, 0)));
        assertTrue(e.getMessage().contains("broken.cu"), e.getMessage());
    }
}
