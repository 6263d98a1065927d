package io.nereid.engine.cpu.parity;

import io.nereid.engine.Fixtures;
import io.nereid.engine.json.Json;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One model of {@code ../shared/fixtures/parity} and its llama.cpp b4748 references (see that
 * folder's README): 4 prompts, each with 32 greedy steps in default attention and in flash
 * attention ({@code -fa}), every step with its chosen id and top-5 log-probabilities (ln softmax
 * of the raw logits). Immutable.
 *
 * @param name      the GGUF file name without its extension, e.g. {@code parity-a-llama-spm-q8_0}
 * @param type      the fixture's {@code type}: {@code F32}, {@code Q8_0}, {@code Q4_0 (--pure)}, {@code Q4_K_M}
 * @param model     the GGUF file
 * @param tolerance the allowed |Δlogprob|: the fixture's own measure of how far llama.cpp moves
 *                  when only its attention kernel changes, rounded up as the README suggests
 * @param prompts   the 4 prompts, in fixture order
 */
public record ParityFixture(String name, String type, Path model, double tolerance, List<Prompt> prompts) {

    /**
     * The JUnit tag of the kernel parity tests ({@link ParityTest}): besides the default test run,
     * the {@code vector-*} executions of {@code engine/pom.xml} run them at each vector width, and
     * {@code kernels-scalar} with the scalar kernels.
     */
    public static final String TAG = "parity";

    /** The fixture files, in the order of the README's table. */
    static final List<String> NAMES = List.of("parity-a-llama-spm-f32", "parity-a-llama-spm-q8_0",
            "parity-a-llama-spm-q4_0-pure", "parity-a-llama-spm-q4_k_m");

    /** The README's suggested tolerances are the measured maxima rounded up to a multiple of 1/20 (0.05). */
    static final int TOLERANCE_STEPS_PER_UNIT = 20;

    /**
     * A reference step: the distribution after {@code prompt_ids + generated_ids[:step]}.
     *
     * @param step          index in the generation, 0..31
     * @param id            the chosen (greedy) id
     * @param logprob       its ln softmax(raw logits)
     * @param topIds        the 5 most likely ids, most likely first (top 1 = {@code id})
     * @param topLogprobs   their log-probabilities
     */
    public record Step(int step, int id, double logprob, int[] topIds, double[] topLogprobs) {
    }

    /**
     * One prompt and what llama.cpp did with it.
     *
     * @param name                  {@code fox}, {@code harbour}, {@code json_code} or {@code random_ids}
     * @param promptIds             the prompt, BOS included
     * @param generatedIds          the 32 ids chosen in default attention
     * @param generatedIdsFlashAttn the 32 ids chosen with {@code -fa}
     * @param comparePrefixLen      how many leading greedy ids llama.cpp is decisive about; 0 means none
     * @param steps                 default attention, conditioned on {@code generatedIds}
     * @param stepsFlashAttn        {@code -fa}, conditioned on {@code generatedIdsFlashAttn}
     * @param batchedPrefixEval     default attention from one batched pass per step (Q4_K_M only), or null
     */
    public record Prompt(String name, int[] promptIds, int[] generatedIds, int[] generatedIdsFlashAttn,
            int comparePrefixLen, List<Step> steps, List<Step> stepsFlashAttn, List<Step> batchedPrefixEval) {

        /** The generated ids of {@code mode}. */
        public int[] generated(AttentionMode mode) {
            return mode == AttentionMode.DEFAULT ? generatedIds : generatedIdsFlashAttn;
        }

        /** The reference steps of {@code mode}. */
        public List<Step> steps(AttentionMode mode) {
            return mode == AttentionMode.DEFAULT ? steps : stepsFlashAttn;
        }
    }

    /** llama.cpp's two attention kernels, each with its own generation and references. */
    public enum AttentionMode {
        /** No {@code -fa}: {@code generated_ids}, {@code steps}. */
        DEFAULT,
        /** {@code -fa}: {@code generated_ids_flash_attn}, {@code steps_flash_attn}. */
        FLASH_ATTN
    }

    /** Every parity fixture. */
    public static List<ParityFixture> all() {
        return NAMES.stream().map(ParityFixture::load).toList();
    }

    /** The fixture {@code name} (a file name of {@link #NAMES} without extension). */
    public static ParityFixture load(String name) {
        Map<String, Object> json = Json.parseObject(Fixtures.read("parity/" + name + ".json"));
        Map<?, ?> tolerance = (Map<?, ?>) json.get("tolerance");
        double measured = number(tolerance.get("modes_max_abs_top5_logprob_diff"));
        List<Prompt> prompts = ((List<?>) json.get("prompts")).stream().map(p -> prompt((Map<?, ?>) p)).toList();
        return new ParityFixture(name, (String) json.get("type"), Fixtures.path("parity/" + json.get("model")),
                roundUp(measured), prompts);
    }

    /**
     * The README's suggested tolerance for a measured maximum: the next multiple of 0.05
     * (0.092 → 0.10, 0.707 → 0.75, 0.531 → 0.55, 1.388 → 1.40).
     */
    static double roundUp(double measured) {
        return Math.ceil(measured * TOLERANCE_STEPS_PER_UNIT - 1e-9) / TOLERANCE_STEPS_PER_UNIT;
    }

    private static Prompt prompt(Map<?, ?> p) {
        Map<?, ?> alternatives = (Map<?, ?>) p.get("alternatives");
        List<Step> batched = alternatives == null || alternatives.get("batched_prefix_eval") == null ? null
                : steps(((Map<?, ?>) alternatives.get("batched_prefix_eval")).get("steps"));
        return new Prompt((String) p.get("name"), ints(p.get("prompt_ids")), ints(p.get("generated_ids")),
                ints(p.get("generated_ids_flash_attn")), (int) number(p.get("compare_prefix_len")),
                steps(p.get("steps")), steps(p.get("steps_flash_attn")), batched);
    }

    private static List<Step> steps(Object list) {
        return ((List<?>) list).stream().map(o -> {
            Map<?, ?> s = (Map<?, ?>) o;
            List<?> top = (List<?>) s.get("top5");
            int[] ids = new int[top.size()];
            double[] logprobs = new double[top.size()];
            for (int i = 0; i < top.size(); i++) {
                List<?> pair = (List<?>) top.get(i);
                ids[i] = (int) number(pair.get(0));
                logprobs[i] = number(pair.get(1));
            }
            return new Step((int) number(s.get("step")), (int) number(s.get("id")), number(s.get("logprob")), ids,
                    logprobs);
        }).toList();
    }

    private static int[] ints(Object list) {
        return ((List<?>) list).stream().mapToInt(o -> (int) number(o)).toArray();
    }

    private static double number(Object o) {
        return ((Number) o).doubleValue();
    }

    @Override
    public String toString() {
        return type;
    }
}
