package io.nereid.engine.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nereid.engine.backend.Backend;
import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.backend.Slice;
import io.nereid.engine.backend.Step;
import io.nereid.engine.cpu.CpuModel;
import io.nereid.engine.cpu.RangeRunner;
import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.gguf.GgmlType;
import io.nereid.engine.model.Architecture;
import io.nereid.engine.model.RandomModelWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The load-time passes: every shape that fits the cache, and nothing of them read by a sequence afterwards. */
class WarmUpTest {

    @Test
    void runsEveryShapeThatFitsAndLeavesNothingASequenceReads(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("m.gguf");
        RandomModelWriter.write(new RandomModelWriter.Spec(Architecture.LLAMA, 64, 2, 4, 2, 96, 320, 512, GgmlType.Q8_0,
                false, 5), file);
        try (CpuModel m = CpuModel.open(file)) {
            // a sequence's prompt and decode in blocks 1..4, which the passes wrote into, against a backend without them
            List<float[][]> reference = sequence(m.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F16, 32, 16,
                    512));
            Backend warm = m.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F16, 32, 16, 512);
            // a prompt, 1..8 tokens twice, 2, 4 and 16 sequences
            assertEquals(1 + 16 + 3, WarmUp.run(warm, 32, 16, 512));
            List<float[][]> after = sequence(warm);
            for (int i = 0; i < reference.size(); i++) {
                for (int r = 0; r < reference.get(i).length; r++) {
                    assertArrayEquals(reference.get(i)[r], after.get(i)[r], "step " + i + ", row " + r);
                }
            }
            // fewer blocks: the batches that do not fit are left out; too few or too short: nothing
            assertEquals(1 + 16 + 2, WarmUp.run(m.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F16, 10, 16,
                    512), 10, 16, 512));
            assertEquals(0, WarmUp.run(m.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F16, 3, 16, 512), 3, 16,
                    512));
            assertEquals(0, WarmUp.run(m.backend(Kernels.provider(), RangeRunner.SERIAL, KvPrecision.F16, 32, 16, 36), 32, 16,
                    36));
        }
    }

    /** A 40-token prompt in blocks 1..3, then three decode steps (the last with two drafts' rows), their logits. */
    private static List<float[][]> sequence(Backend b) {
        int[] table = {1, 2, 3, 4};
        int[] prompt = new int[40];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = 3 + (i * 7) % 300;
        }
        List<float[][]> out = new ArrayList<>();
        out.add(b.forward(new Step(List.of(new Slice(prompt, 0, table, 1)))).logits());
        out.add(b.forward(new Step(List.of(new Slice(new int[] {9}, 40, table, 1)))).logits());
        out.add(b.forward(new Step(List.of(new Slice(new int[] {11}, 41, table, 1)))).logits());
        out.add(b.forward(new Step(List.of(new Slice(new int[] {12, 13, 14}, 42, table, 3)))).logits());
        return out;
    }
}
