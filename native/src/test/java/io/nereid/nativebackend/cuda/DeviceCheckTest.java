package io.nereid.nativebackend.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What native/device/check.sh runs besides the tests — {@code DeviceCheck probe} and {@code bench} — on a
 * small model (stories260K), so that the one run on the GPU machine does not find their mistakes: the
 * probe names the device and the libraries, the bench's JSON has every field report.py reads, and its
 * greedy ids on the CUDA backend are the CPU backend's wherever the CPU's best logit leads clearly. Runs
 * where a CUDA driver (or the emulator) is present.
 */
@Tag("gpu")
@ExtendWith(CudaDevice.class)
class DeviceCheckTest {


    @Test
    void probeNamesTheDeviceAndTheLibraries(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("probe.json");
        DeviceCheck.main(new String[] {"probe", "--out", out.toString()});
        String json = Files.readString(out);
        for (String field : new String[] {"\"device\":", "\"compute_capability\":", "\"binding\":\"ffm\"", "\"nvrtc\":\"NVRTC",
            "\"cublas\":\"cuBLAS", "\"line\":\"GPU "}) {
            assertTrue(json.contains(field), field + " in " + json);
        }
    }

    @Test
    void benchReportsSpeedsAndTheCpusGreedyIds(@TempDir Path dir) throws Exception {
        Path model = CudaConsistencyTest.fixtures().resolve("models/stories260K.gguf");
        Path ids = dir.resolve("ids.json");
        Files.writeString(ids, "[1, 403, 407, 261, 378, 324, 395, 429]");
        String[] common = {"--model", model.toString(), "--prompt", "40", "--gen", "3", "--batches", "1,2", "--ids", ids.toString(),
            "--ids-gen", "6", "--long-context", "200", "--long-gen", "2"};
        String cuda = bench(dir, "cuda", common);
        String cpu = bench(dir, "cpu", common);
        for (String field : new String[] {"\"load_seconds\":", "\"prefill_tok_s\":", "\"decode\":[{\"batch\":1,\"tok_s\":",
            "{\"batch\":2,", "\"greedy_margins\":", "\"backend\":\"cuda\"", "\"long_context\":{\"positions\":200,"}) {
            assertTrue(cuda.contains(field), field + " in " + cuda);
        }
        // decode asks for the argmax only, as the engine does for greedy requests: the CUDA backend takes it on the
        // device, the CPU backend returns rows
        assertTrue(cuda.contains("\"argmax_on_device\":true") && !cuda.contains("\"argmax_on_device\":false"), cuda);
        assertTrue(cpu.contains("\"argmax_on_device\":false") && !cpu.contains("\"argmax_on_device\":true"), cpu);
        // and the largest batch again, drawing at temperature 1: on the device for CUDA, rows for the CPU
        assertTrue(cuda.contains("\"sampled_decode\":{\"batch\":2,") && cuda.contains("\"drawn_on_device\":true"), cuda);
        assertTrue(cpu.contains("\"sampled_decode\":{\"batch\":2,") && cpu.contains("\"drawn_on_device\":false"), cpu);
        // batch 1 and the largest again without CUDA graphs, and the graphs' counts (the CPU backend records none)
        assertTrue(cuda.contains("\"decode_eager\":[{\"batch\":1,") && cuda.contains("\"graphs\":{\"replays\":")
                && cuda.contains("\"off\":null}"), cuda);
        assertTrue(!cpu.contains("decode_eager") && !cpu.contains("\"graphs\""), cpu);
        int[] gpuIds = ints(cuda, "greedy_ids");
        int[] cpuIds = ints(cpu, "greedy_ids");
        double[] margins = doubles(cpu, "greedy_margins");
        assertEquals(6, gpuIds.length, cuda);
        int compared = 0;
        for (int i = 0; i < cpuIds.length && margins[i] > 0.05; i++, compared++) {   // after a near tie the paths may part
            assertEquals(cpuIds[i], gpuIds[i], "greedy id " + i + ": CPU " + cpu + "\nCUDA " + cuda);
        }
        assertTrue(compared >= 3, "too few clear greedy ids to compare: " + cpu);
    }

    private static String bench(Path dir, String backend, String[] common) throws Exception {
        Path out = dir.resolve(backend + ".json");
        String[] args = new String[common.length + 5];
        args[0] = "bench";
        System.arraycopy(common, 0, args, 1, common.length);
        args[common.length + 1] = "--backend";
        args[common.length + 2] = backend;
        args[common.length + 3] = "--out";
        args[common.length + 4] = out.toString();
        DeviceCheck.main(args);
        return Files.readString(out);
    }

    private static int[] ints(String json, String field) {
        return Arrays.stream(list(json, field)).mapToInt(Integer::parseInt).toArray();
    }

    private static double[] doubles(String json, String field) {
        return Arrays.stream(list(json, field)).mapToDouble(Double::parseDouble).toArray();
    }

    private static String[] list(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":\\[([^\\]]*)\\]").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return m.group(1).replace(" ", "").split(",");
    }
}
