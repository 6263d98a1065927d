package io.nereid.engine.model;

import io.nereid.engine.gguf.GgmlType;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The file types {@code bin/nereid quantize} writes: llama.cpp's {@code llama_ftype}, whose id a
 * quantized GGUF stores as {@code general.file_type}. A file type names a base tensor type; the
 * {@code _S} / {@code _M} types (and Q4_0, Q8_0, Q6_K unless {@code --pure}) give some tensors
 * another one ({@link QuantizationMix}).
 */
public enum LlamaFileType {
    Q8_0(7, GgmlType.Q8_0),
    Q4_0(2, GgmlType.Q4_0),
    Q4_K_M(15, GgmlType.Q4_K),
    Q4_K_S(14, GgmlType.Q4_K),
    Q5_K_M(17, GgmlType.Q5_K),
    Q5_K_S(16, GgmlType.Q5_K),
    Q6_K(18, GgmlType.Q6_K),
    F16(1, GgmlType.F16),
    BF16(32, GgmlType.BF16),
    F32(0, GgmlType.F32);

    private final int id;
    private final GgmlType baseType;

    LlamaFileType(int id, GgmlType baseType) {
        this.id = id;
        this.baseType = baseType;
    }

    /** {@code LLAMA_FTYPE_*}: the value of {@code general.file_type} (llama.cpp's {@code ALL_F32} is 0). */
    public int id() {
        return id;
    }

    /** The type of every tensor that is quantized and not given another one by the mix. */
    public GgmlType baseType() {
        return baseType;
    }

    /** The name on the command line, as llama-quantize's in lower case: {@code q4_k_m}. */
    public String commandName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The type named {@code name} on the command line, in any case. */
    public static Optional<LlamaFileType> fromCommandName(String name) {
        return Arrays.stream(values()).filter(t -> t.commandName().equalsIgnoreCase(name)).findFirst();
    }

    /** {@code q8_0, q4_0, ...}, for usage messages. */
    public static String commandNames() {
        return Arrays.stream(values()).map(LlamaFileType::commandName).collect(Collectors.joining(", "));
    }
}
