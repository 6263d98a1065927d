package io.nereid.engine.model;

import java.util.Arrays;

/**
 * The transformer families the CPU runtime implements, named as GGUF's
 * {@code general.architecture}. They differ only in small switches, kept here in one place.
 */
public enum Architecture {
    /**
     * Llama 2/3/3.1/3.2 and Mistral: GGML "normal" RoPE in a GGUF (the converter permutes Q/K for
     * it), NeoX RoPE from a Hugging Face directory (see {@link ModelConfig#neoxRope}).
     */
    LLAMA("llama", false, false, false),
    /** Qwen 2 / 2.5: biases on Q, K, V; NeoX RoPE. */
    QWEN2("qwen2", true, false, true),
    /** Qwen 3: per-head RMS norm of Q and K before RoPE; NeoX RoPE. */
    QWEN3("qwen3", false, true, true);

    private final String ggufName;
    private final boolean qkvBias;
    private final boolean qkNorm;
    private final boolean neoxRope;

    Architecture(String ggufName, boolean qkvBias, boolean qkNorm, boolean neoxRope) {
        this.ggufName = ggufName;
        this.qkvBias = qkvBias;
        this.qkNorm = qkNorm;
        this.neoxRope = neoxRope;
    }

    public String ggufName() {
        return ggufName;
    }

    public boolean qkvBias() {
        return qkvBias;
    }

    public boolean qkNorm() {
        return qkNorm;
    }

    /** The RoPE style of this architecture's GGUF files. */
    public boolean neoxRope() {
        return neoxRope;
    }

    static Architecture fromGguf(String name, String source) {
        return find(name, source + ": architecture '" + name + "' (general.architecture)");
    }

    /** The architecture of a Hugging Face {@code config.json} {@code model_type} (the same names). */
    static Architecture fromHfModelType(String modelType, String source) {
        return find(modelType, source + ": model_type '" + modelType + "'");
    }

    private static Architecture find(String name, String what) {
        return Arrays.stream(values()).filter(a -> a.ggufName.equals(name)).findFirst()
                .orElseThrow(() -> new ModelLoadException(what + " is not supported; supported: llama, qwen2, qwen3"));
    }
}
