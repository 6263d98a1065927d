package io.nereid.nativebackend.cuda;

import io.nereid.engine.backend.TokenChoice;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CUDA C of every kernel ({@code kernels.cu} in this package's resources), the names the backend
 * launches, and the NVRTC options for a compute capability. The source's {@code #define}d launch
 * constants must equal {@link LaunchGeometry}'s; {@link #load} refuses a source where they do not.
 */
record KernelSource(String text) {

    private static final Pattern DEFINE = Pattern.compile("(?m)^#define (\\w+) (\\d+)\\b");
    private static final Pattern GLOBAL = Pattern.compile("extern \"C\" __global__ void (\\w+)\\(");
    private static final Pattern FORMAT = Pattern.compile("(?m)^FORMAT_KERNELS\\((\\w+), \\w+\\)");
    private static final Pattern GEMV = Pattern.compile("(?m)^GEMV_KERNELS\\((\\w+), ");

    static KernelSource load() {
        try (InputStream in = KernelSource.class.getResourceAsStream("kernels.cu")) {
            if (in == null) {
                throw new IllegalStateException("kernels.cu is not on the class path");
            }
            KernelSource s = new KernelSource(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            s.checkConstants();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An integer {@code #define} of the source. */
    int constant(String name) {
        Matcher m = DEFINE.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(name)) {
                return Integer.parseInt(m.group(2));
            }
        }
        throw new IllegalStateException("kernels.cu defines no " + name);
    }

    void checkConstants() {
        int[][] pairs = {
            {constant("GEMV_WARPS"), LaunchGeometry.GEMV_WARPS}, {constant("GEMV_TOKENS"), LaunchGeometry.GEMV_TOKENS},
            {constant("ATTN_WARPS"), LaunchGeometry.ATTN_WARPS}, {constant("MAX_HEAD_DIM"), LaunchGeometry.MAX_HEAD_DIM},
            {constant("SAMPLE_RANKS"), TokenChoice.MAX_TOP_K}, {constant("ROW_THREADS"), LaunchGeometry.THREADS}};
        for (int[] p : pairs) {
            if (p[0] != p[1]) {
                throw new IllegalStateException("kernels.cu and LaunchGeometry disagree on a launch constant: " + p[0]
                        + " vs " + p[1]);
            }
        }
        for (WeightFormat f : WeightFormat.values()) {
            if (constant("TYPE_" + f.name()) != f.type.id()) {
                throw new IllegalStateException("kernels.cu's TYPE_" + f.name() + " is not GGML type " + f.type.id());
            }
        }
    }

    /** Every kernel the source defines: the plain ones and each FORMAT_KERNELS and GEMV_KERNELS expansion. */
    Set<String> kernelNames() {
        Set<String> names = new LinkedHashSet<>();
        Matcher g = GLOBAL.matcher(text);
        while (g.find()) {
            names.add(g.group(1));   // the macro's own lines (gemv_##NAME) do not match: ## is no word character
        }
        Matcher f = FORMAT.matcher(text);
        while (f.find()) {
            for (String prefix : List.of("gemv_", "gemv_swiglu_", "gemv_qkv_", "embed_", "dequant_")) {
                names.add(prefix + f.group(1));
            }
        }
        Matcher v = GEMV.matcher(text);
        while (v.find()) {
            names.add("gemv_" + v.group(1));
            names.add("gemv_swiglu_" + v.group(1));
            names.add("gemv_qkv_" + v.group(1));
        }
        return names;
    }

    /** The kernels the backend launches; every one must be in {@link #kernelNames()}. */
    static List<String> launched() {
        List<String> names = new ArrayList<>(List.of("rms_norm", "add_bias", "silu_mul", "to_half", "gather_rows", "sample_rows",
                "row_logprobs", "rope_kv_write", "attention", "attention_reduce", "copy_blocks"));
        for (String h8 : List.of("f16_h8", "bf16_h8")) {
            names.add("gemv_" + h8);
            names.add("gemv_swiglu_" + h8);
            names.add("gemv_qkv_" + h8);
        }
        for (WeightFormat f : WeightFormat.values()) {
            names.add(f.gemv(1));
            names.add(f.swiglu(1));
            names.add(f.qkv(1));
            names.add(f.embed());
            names.add(f.dequant());
        }
        return names;
    }

    /** NVRTC's options for compute capability {@code major.minor}: a cubin for that device, no fast math. */
    static List<String> nvrtcOptions(int major, int minor) {
        if (major < 7) {
            throw new IllegalArgumentException("compute capability " + major + "." + minor
                    + ": the CUDA backend needs 7.0 or newer (warp shuffles with masks)");
        }
        return List.of("--gpu-architecture=sm_" + major + minor, "--std=c++17", "-default-device");
    }
}
