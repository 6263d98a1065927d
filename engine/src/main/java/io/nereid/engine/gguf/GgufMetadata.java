package io.nereid.engine.gguf;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The key/value metadata of a GGUF file, decoded once when the file is opened and independent of
 * the file's mapping: it stays valid after {@link GgufFile#close()}. Keys keep file order.
 *
 * <p>Getters ({@code getX}) throw {@link GgufException} naming the key when it is missing
 * ({@link GgufException.Reason#MISSING_KEY}), has another type ({@code WRONG_TYPE}) or does not
 * fit the Java type ({@code OUT_OF_RANGE}). Finders ({@code findX}) return empty only when the key
 * is absent; a present key of the wrong type still throws. Integer getters accept every integer
 * value type, float getters both float types.
 *
 * <p>Immutable and thread-safe.
 */
public final class GgufMetadata {

    /** One decoded value: its type and its raw Java value (see {@link GgufValueType}). */
    record Value(GgufValueType type, Object raw) {
    }

    private final String source;
    private final Map<String, Value> values;

    /** Takes ownership of {@code values} (insertion-ordered). */
    GgufMetadata(String source, LinkedHashMap<String, Value> values) {
        this.source = Objects.requireNonNull(source, "source");
        this.values = Collections.unmodifiableMap(values);
    }

    /** The file this metadata was read from, as named in error messages. */
    public String source() {
        return source;
    }

    public boolean contains(String key) {
        return values.containsKey(key);
    }

    /** All keys, in file order (unmodifiable). */
    public Set<String> keys() {
        return values.keySet();
    }

    public int size() {
        return values.size();
    }

    /** The value type of {@code key}. */
    public GgufValueType type(String key) {
        return require(key).type();
    }

    /**
     * The raw value of {@code key}: {@code Long} for every integer type (unsigned zero-extended,
     * UINT64 as its bit pattern), {@code Float}, {@code Double}, {@code Boolean}, {@code String}
     * or {@link GgufArray}.
     */
    public Object raw(String key) {
        return require(key).raw();
    }

    /** {@code general.architecture}, if present. */
    public Optional<String> architecture() {
        return findString("general.architecture");
    }

    // ---- strings ----

    public String getString(String key) {
        return (String) require(key, GgufValueType.STRING).raw();
    }

    public Optional<String> findString(String key) {
        return contains(key) ? Optional.of(getString(key)) : Optional.empty();
    }

    // ---- integers ----

    /** A signed integer value of any integer type. UINT64 values above Long.MAX_VALUE are out of range. */
    public long getLong(String key) {
        Value v = requireInteger(key);
        long raw = (Long) v.raw();
        if (v.type() == GgufValueType.UINT64 && raw < 0) {
            throw outOfRange(key, Long.toUnsignedString(raw) + " (UINT64) does not fit in a signed long");
        }
        return raw;
    }

    public OptionalLong findLong(String key) {
        return contains(key) ? OptionalLong.of(getLong(key)) : OptionalLong.empty();
    }

    /**
     * A non-negative integer value of any integer type; a UINT64 is returned as its bit pattern
     * (compare with {@link Long#compareUnsigned}). Negative values of signed types are out of range.
     */
    public long getUnsigned(String key) {
        Value v = requireInteger(key);
        long raw = (Long) v.raw();
        if (v.type() != GgufValueType.UINT64 && raw < 0) {
            throw outOfRange(key, raw + " (" + v.type() + ") is negative");
        }
        return raw;
    }

    /** An integer value of any integer type that fits in an int (token ids, counts). */
    public int getInt(String key) {
        long v = getLong(key);
        if (v != (int) v) {
            throw outOfRange(key, v + " (" + type(key) + ") does not fit in an int");
        }
        return (int) v;
    }

    public OptionalInt findInt(String key) {
        return contains(key) ? OptionalInt.of(getInt(key)) : OptionalInt.empty();
    }

    // ---- bools ----

    public boolean getBool(String key) {
        return (Boolean) require(key, GgufValueType.BOOL).raw();
    }

    public Optional<Boolean> findBool(String key) {
        return contains(key) ? Optional.of(getBool(key)) : Optional.empty();
    }

    // ---- floats ----

    /** A FLOAT32 value, or a FLOAT64 narrowed to float. */
    public float getFloat(String key) {
        return (float) getDouble(key);
    }

    public Optional<Float> findFloat(String key) {
        return contains(key) ? Optional.of(getFloat(key)) : Optional.empty();
    }

    /** A FLOAT32 (widened exactly) or FLOAT64 value. */
    public double getDouble(String key) {
        Value v = require(key);
        if (!v.type().isFloat()) {
            throw wrongType(key, v.type(), "FLOAT32 or FLOAT64");
        }
        return ((Number) v.raw()).doubleValue();
    }

    public OptionalDouble findDouble(String key) {
        return contains(key) ? OptionalDouble.of(getDouble(key)) : OptionalDouble.empty();
    }

    // ---- arrays ----

    /** Any ARRAY value. */
    public GgufArray getArray(String key) {
        return (GgufArray) require(key, GgufValueType.ARRAY).raw();
    }

    public Optional<GgufArray> findArray(String key) {
        return contains(key) ? Optional.of(getArray(key)) : Optional.empty();
    }

    /** An array of STRING as an unmodifiable list (no copy of the elements). */
    public List<String> getStringArray(String key) {
        return requireArray(key, GgufValueType.STRING).asStringList();
    }

    /** An array of FLOAT32 (or FLOAT64, narrowed), copied. */
    public float[] getFloatArray(String key) {
        GgufArray a = getArray(key);
        if (!a.elementType().isFloat()) {
            throw wrongArrayType(key, a, "FLOAT32 or FLOAT64");
        }
        return a.toFloatArray();
    }

    /** An array of any integer element type as ints, copied; elements outside the int range are errors. */
    public int[] getIntArray(String key) {
        GgufArray a = requireIntegerArray(key);
        try {
            return a.toIntArray();
        } catch (ArithmeticException e) {
            throw outOfRange(key, "array of " + a.elementType() + ": " + e.getMessage());
        }
    }

    /** An array of any integer element type as longs (UINT64 as bit patterns), copied. */
    public long[] getLongArray(String key) {
        return requireIntegerArray(key).toLongArray();
    }

    // ---- checks ----

    private Value require(String key) {
        Value v = values.get(Objects.requireNonNull(key, "key"));
        if (v == null) {
            throw new GgufException(GgufException.Reason.MISSING_KEY, source, "metadata key '" + key + "' is missing");
        }
        return v;
    }

    private Value require(String key, GgufValueType type) {
        Value v = require(key);
        if (v.type() != type) {
            throw wrongType(key, v.type(), type.name());
        }
        return v;
    }

    private Value requireInteger(String key) {
        Value v = require(key);
        if (!v.type().isInteger()) {
            throw wrongType(key, v.type(), "an integer type");
        }
        return v;
    }

    private GgufArray requireArray(String key, GgufValueType elementType) {
        GgufArray a = getArray(key);
        if (a.elementType() != elementType) {
            throw wrongArrayType(key, a, elementType.name());
        }
        return a;
    }

    private GgufArray requireIntegerArray(String key) {
        GgufArray a = getArray(key);
        if (!a.elementType().isInteger()) {
            throw wrongArrayType(key, a, "an integer type");
        }
        return a;
    }

    private GgufException wrongType(String key, GgufValueType actual, String expected) {
        return new GgufException(GgufException.Reason.WRONG_TYPE, source,
                "metadata key '" + key + "' has type " + actual + ", expected " + expected);
    }

    private GgufException wrongArrayType(String key, GgufArray a, String expected) {
        return new GgufException(GgufException.Reason.WRONG_TYPE, source,
                "metadata key '" + key + "' is an array of " + a.elementType() + ", expected elements of " + expected);
    }

    private GgufException outOfRange(String key, String detail) {
        return new GgufException(GgufException.Reason.OUT_OF_RANGE, source, "metadata key '" + key + "': " + detail);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufMetadata m && m.values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return "GgufMetadata[" + source + ", " + values.size() + " keys]";
    }
}
