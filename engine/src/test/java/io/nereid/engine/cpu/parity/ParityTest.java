package io.nereid.engine.cpu.parity;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereid.engine.cpu.kernel.Kernels;
import io.nereid.engine.cpu.parity.Logprobs.Deviations;
import io.nereid.engine.cpu.parity.Logprobs.RowDifference;
import io.nereid.engine.cpu.parity.ParityFixture.AttentionMode;
import io.nereid.engine.cpu.parity.ParityFixture.Prompt;
import io.nereid.engine.cpu.parity.ParityRuns.Settings;
import io.nereid.engine.model.ModelSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Numerics parity of the CPU backend with llama.cpp b4748 on the {@code fixtures/parity} models
 * (F32, Q8_0, Q4_0, Q4_K_M with Q6_K tensors), through the backend seam, with llama-server's
 * settings (F16 KV cache, 2 threads): teacher-forced log-probabilities along each
 * {@link ForwardPath}, greedy ids on the prefix llama.cpp is decisive about, and how far the paths
 * are from one another (batch invariance). The tolerance is the fixture's: how far llama.cpp moves
 * its own numbers when only its attention kernel changes.
 *
 * <p>Each model's teacher-forced runs are computed once and shared by its tests (one instance per
 * model), then dropped. Measured values are printed, one {@code parity:} line each, so the reports
 * of every surefire execution (vector widths, scalar kernels) show them.
 */
@Tag(ParityFixture.TAG)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ParameterizedClass(name = "{0}")
@MethodSource("io.nereid.engine.cpu.parity.ParityFixture#all")
class ParityTest {

    // injected into a field: a PER_CLASS parameterized class takes no constructor arguments
    @Parameter
    private ParityFixture fixture;

    private final Map<ForwardPath, Map<AttentionMode, float[][][]>> runs = new EnumMap<>(ForwardPath.class);
    private ModelSource model;

    @BeforeParameterizedClassInvocation(injectArguments = false)
    void open() {
        model = ModelSource.open(fixture.model());
    }

    @AfterParameterizedClassInvocation(injectArguments = false)
    void close() {
        runs.clear();
        model.close();
    }

    /** Teacher-forced logits along {@code path}, with the reference's settings; computed once. */
    private float[][][] logits(ForwardPath path, AttentionMode mode) {
        return runs.computeIfAbsent(path, p -> new EnumMap<>(AttentionMode.class)).computeIfAbsent(mode,
                m -> ParityRuns.teacherForced(model, fixture, m, path, Settings.REFERENCE));
    }

    static void report(String line) {
        System.out.println("parity: [" + Kernels.description() + "] " + line);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(ForwardPath.class)
    void teacherForcedLogprobsMatchLlamaCpp(ForwardPath path) {
        List<Executable> checks = new ArrayList<>();
        for (AttentionMode mode : AttentionMode.values()) {
            Deviations d = Logprobs.against(fixture, logits(path, mode), p -> p.steps(mode), path + " " + mode);
            report(fixture + " " + path + " " + mode + ", " + Settings.REFERENCE + ": |Δlogprob| " + d
                    + ", tolerance " + fixture.tolerance());
            checks.add(() -> assertTrue(d.max() <= fixture.tolerance(), "|Δlogprob| " + d + " > tolerance "
                    + fixture.tolerance()));
        }
        assertAll(checks);
    }

    /**
     * The Q4_K_M fixture also has llama.cpp's distributions from one batched pass per step
     * (b4748's decode path for Q4_K differs from its batched one by up to 0.26); our one-step pass is
     * the batched one.
     */
    @Test
    void oneStepPassMatchesLlamaCppsBatchedPrefixEvaluation() {
        assumeTrue(fixture.prompts().stream().anyMatch(p -> p.batchedPrefixEval() != null),
                "only the Q4_K_M fixture has batched_prefix_eval");
        Deviations d = Logprobs.against(fixture, logits(ForwardPath.ONE_STEP, AttentionMode.DEFAULT),
                Prompt::batchedPrefixEval, ForwardPath.ONE_STEP + " vs batched_prefix_eval");
        report(fixture + " ONE_STEP vs batched_prefix_eval, " + Settings.REFERENCE + ": |Δlogprob| " + d
                + ", tolerance " + fixture.tolerance());
        assertTrue(d.max() <= fixture.tolerance(), "|Δlogprob| " + d + " > tolerance " + fixture.tolerance());
    }

    /**
     * Greedy generation as llama-server runs it (the prompt in one step, then one token per step)
     * chooses llama.cpp's ids on the first {@code compare_prefix_len} steps: before its first near
     * tie and before its two attention modes disagree. 0 compares nothing. Past that prefix llama.cpp
     * is not decisive; where we first differ is reported, with llama.cpp's top-1/top-2 gap there.
     */
    @Test
    void greedyIdsMatchLlamaCppOnTheComparablePrefix() {
        List<Executable> checks = new ArrayList<>();
        for (Prompt p : fixture.prompts()) {
            int[] expected = p.generatedIds();
            int[] ours = ParityRuns.greedy(model, Settings.REFERENCE, p.promptIds(), expected.length);
            int n = p.comparePrefixLen();
            int mismatch = Arrays.mismatch(expected, ours);
            String gap = mismatch < 0 ? "" : String.format(", reference top-1/top-2 gap there %.3f",
                    p.steps().get(mismatch).topLogprobs()[0] - p.steps().get(mismatch).topLogprobs()[1]);
            report(fixture + " greedy " + p.name() + ": compare_prefix_len " + n + ", ours equal llama.cpp's for "
                    + (mismatch < 0 ? "all " + expected.length : "the first " + mismatch) + " steps" + gap);
            checks.add(() -> assertArrayEquals(Arrays.copyOf(expected, n), Arrays.copyOf(ours, n),
                    fixture + " " + p.name() + ": greedy ids on the first " + n + " steps"));
        }
        assertAll(checks);
    }

    /**
     * Batch invariance: the one-step, token-by-token and chunked passes over the same positions.
     * Today they are not bit-identical (a one-token step takes other kernels than a batch, which
     * sum in another order; Q8_0 dots a lone token's int8 activations as integers and a batch's as
     * floats, and the next layer's activation quantization amplifies the difference), so this
     * asserts the measured difference stays within the parity tolerance and reports whether the
     * rows are identical; once the kernels are batch invariant (issue 13, item 4) it should demand
     * equal bits. In a fresh JVM the vector kernels' bits also change as C2 compiles them, so these
     * runs, the first of the JVM, can differ a little more than warmed-up ones.
     */
    @Test
    void batchInvarianceOneStepTokenByTokenAndChunkedPassesAgreeWithinTolerance() {
        List<Executable> checks = new ArrayList<>();
        for (AttentionMode mode : AttentionMode.values()) {
            float[][][] whole = logits(ForwardPath.ONE_STEP, mode);
            for (ForwardPath other : List.of(ForwardPath.TOKEN_BY_TOKEN, ForwardPath.CHUNKS_OF_7)) {
                RowDifference diff = Logprobs.compare(whole, logits(other, mode));
                report(fixture + " batch invariance ONE_STEP vs " + other + " " + mode + ": " + diff);
                checks.add(() -> assertTrue(diff.maxLogprob() <= fixture.tolerance(), fixture + " ONE_STEP vs "
                        + other + " " + mode + ": " + diff + ", tolerance " + fixture.tolerance()));
            }
        }
        assertAll(checks);
    }
}
