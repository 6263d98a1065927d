package io.nereid.engine.backend;

import java.util.Locale;

/**
 * The element type of the K/V cache. F16 halves its memory (llama.cpp's default cache type);
 * each value is rounded once, to nearest even, when it is written, and widened exactly when
 * attention reads it. Queries, scores and outputs stay F32 either way. BF16 keeps F32's range with
 * 8 significant bits (for models whose keys overflow F16); the CUDA backend has it, the CPU backend
 * refuses it.
 */
public enum KvPrecision {
    /** IEEE 754 binary32, as computed: no rounding. */
    F32(Float.BYTES),
    /** IEEE 754 binary16 ({@link Float#floatToFloat16}): 11 significant bits, largest finite 65504. */
    F16(Short.BYTES),
    /** bfloat16: F32's upper half rounded to nearest even: 8 significant bits, F32's range. */
    BF16(Short.BYTES);

    private final int bytes;

    KvPrecision(int bytes) {
        this.bytes = bytes;
    }

    /** Bytes per stored element. */
    public int bytes() {
        return bytes;
    }

    /**
     * {@code f16}, {@code bf16} or {@code f32}, any case (the names {@code --kv-type} and llama.cpp's
     * {@code --cache-type-k} use; {@code bfloat16} and {@code float16} too, as vLLM writes them).
     *
     * @throws IllegalArgumentException naming the value and the accepted ones
     */
    public static KvPrecision parse(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "f16", "float16" -> F16;
            case "bf16", "bfloat16" -> BF16;
            case "f32", "float32" -> F32;
            default -> throw new IllegalArgumentException("KV cache type '" + name + "' is not one of f16, bf16, f32");
        };
    }
}
