package io.nereid.engine.safetensors;

import java.util.Objects;

/**
 * A safetensors file could not be read or its header is invalid. The message names the file,
 * the reason and, where there is one, the tensor; {@link #reason()} gives the reason as a value.
 */
public final class SafetensorsException extends RuntimeException {

    /** Why a file was rejected. */
    public enum Reason {
        /** The file could not be opened or mapped. */
        IO,
        /** Shorter than the 8-byte header length, or shorter than the header it announces. */
        TRUNCATED,
        /** The header is not UTF-8 JSON of the expected shape (an object of tensor entries, each with
         * {@code dtype}, {@code shape} and {@code data_offsets}), or is implausibly long. */
        BAD_HEADER,
        /** A {@code dtype} that is not a safetensors type. */
        UNKNOWN_DTYPE,
        /** A shape whose size overflows, or that does not match the length of its byte range. */
        BAD_SHAPE,
        /** A byte range that ends past the end of the file or begins after it ends. */
        OUT_OF_BOUNDS,
        /** Two tensors share bytes. */
        OVERLAP,
        /** Bytes of the data section that no tensor covers (the format requires none). */
        GAP
    }

    private final Reason reason;

    public SafetensorsException(Reason reason, String source, String detail) {
        this(reason, source, detail, null);
    }

    public SafetensorsException(Reason reason, String source, String detail, Throwable cause) {
        super("safetensors file " + source + ": " + detail, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
