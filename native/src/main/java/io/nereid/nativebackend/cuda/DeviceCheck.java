package io.nereid.nativebackend.cuda;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.BackendConfig;
import io.nereid.engine.backend.BackendProvider;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import io.nereid.engine.backend.TokenChoice;
import io.nereid.engine.model.ModelSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

/**
 * What {@code native/device/check.sh} runs on the GPU machine, besides the gpu-tagged tests:
 * {@code probe} (the first line of the report: the device, the binding and the libraries it found) and
 * {@code bench} (prefill and batched decode speed of a model on a backend, and its greedy ids for a
 * given prompt, as JSON, for the comparison with PyTorch on the same weights), and {@code presets}
 * (whether the JavaCPP CUDA presets load and work here: {@link PresetsProbe}). Each writes JSON to the
 * {@code --out} file and a summary line to stdout.
 */
public final class DeviceCheck {

    private DeviceCheck() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            System.err.println("usage: DeviceCheck probe --out FILE | bench --model M --out FILE [--backend cuda]"
                    + " [--prompt 512] [--gen 128] [--batches 1,8,64] [--long-context 0] [--long-gen 32] [--ids FILE] [--ids-gen 16]"
                    + " | presets --out FILE [--call CUDART_FUNCTION]");
            System.exit(64);
        }
        java.util.Map<String, String> o = new java.util.HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            o.put(args[i], args[i + 1]);
        }
        Path out = Path.of(o.getOrDefault("--out", "/dev/stdout"));
        String json = switch (args[0]) {
            case "probe" -> probe();
            case "bench" -> bench(o);
            case "presets" -> PresetsProbe.run(o);
            default -> throw new IllegalArgumentException("unknown DeviceCheck command " + args[0]);
        };
        Files.writeString(out, json + "\n");
    }

    /** The device, the binding, the libraries: one line on stdout, and the JSON. */
    static String probe() {
        List<String> fields = new ArrayList<>();
        String line;
        try {
            CudaDriver d = CudaDriver.load();
            int dev = d.device(0);
            int major = d.attribute(dev, CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
            int minor = d.attribute(dev, CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
            int version = d.driverVersion();
            String nvrtc = Nvrtc.find().map(n -> "NVRTC " + n.version()[0] + "." + n.version()[1] + " (" + n.library + ")")
                    .orElse("no NVRTC: " + Nvrtc.unavailableReason());
            String cublas;
            var ctx = d.retainPrimaryContext(dev);
            d.makeCurrent(ctx);
            try (Cublas b = Cublas.open()) {
                cublas = "cuBLAS (" + b.library + ")";
            } catch (CudaException e) {
                cublas = "no cuBLAS: " + e.getMessage();
            }
            line = String.format(Locale.ROOT, "GPU %s (sm_%d%d, %d SMs, %.1f GiB), driver API %d.%d; binding: FFM (%s), %s, %s",
                    d.deviceName(dev), major, minor, d.attribute(dev, CudaDriver.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                    d.totalMemory(dev) / (1024.0 * 1024 * 1024), version / 1000, version % 1000 / 10, d.library, nvrtc,
                    cublas);
            fields.add(q("device") + ":" + q(d.deviceName(dev)));
            fields.add(q("compute_capability") + ":" + q(major + "." + minor));
            fields.add(q("memory_bytes") + ":" + d.totalMemory(dev));
            fields.add(q("driver_api_version") + ":" + version);
            fields.add(q("binding") + ":" + q("ffm"));
            fields.add(q("driver_library") + ":" + q(d.library));
            fields.add(q("nvrtc") + ":" + q(nvrtc));
            fields.add(q("cublas") + ":" + q(cublas));
            d.releasePrimaryContext(dev);
        } catch (CudaException e) {
            line = "no CUDA device: " + e.getMessage();
            fields.add(q("error") + ":" + q(e.getMessage()));
        }
        System.out.println(line);
        fields.add(q("line") + ":" + q(line));
        return "{" + String.join(",", fields) + "}";
    }

    /**
     * The largest batch decoded on for {@code gen} more steps with tokens drawn from the whole softmax at
     * temperature 1 (OpenAI's and GenAI-Perf's defaults), each slice asking the backend to draw: what sampling
     * costs a step beside the argmax. A backend that returns rows (the CPU) goes on with their argmax, the
     * draw left out of the time, and reports {@code drawn_on_device} false.
     */
    private static String sampledDecode(Backend b, String backendName, int[][] tables, int[] next, int from, int gen) {
        SplittableRandom numbers = new SplittableRandom(11);
        int batch = tables.length;
        boolean onDevice = true;
        long t0 = System.nanoTime();
        for (int i = 0; i < gen; i++) {
            List<Slice> step = new ArrayList<>();
            for (int s = 0; s < batch; s++) {
                step.add(new Slice(new int[] {next[s]}, from + i, tables[s], 1, false,
                        TokenChoice.draw(1f, numbers.nextDouble())));
            }
            StepOutput out = b.forward(new Step(step));
            for (int s = 0; s < batch; s++) {
                onDevice &= out.chosen()[s] != null;
            }
            next = argmaxes(out);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "%s sampled decode (T 1) batch %d: %.1f tok/s (%.2f ms per step)%n", backendName,
                batch, batch * gen / seconds, 1000 * seconds / gen);
        return q("sampled_decode") + ":{" + q("batch") + ":" + batch + "," + q("tok_s") + ":" + fmt(batch * gen / seconds)
                + "," + q("step_ms") + ":" + fmt(1000 * seconds / gen) + "," + q("drawn_on_device") + ":" + onDevice + "}";
    }

    /** Prefill and decode speed, and greedy ids, of {@code --model} on {@code --backend}. */
    static String bench(java.util.Map<String, String> o) throws IOException {
        Path model = Path.of(o.get("--model"));
        String backendName = o.getOrDefault("--backend", "cuda");
        int prompt = Integer.parseInt(o.getOrDefault("--prompt", "512"));
        int gen = Integer.parseInt(o.getOrDefault("--gen", "128"));
        int[] batches = Arrays.stream(o.getOrDefault("--batches", "1,8,64").split(",")).mapToInt(Integer::parseInt).toArray();
        int decodePrompt = 128;
        int block = 16;
        int maxBatch = Arrays.stream(batches).max().orElse(1);
        int perSeq = (Math.max(prompt, decodePrompt + 2 * gen) + block - 1) / block + 1;   // greedy, then sampled
        // one sequence decoded after a long prompt (0: none): how attention holds up at long contexts
        int longContext = Integer.parseInt(o.getOrDefault("--long-context", "0"));
        int longGen = Integer.parseInt(o.getOrDefault("--long-gen", "32"));
        int longBlocks = longContext > 0 ? (longContext + longGen + block - 1) / block + 1 : 0;
        int blocks = maxBatch * perSeq + perSeq + longBlocks;
        List<String> fields = new ArrayList<>();
        long t0 = System.nanoTime();
        try (ModelSource source = ModelSource.open(model);
                Backend b = BackendProvider.named(backendName).open(new BackendConfig(source, KvPrecision.F16,
                        Runtime.getRuntime().availableProcessors()))) {
            double loadS = (System.nanoTime() - t0) / 1e9;
            b.allocate(blocks, block, Math.max(perSeq, longBlocks) * block);
            int vocab = b.vocabSize();
            SplittableRandom random = new SplittableRandom(7);
            // prefill: one sequence of `prompt` tokens, one warm-up and three timed
            int[] table = range(0, perSeq);
            int[] tokens = random.ints(prompt, 3, vocab).toArray();
            b.forward(new Step(List.of(new Slice(tokens, 0, table, 1))));
            long p0 = System.nanoTime();
            for (int r = 0; r < 3; r++) {
                b.forward(new Step(List.of(new Slice(tokens, 0, table, 1))));
            }
            double prefillTps = 3.0 * prompt / ((System.nanoTime() - p0) / 1e9);
            fields.add(q("load_seconds") + ":" + fmt(loadS));
            fields.add(q("prefill_tokens") + ":" + prompt);
            fields.add(q("prefill_tok_s") + ":" + fmt(prefillTps));
            List<String> decode = new ArrayList<>();
            List<String> decodeEager = new ArrayList<>();
            for (int batch : batches) {
                List<Slice> prefills = new ArrayList<>();
                int[][] tables = new int[batch][];
                for (int s = 0; s < batch; s++) {
                    tables[s] = range(perSeq * (s + 1), perSeq);
                    prefills.add(new Slice(random.ints(decodePrompt, 3, vocab).toArray(), 0, tables[s], 1));
                }
                int[] first = argmaxes(forwardChunked(b, prefills));
                Decode greedy = greedyDecode(b, tables, first, decodePrompt, gen);
                double seconds = greedy.seconds();
                decode.add("{" + q("batch") + ":" + batch + "," + q("tok_s") + ":" + fmt(batch * gen / seconds) + ","
                        + q("step_ms") + ":" + fmt(1000 * seconds / gen) + "," + q("argmax_on_device") + ":" + greedy.onDevice() + "}");
                System.out.printf(Locale.ROOT, "%s decode batch %d: %.1f tok/s (%.2f ms per step)%n", backendName, batch,
                        batch * gen / seconds, 1000 * seconds / gen);
                if (b instanceof CudaBackend cuda && (batch == batches[0] || batch == maxBatch)) {
                    // the same decode (the same positions written again) launched kernel by kernel: what graphs save
                    cuda.useGraphs(false);
                    double eager = greedyDecode(b, tables, first, decodePrompt, gen).seconds();
                    cuda.useGraphs(true);
                    decodeEager.add("{" + q("batch") + ":" + batch + "," + q("tok_s") + ":" + fmt(batch * gen / eager) + ","
                            + q("step_ms") + ":" + fmt(1000 * eager / gen) + "}");
                    System.out.printf(Locale.ROOT, "%s decode batch %d without CUDA graphs: %.1f tok/s (%.2f ms per step)%n",
                            backendName, batch, batch * gen / eager, 1000 * eager / gen);
                }
                if (batch == maxBatch) {
                    fields.add(sampledDecode(b, backendName, tables, greedy.last(), decodePrompt + gen, gen));
                }
            }
            if (longContext > 0) {
                int[] lt = range(maxBatch * perSeq + perSeq, longBlocks);
                int[] longPrompt = random.ints(longContext, 3, vocab).toArray();
                StepOutput out = null;
                for (int from = 0; from < longContext; from += 512) {   // prefilled in chunks, as the engine does
                    int to = Math.min(longContext, from + 512);
                    out = b.forward(new Step(List.of(new Slice(Arrays.copyOfRange(longPrompt, from, to), from, lt,
                            to == longContext ? 1 : 0))));
                }
                int next = TokenChoice.argmaxOf(out.row(0, 0));
                long l0 = System.nanoTime();
                for (int i = 0; i < longGen; i++) {
                    out = b.forward(new Step(List.of(new Slice(new int[] {next}, longContext + i, lt, 1, false,
                            TokenChoice.ARGMAX))));
                    next = argmaxes(out)[0];
                }
                double seconds = (System.nanoTime() - l0) / 1e9;
                fields.add(q("long_context") + ":{" + q("positions") + ":" + longContext + "," + q("tok_s") + ":"
                        + fmt(longGen / seconds) + "," + q("step_ms") + ":" + fmt(1000 * seconds / longGen) + "}");
                System.out.printf(Locale.ROOT, "%s decode after %d positions: %.1f tok/s (%.2f ms per step)%n", backendName,
                        longContext, longGen / seconds, 1000 * seconds / longGen);
            }
            fields.add(q("decode_prompt_tokens") + ":" + decodePrompt);
            fields.add(q("decode_tokens") + ":" + gen);
            fields.add(q("decode") + ":[" + String.join(",", decode) + "]");
            if (!decodeEager.isEmpty()) {
                fields.add(q("decode_eager") + ":[" + String.join(",", decodeEager) + "]");
            }
            if (b instanceof CudaBackend cuda) {
                long[] counts = cuda.graphCounts();
                fields.add(q("graphs") + ":{" + q("replays") + ":" + counts[0] + "," + q("captures") + ":" + counts[1] + ","
                        + q("off") + ":" + (cuda.graphsOffReason() == null ? "null" : q(cuda.graphsOffReason())) + "}");
            }
            System.out.printf(Locale.ROOT, "%s prefill %d tokens: %.1f tok/s%n", backendName, prompt, prefillTps);
            if (o.containsKey("--ids")) {
                int[] ids = Arrays.stream(Files.readString(Path.of(o.get("--ids"))).replaceAll("[\\[\\]\\s]", "").split(","))
                        .mapToInt(Integer::parseInt).toArray();
                int n = Integer.parseInt(o.getOrDefault("--ids-gen", "16"));
                List<Integer> out = new ArrayList<>();
                List<Float> margins = new ArrayList<>();
                int[] t = range(0, perSeq);
                StepOutput r = b.forward(new Step(List.of(new Slice(ids, 0, t, 1))));
                for (int i = 0; i < n; i++) {
                    float[] row = r.row(0, 0);
                    int best = TokenChoice.argmaxOf(row);
                    out.add(best);
                    margins.add(margin(row, best));
                    r = b.forward(new Step(List.of(new Slice(new int[] {best}, ids.length + i, t, 1))));
                }
                fields.add(q("greedy_ids") + ":" + out);
                fields.add(q("greedy_margins") + ":" + margins.stream().map(m -> fmt(m)).collect(Collectors.joining(",", "[", "]")));
            }
        }
        fields.add(q("backend") + ":" + q(backendName));
        return "{" + String.join(",", fields) + "}";
    }

    /** A greedy decode's seconds, whether every argmax came back chosen by the backend, and the last step's ids. */
    private record Decode(double seconds, boolean onDevice, int[] last) {
    }

    /**
     * {@code gen} greedy decode steps of the batch (one sequence per table) from {@code first}, the argmax asked of
     * the backend as the engine asks for it.
     */
    private static Decode greedyDecode(Backend b, int[][] tables, int[] first, int from, int gen) {
        int[] next = first;
        boolean onDevice = true;
        long d0 = System.nanoTime();
        for (int i = 0; i < gen; i++) {
            List<Slice> step = new ArrayList<>();
            for (int s = 0; s < tables.length; s++) {
                step.add(new Slice(new int[] {next[s]}, from + i, tables[s], 1, false, TokenChoice.ARGMAX));
            }
            StepOutput out = b.forward(new Step(step));
            onDevice &= out.chosen()[0] != null;
            next = argmaxes(out);
        }
        return new Decode((System.nanoTime() - d0) / 1e9, onDevice, next);
    }

    /** Prefill slices together, at most 4096 tokens per step. */
    private static StepOutput[] forwardChunked(Backend b, List<Slice> slices) {
        List<StepOutput> outs = new ArrayList<>();
        List<Slice> step = new ArrayList<>();
        int tokens = 0;
        for (Slice s : slices) {
            if (tokens + s.tokens().length > 4096 && !step.isEmpty()) {
                outs.add(b.forward(new Step(step)));
                step = new ArrayList<>();
                tokens = 0;
            }
            step.add(s);
            tokens += s.tokens().length;
        }
        outs.add(b.forward(new Step(step)));
        return outs.toArray(StepOutput[]::new);
    }

    private static int[] argmaxes(StepOutput[] outs) {
        List<Integer> ids = new ArrayList<>();
        for (StepOutput o : outs) {
            for (int s = 0; s < o.logits().length; s++) {
                ids.add(o.chosen()[s] != null ? o.chosen()[s][0] : TokenChoice.argmaxOf(o.row(s, 0)));
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int[] argmaxes(StepOutput out) {
        return argmaxes(new StepOutput[] {out});
    }

    /** How far the best logit is above the second. */
    static float margin(float[] row, int best) {
        float second = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < row.length; i++) {
            if (i != best) {
                second = Math.max(second, row[i]);
            }
        }
        return row[best] - second;
    }

    private static int[] range(int from, int n) {
        int[] r = new int[n];
        for (int i = 0; i < n; i++) {
            r[i] = from + i;
        }
        return r;
    }

    static String q(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.4g", v);
    }
}
