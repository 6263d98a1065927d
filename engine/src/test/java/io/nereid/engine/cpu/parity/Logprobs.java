package io.nereid.engine.cpu.parity;

import io.nereid.engine.cpu.parity.ParityFixture.AttentionMode;
import io.nereid.engine.cpu.parity.ParityFixture.Prompt;
import io.nereid.engine.cpu.parity.ParityFixture.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * ln softmax of raw logits, as llama-server reports them, and the two measures the parity tests
 * take: how far our log-probabilities are from a reference step's, and how far two runs' logit
 * rows are from each other. Log-sums are taken in double, so what is measured is the logits'
 * difference, not this class's rounding.
 */
final class Logprobs {

    private Logprobs() {
    }

    /** ln Σ exp(logits): {@code logits[i] - logSumExp(logits)} is ln softmax(logits)[i]. */
    static double logSumExp(float[] logits) {
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (float l : logits) {
            sum += Math.exp(l - max);
        }
        return max + Math.log(sum);
    }

    /**
     * The largest |ours − reference| found, where, and the two values there.
     *
     * @param where    model, run and position, for the failure message
     * @param ours     our log-probability there
     * @param expected the reference's
     */
    record Deviation(double max, String where, double ours, double expected) {

        static final Deviation NONE = new Deviation(0, "nowhere", 0, 0);

        Deviation larger(Deviation other) {
            return other.max > max ? other : this;
        }

        @Override
        public String toString() {
            return String.format("%.4f (%s: ours %.5f, reference %.5f)", max, where, ours, expected);
        }
    }

    /**
     * Per-step deviations of a teacher-forced run: the worst, and each step's largest, as the
     * fixture README tabulates llama.cpp's own (median, p90, step 0).
     *
     * @param worst   the largest over every step
     * @param perStep each compared step's largest, sorted
     * @param stepZero each prompt's step 0 (the prompt alone), sorted
     */
    record Deviations(Deviation worst, double[] perStep, double[] stepZero) {

        double max() {
            return worst.max();
        }

        double quantile(double q) {
            return perStep.length == 0 ? 0 : perStep[(int) Math.min(perStep.length - 1, Math.floor(q * perStep.length))];
        }

        @Override
        public String toString() {
            return String.format("max %s, median %.3f, p90 %.3f, step 0 %.3f-%.3f over %d steps", worst,
                    quantile(0.5), quantile(0.9), stepZero.length == 0 ? 0 : stepZero[0],
                    stepZero.length == 0 ? 0 : stepZero[stepZero.length - 1], perStep.length);
        }
    }

    /**
     * |Δlogprob| over every prompt of {@code fixture} and every step of its reference
     * {@code steps} (null for a prompt: nothing to compare), {@code logits} being
     * {@link ParityRuns#teacherForced(io.nereid.engine.model.ModelSource, ParityFixture, AttentionMode,
     * ForwardPath, ParityRuns.Settings)}'s.
     */
    static Deviations against(ParityFixture fixture, float[][][] logits, Function<Prompt, List<Step>> steps,
            String run) {
        Deviation worst = Deviation.NONE;
        List<Double> perStep = new ArrayList<>();
        List<Double> stepZero = new ArrayList<>();
        for (int p = 0; p < logits.length; p++) {
            Prompt prompt = fixture.prompts().get(p);
            List<Step> reference = steps.apply(prompt);
            for (int k = 0; reference != null && k < reference.size(); k++) {
                Step s = reference.get(k);
                Deviation d = against(logits[p][s.step()], s, fixture + " " + run + ", " + prompt.name() + " step "
                        + s.step());
                worst = worst.larger(d);
                perStep.add(d.max());
                if (s.step() == 0) {
                    stepZero.add(d.max());
                }
            }
        }
        return new Deviations(worst, sorted(perStep), sorted(stepZero));
    }

    private static double[] sorted(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }

    /** The largest |Δlogprob| over the reference step's top-5 ids and its chosen id. */
    static Deviation against(float[] logits, Step reference, String where) {
        double lse = logSumExp(logits);
        Deviation worst = deviation(logits, lse, reference.id(), reference.logprob(), where);
        for (int i = 0; i < reference.topIds().length; i++) {
            worst = worst.larger(deviation(logits, lse, reference.topIds()[i], reference.topLogprobs()[i], where));
        }
        return worst;
    }

    private static Deviation deviation(float[] logits, double lse, int id, double expected, String where) {
        double ours = logits[id] - lse;
        return new Deviation(Math.abs(ours - expected), where + ", id " + id, ours, expected);
    }

    /**
     * How two runs over the same positions differ.
     *
     * @param rows            rows compared
     * @param identicalRows   rows equal bit for bit
     * @param argmaxDiffers   rows whose argmax differs
     * @param maxLogit        max |Δlogit| over every entry
     * @param maxLogprob      max |Δ ln softmax| over every entry
     */
    record RowDifference(int rows, int identicalRows, int argmaxDiffers, double maxLogit, double maxLogprob) {

        static final RowDifference NONE = new RowDifference(0, 0, 0, 0, 0);

        boolean bitIdentical() {
            return identicalRows == rows;
        }

        RowDifference plus(RowDifference o) {
            return new RowDifference(rows + o.rows, identicalRows + o.identicalRows, argmaxDiffers + o.argmaxDiffers,
                    Math.max(maxLogit, o.maxLogit), Math.max(maxLogprob, o.maxLogprob));
        }

        @Override
        public String toString() {
            return bitIdentical() ? "bit-identical (" + rows + " rows)"
                    : String.format("max |Δlogit| %.3g, max |Δlogprob| %.3g, %d of %d rows bit-identical,"
                            + " argmax differs in %d", maxLogit, maxLogprob, identicalRows, rows, argmaxDiffers);
        }
    }

    /**
     * Compares two teacher-forced runs ((prompts) of (rows) of vocabSize logits) row by row, over
     * the whole vocabulary.
     */
    static RowDifference compare(float[][][] a, float[][][] b) {
        RowDifference total = RowDifference.NONE;
        for (int p = 0; p < a.length; p++) {
            total = total.plus(compare(a[p], b[p]));
        }
        return total;
    }

    private static RowDifference compare(float[][] a, float[][] b) {
        RowDifference total = RowDifference.NONE;
        for (int r = 0; r < a.length; r++) {
            double la = logSumExp(a[r]);
            double lb = logSumExp(b[r]);
            double maxLogit = 0;
            double maxLogprob = 0;
            for (int i = 0; i < a[r].length; i++) {
                maxLogit = Math.max(maxLogit, Math.abs(a[r][i] - b[r][i]));
                maxLogprob = Math.max(maxLogprob, Math.abs((a[r][i] - la) - (b[r][i] - lb)));
            }
            boolean identical = Arrays.equals(a[r], b[r]);
            boolean argmaxDiffers = ParityRuns.argmax(a[r]) != ParityRuns.argmax(b[r]);
            total = total.plus(new RowDifference(1, identical ? 1 : 0, argmaxDiffers ? 1 : 0, maxLogit, maxLogprob));
        }
        return total;
    }
}
