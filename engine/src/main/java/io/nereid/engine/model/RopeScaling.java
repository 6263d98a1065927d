package io.nereid.engine.model;

/**
 * How a model stretches its rotary frequencies past the context it was trained on: the
 * {@code rope_scaling} object of a Hugging Face {@code config.json}. Each variant maps the base
 * inverse frequency {@code theta^(-2i/rotDim)} of one rotated pair to the one actually used.
 */
public sealed interface RopeScaling {

    /** The scaled inverse frequency (radians per position) for a base one. */
    double scale(double inverseFrequency);

    /** No scaling: {@code rope_scaling} absent or {@code null}. */
    record None() implements RopeScaling {
        @Override
        public double scale(double inverseFrequency) {
            return inverseFrequency;
        }
    }

    /**
     * {@code "rope_type": "linear"}: positions are divided by {@code factor}, which is the same
     * as dividing every frequency by it.
     */
    record Linear(double factor) implements RopeScaling {
        public Linear {
            if (!(factor > 0)) {
                throw new IllegalArgumentException("rope_scaling linear: factor must be > 0, got " + factor);
            }
        }

        @Override
        public double scale(double inverseFrequency) {
            return inverseFrequency / factor;
        }
    }

    /**
     * {@code "rope_type": "llama3"} (Llama 3.1 and later), as in Hugging Face transformers
     * {@code _compute_llama3_parameters}: frequencies whose wavelength is shorter than
     * {@code originalMaxPositions / highFreqFactor} are kept, those longer than
     * {@code originalMaxPositions / lowFreqFactor} are divided by {@code factor}, and the band in
     * between interpolates smoothly between the two. The attention factor is 1.
     */
    record Llama3(double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositions)
            implements RopeScaling {
        public Llama3 {
            if (!(factor > 0) || !(lowFreqFactor > 0) || !(highFreqFactor > lowFreqFactor) || originalMaxPositions <= 0) {
                throw new IllegalArgumentException("rope_scaling llama3: need factor > 0, 0 < low_freq_factor"
                        + " < high_freq_factor and original_max_position_embeddings > 0, got factor " + factor
                        + ", low_freq_factor " + lowFreqFactor + ", high_freq_factor " + highFreqFactor
                        + ", original_max_position_embeddings " + originalMaxPositions);
            }
        }

        @Override
        public double scale(double inverseFrequency) {
            double wavelength = 2 * Math.PI / inverseFrequency;
            double highFreqWavelength = originalMaxPositions / highFreqFactor;
            double lowFreqWavelength = originalMaxPositions / lowFreqFactor;
            if (wavelength < highFreqWavelength) {
                return inverseFrequency;
            }
            if (wavelength > lowFreqWavelength) {
                return inverseFrequency / factor;
            }
            double smooth = (originalMaxPositions / wavelength - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
            return (1 - smooth) * inverseFrequency / factor + smooth * inverseFrequency;
        }
    }
}
