package io.nereid.engine.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.cpu.kernel.ComputePool;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import io.nereid.kvcache.BlockTable;
import io.nereid.kvcache.KvCacheConfig;
import io.nereid.kvcache.KvCacheManager;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The default (faster) order's logits do not depend on how the kernel threads split a step's
 * matmuls: threads take whole groups of a matrix's copy ({@code WeightMatrix.rowAlignment}: 256
 * rows of an F16 / BF16 column copy, an interleaved group, else four rows), and each row's sum is
 * its own, so one thread and three threads (chunks that cut the matrices elsewhere) give the same
 * bits, for a prompt (the panels), a decode step of one sequence and a step of six (the copies).
 * The model's matrices have several column groups (dim 512, FFN 768, vocabulary 640) and a
 * partial last one.
 */
class ThreadSplitTest {

    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F16", "BF16", "Q4_0", "Q8_0"})
    void oneAndThreeThreadsGiveTheSameLogits(GgmlType type) throws Exception {
        Path file = dir.resolve("split-" + type + ".gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 512, 1, 8, 2, 768, 640, 256, type,
                false, 5), file);
        try (CpuModel m = CpuModel.open(file);
                ComputePool one = new ComputePool(new ComputePool.Config(1));
                ComputePool three = new ComputePool(new ComputePool.Config(3))) {
            List<float[][]> a = run(m, one);
            List<float[][]> b = run(m, three);
            for (int step = 0; step < a.size(); step++) {
                for (int s = 0; s < a.get(step).length; s++) {
                    assertArrayEquals(a.get(step)[s], b.get(step)[s], type + ": step " + step + ", slice " + s);
                }
            }
        }
    }

    /** A 40-token prompt, then a decode step of its sequence, then one of six sequences. */
    private static List<float[][]> run(CpuModel m, ComputePool pool) {
        RangeRunner runner = (s, e, min, body) -> pool.parallelFor(s, e, min, body::run);
        CpuForward f = m.forward(Kernels.provider(), runner, 256, false);
        KvCacheManager cache = new KvCacheManager(new KvCacheConfig(64, 16, 0, 1));
        KvStorage kv = new KvStorage(f.config(), 64, 16, KvPrecision.F16);
        List<float[][]> out = new ArrayList<>();
        List<BlockTable> tables = new ArrayList<>();
        List<Slice> prompts = new ArrayList<>();
        for (int s = 0; s < 6; s++) {
            int[] prompt = GeneratedModelsTest.prompt(20 + s, s == 0 ? 40 : 9);
            BlockTable t = cache.newTable(s);
            t.append(prompt);
            tables.add(t);
            prompts.add(new Slice(prompt, 0, t.blockIds(), true));
        }
        out.add(f.forward(prompts.subList(0, 1), kv));
        out.add(f.forward(prompts.subList(1, 6), kv));
        for (int steps : new int[] {1, 6}) {
            List<Slice> step = new ArrayList<>();
            for (int s = 0; s < steps; s++) {
                BlockTable t = tables.get(s);
                int pos = t.length();
                t.append(100 + s);
                step.add(new Slice(new int[] {100 + s}, pos, t.blockIds(), true));
            }
            out.add(f.forward(step, kv));
        }
        return out;
    }
}
