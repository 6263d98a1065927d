package io.nereid.engine.gguf;

import java.util.Objects;

/**
 * A GGUF file could not be read, or its metadata does not hold what a caller asked for. The
 * message names the file, the reason and, where relevant, the key or tensor; {@link #reason()}
 * gives the same reason as a value a caller (or the gateway) can switch on.
 */
public final class GgufException extends RuntimeException {

    /** Why a file was rejected or a lookup failed. */
    public enum Reason {
        /** The file could not be opened or mapped. */
        IO,
        /** The file ends inside the header (a count, a string, a value or a tensor info). */
        TRUNCATED,
        /** The first four bytes are not {@code GGUF}. */
        BAD_MAGIC,
        /** A version other than 2 or 3, or a big-endian file. */
        UNSUPPORTED_VERSION,
        /** A metadata value type id outside 0..12. */
        UNKNOWN_VALUE_TYPE,
        /** A string length, array count, key count or tensor count larger than the file can hold. */
        BAD_LENGTH,
        /** A value that its type does not allow: a bool other than 0/1, arrays nested too deep. */
        BAD_VALUE,
        /** The same metadata key twice. */
        DUPLICATE_KEY,
        /** {@code general.alignment} is not a u32 power of two. */
        BAD_ALIGNMENT,
        /** A tensor type id that is not a known ggml type. */
        UNKNOWN_GGML_TYPE,
        /** A tensor rank outside 1..4, a negative dimension, a row length that is not a multiple
         * of the block size, or a size that overflows. */
        BAD_DIMS,
        /** The same tensor name twice. */
        DUPLICATE_TENSOR,
        /** A tensor offset that is not a multiple of the alignment. */
        MISALIGNED_TENSOR,
        /** Tensor data that ends past the end of the file. */
        TENSOR_OUT_OF_BOUNDS,
        /** A metadata key that the caller required is absent. */
        MISSING_KEY,
        /** A metadata value has another type than the caller asked for. */
        WRONG_TYPE,
        /** A metadata value does not fit the Java type asked for (a u64 above Long.MAX_VALUE as a
         * long, a negative value as unsigned, a u32 above Integer.MAX_VALUE as an int). */
        OUT_OF_RANGE,
        /** No tensor of that name. */
        NO_SUCH_TENSOR
    }

    private final Reason reason;
    private final String source;

    /**
     * @param reason why
     * @param source the file (usually its path) the problem is in
     * @param detail what was wrong, naming the key or tensor when there is one
     */
    public GgufException(Reason reason, String source, String detail) {
        this(reason, source, detail, null);
    }

    public GgufException(Reason reason, String source, String detail, Throwable cause) {
        super("GGUF file " + source + ": " + detail, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.source = source;
    }

    public Reason reason() {
        return reason;
    }

    /** The file the problem is in, as given to the reader (usually its path). */
    public String source() {
        return source;
    }
}
