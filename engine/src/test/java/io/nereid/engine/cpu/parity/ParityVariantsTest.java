package io.nereid.engine.cpu.parity;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.backend.KvPrecision;
import io.nereid.engine.cpu.parity.Logprobs.Deviations;
import io.nereid.engine.cpu.parity.Logprobs.RowDifference;
import io.nereid.engine.cpu.parity.ParityFixture.AttentionMode;
import io.nereid.engine.cpu.parity.ParityRuns.Settings;
import io.nereid.engine.model.ModelSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The parity checks of {@link ParityTest} with settings other than llama-server's: an F32 KV cache
 * (llama.cpp used F16; the F32 model is the tight check, so the cache's own rounding shows there)
 * and one kernel thread instead of two. Each output element is computed by one thread whatever
 * the split, in an order that does not depend on the split, so one and two threads give the same
 * bits, from the first run of a fresh JVM.
 *
 * <p>Not tagged {@value ParityFixture#TAG}: these settings do not depend on the kernels' vector
 * width, so the default test run is enough and the per-width executions stay short.
 */
class ParityVariantsTest {

    @Test
    void anF32KvCacheKeepsTheF32ModelWithinTolerance() {
        ParityFixture fixture = ParityFixture.load("parity-a-llama-spm-f32");
        Settings f32Kv = new Settings(KvPrecision.F32, 2, false);
        List<Executable> checks = new ArrayList<>();
        try (ModelSource model = ModelSource.open(fixture.model())) {
            for (AttentionMode mode : AttentionMode.values()) {
                float[][][] f32 = ParityRuns.teacherForced(model, fixture, mode, ForwardPath.ONE_STEP, f32Kv);
                float[][][] f16 = ParityRuns.teacherForced(model, fixture, mode, ForwardPath.ONE_STEP,
                        Settings.REFERENCE);
                Deviations d = Logprobs.against(fixture, f32, p -> p.steps(mode), "ONE_STEP " + mode + " " + f32Kv);
                ParityTest.report(fixture + " ONE_STEP " + mode + ", " + f32Kv + ": |Δlogprob| " + d
                        + ", tolerance " + fixture.tolerance() + "; F32 vs F16 KV: " + Logprobs.compare(f32, f16));
                checks.add(() -> assertTrue(d.max() <= fixture.tolerance(), "max |Δlogprob| " + d
                        + " > tolerance " + fixture.tolerance()));
            }
        }
        assertAll(checks);
    }

    /** On the Q8_0 model, whose matmul inputs are also quantized to int8 (once, by the first thread to ask). */
    @Test
    void oneThreadGivesWhatTwoThreadsGive() {
        ParityFixture fixture = ParityFixture.load("parity-a-llama-spm-q8_0");
        Settings oneThread = new Settings(KvPrecision.F16, 1, false);
        List<Executable> checks = new ArrayList<>();
        try (ModelSource model = ModelSource.open(fixture.model())) {
            for (ForwardPath path : List.of(ForwardPath.ONE_STEP, ForwardPath.TOKEN_BY_TOKEN)) {
                AttentionMode mode = AttentionMode.DEFAULT;
                float[][][] one = ParityRuns.teacherForced(model, fixture, mode, path, oneThread);
                float[][][] two = ParityRuns.teacherForced(model, fixture, mode, path, Settings.REFERENCE);
                Deviations d = Logprobs.against(fixture, one, p -> p.steps(mode), path + " " + mode + " " + oneThread);
                RowDifference threads = Logprobs.compare(one, two);
                ParityTest.report(fixture + " " + path + " " + mode + ", " + oneThread + ": |Δlogprob| " + d
                        + ", tolerance " + fixture.tolerance() + "; 1 vs 2 threads: " + threads);
                checks.add(() -> assertTrue(d.max() <= fixture.tolerance(), "max |Δlogprob| " + d
                        + " > tolerance " + fixture.tolerance()));
                checks.add(() -> assertTrue(threads.bitIdentical(), path + " 1 vs 2 threads: " + threads));
            }
        }
        assertAll(checks);
    }
}
