package io.nereid.engine.cpu.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nereid.engine.model.RopeScaling;
import org.junit.jupiter.api.Test;

/**
 * The tables against a separate, deliberately different computation: the Llama 3 scaling is
 * re-derived here in Hugging Face's masked ("torch.where") form, linear scaling by dividing the
 * position rather than the frequency.
 */
class RopeTablesTest {

    @Test
    void unscaledTablesAreCosAndSinOfPositionTimesThetaPower() {
        int positions = 50, rotDim = 16;
        RopeTables t = RopeTables.compute(positions, rotDim, 10000, new RopeScaling.None());
        for (int p = 0; p < positions; p++) {
            for (int i = 0; i < rotDim / 2; i++) {
                double angle = p / Math.pow(10000, (2.0 * i) / rotDim);
                assertEquals(Math.cos(angle), t.cos()[p * rotDim / 2 + i], 1e-7, "cos p=" + p + " i=" + i);
                assertEquals(Math.sin(angle), t.sin()[p * rotDim / 2 + i], 1e-7, "sin p=" + p + " i=" + i);
            }
        }
    }

    @Test
    void linearScalingDividesThePosition() {
        int rotDim = 8;
        double factor = 4;
        RopeTables t = RopeTables.compute(40, rotDim, 10000, new RopeScaling.Linear(factor));
        for (int p = 0; p < 40; p++) {
            for (int i = 0; i < rotDim / 2; i++) {
                double angle = (p / factor) * Math.pow(10000, -(2.0 * i) / rotDim);
                assertEquals(Math.cos(angle), t.cos()[p * rotDim / 2 + i], 1e-7);
                assertEquals(Math.sin(angle), t.sin()[p * rotDim / 2 + i], 1e-7);
            }
        }
    }

    @Test
    void llama3ScalingMatchesTheMaskedFormOfTheHuggingFaceFormula() {
        // Llama 3.1 8B: theta 500000, head_dim 128, factor 8, low 1, high 4, original context 8192.
        RopeScaling.Llama3 scaling = new RopeScaling.Llama3(8, 1, 4, 8192);
        double[] actual = RopeTables.inverseFrequencies(128, 500000, scaling);
        double[] expected = huggingFaceLlama3(128, 500000, 8, 1, 4, 8192);
        assertArrayEquals(expected, actual, 1e-15);

        // And the three regimes really occur: kept, divided by the factor, interpolated.
        int kept = 0, divided = 0, smoothed = 0;
        for (int i = 0; i < 64; i++) {
            double base = Math.pow(500000, -2.0 * i / 128);
            if (actual[i] == base) {
                kept++;
            } else if (Math.abs(actual[i] - base / 8) < 1e-18) {
                divided++;
            } else {
                assertTrue(actual[i] > base / 8 && actual[i] < base, "interpolated between f/8 and f at i=" + i);
                smoothed++;
            }
        }
        assertEquals(64, kept + divided + smoothed);
        assertTrue(kept > 0 && divided > 0 && smoothed > 0, kept + " " + divided + " " + smoothed);
        assertEquals(1.0, actual[0], "the fastest pair (wavelength 2 pi) is never scaled");
    }

    @Test
    void llama3InterpolationIsContinuousAtBothBandEdges() {
        RopeScaling.Llama3 s = new RopeScaling.Llama3(8, 1, 4, 8192);
        double atHighEdge = 2 * Math.PI / (8192 / 4.0); // wavelength 2048: kept
        double atLowEdge = 2 * Math.PI / 8192.0;        // wavelength 8192: divided by 8
        assertEquals(atHighEdge, s.scale(atHighEdge), 1e-15);
        assertEquals(atLowEdge / 8, s.scale(atLowEdge), 1e-15);
    }

    @Test
    void tablesUseTheScaledFrequencies() {
        RopeScaling.Llama3 scaling = new RopeScaling.Llama3(32, 1, 4, 8192);
        double[] f = huggingFaceLlama3(64, 500000, 32, 1, 4, 8192);
        RopeTables t = RopeTables.compute(3000, 64, 500000, scaling);
        for (int p : new int[] {0, 1, 17, 2999}) {
            for (int i = 0; i < 32; i++) {
                assertEquals(Math.cos(p * f[i]), t.cos()[p * 32 + i], 1e-7);
                assertEquals(Math.sin(p * f[i]), t.sin()[p * 32 + i], 1e-7);
            }
        }
    }

    @Test
    void applyRotatesOnlyTheFirstRotDimDimensions() {
        RopeTables t = RopeTables.compute(4, 2, 10000, new RopeScaling.None());
        float[] x = {1, 0, 5, 6};
        t.apply(ScalarKernels.INSTANCE, x, 0, 1, 4, 1, false);
        assertArrayEquals(new float[] {(float) Math.cos(1), (float) Math.sin(1), 5, 6}, x, 1e-7f);
        assertThrows(IndexOutOfBoundsException.class, () -> t.apply(ScalarKernels.INSTANCE, x, 0, 1, 4, 4, false));
    }

    @Test
    void invalidParametersNameTheProblem() {
        var e = assertThrows(IllegalArgumentException.class, () -> new RopeScaling.Llama3(8, 4, 4, 8192));
        assertTrue(e.getMessage().contains("low_freq_factor"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RopeScaling.Linear(0));
        assertThrows(IllegalArgumentException.class, () -> RopeTables.compute(10, 7, 10000, new RopeScaling.None()));
    }

    /**
     * {@code _compute_llama3_parameters} transcribed in its vectorised form: whole-array masks
     * instead of one branch per frequency.
     */
    private static double[] huggingFaceLlama3(int dim, double base, double factor, double lowFreqFactor,
            double highFreqFactor, double oldContextLen) {
        int n = dim / 2;
        double[] invFreq = new double[n];
        double[] wavelen = new double[n];
        for (int j = 0; j < n; j++) {
            invFreq[j] = 1.0 / Math.pow(base, (2.0 * j) / dim); // torch.arange(0, dim, 2) / dim
            wavelen[j] = 2 * Math.PI / invFreq[j];
        }
        double lowFreqWavelen = oldContextLen / lowFreqFactor;
        double highFreqWavelen = oldContextLen / highFreqFactor;
        double[] invFreqLlama = new double[n];
        for (int j = 0; j < n; j++) { // torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
            invFreqLlama[j] = wavelen[j] > lowFreqWavelen ? invFreq[j] / factor : invFreq[j];
        }
        double[] result = invFreqLlama.clone();
        for (int j = 0; j < n; j++) {
            double smoothFactor = (oldContextLen / wavelen[j] - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
            double smoothed = (1 - smoothFactor) * invFreqLlama[j] / factor + smoothFactor * invFreqLlama[j];
            boolean isMediumFreq = !(wavelen[j] < highFreqWavelen) && !(wavelen[j] > lowFreqWavelen);
            if (isMediumFreq) {
                result[j] = smoothed;
            }
        }
        return result;
    }
}
