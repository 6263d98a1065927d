package io.nereid.engine.gguf;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * An immutable GGUF metadata array: an element type and its elements, held in a primitive
 * array of the element's width ({@code byte[]} for UINT8/INT8/BOOL, {@code short[]} for
 * UINT16/INT16, {@code int[]} for UINT32/INT32, {@code long[]} for UINT64/INT64, {@code float[]},
 * {@code double[]}, {@code String[]}, or {@code GgufArray[]} for nested arrays). Unsigned
 * elements are stored as their bit pattern and widened without sign by {@link #getLong}.
 *
 * <p>Accessors for another element type than the array's throw {@link IllegalStateException};
 * {@link GgufMetadata}'s getters check the type first and name the key instead. Thread-safe:
 * never mutated after construction, and every bulk accessor returns a copy or an unmodifiable
 * view.
 */
public final class GgufArray {

    private final GgufValueType elementType;
    private final Object values;
    private final int size;

    /** Takes ownership of {@code values}, which must be the primitive array for {@code elementType}. */
    GgufArray(GgufValueType elementType, Object values, int size) {
        this.elementType = Objects.requireNonNull(elementType, "elementType");
        this.values = Objects.requireNonNull(values, "values");
        this.size = size;
    }

    public static GgufArray ofUInt8(byte[] v) {
        return new GgufArray(GgufValueType.UINT8, v.clone(), v.length);
    }

    public static GgufArray ofInt8(byte[] v) {
        return new GgufArray(GgufValueType.INT8, v.clone(), v.length);
    }

    public static GgufArray ofUInt16(short[] v) {
        return new GgufArray(GgufValueType.UINT16, v.clone(), v.length);
    }

    public static GgufArray ofInt16(short[] v) {
        return new GgufArray(GgufValueType.INT16, v.clone(), v.length);
    }

    /** UINT32 elements given as their bit patterns. */
    public static GgufArray ofUInt32(int[] v) {
        return new GgufArray(GgufValueType.UINT32, v.clone(), v.length);
    }

    public static GgufArray ofInt32(int[] v) {
        return new GgufArray(GgufValueType.INT32, v.clone(), v.length);
    }

    /** UINT64 elements given as their bit patterns. */
    public static GgufArray ofUInt64(long[] v) {
        return new GgufArray(GgufValueType.UINT64, v.clone(), v.length);
    }

    public static GgufArray ofInt64(long[] v) {
        return new GgufArray(GgufValueType.INT64, v.clone(), v.length);
    }

    public static GgufArray ofFloat32(float[] v) {
        return new GgufArray(GgufValueType.FLOAT32, v.clone(), v.length);
    }

    public static GgufArray ofFloat64(double[] v) {
        return new GgufArray(GgufValueType.FLOAT64, v.clone(), v.length);
    }

    public static GgufArray ofBools(boolean[] v) {
        byte[] bytes = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            bytes[i] = (byte) (v[i] ? 1 : 0);
        }
        return new GgufArray(GgufValueType.BOOL, bytes, v.length);
    }

    public static GgufArray ofStrings(List<String> v) {
        String[] copy = v.toArray(String[]::new);
        for (String s : copy) {
            Objects.requireNonNull(s, "null string element");
        }
        return new GgufArray(GgufValueType.STRING, copy, copy.length);
    }

    /** An array of arrays; each inner array keeps its own element type. */
    public static GgufArray ofArrays(List<GgufArray> v) {
        GgufArray[] copy = v.toArray(GgufArray[]::new);
        for (GgufArray a : copy) {
            Objects.requireNonNull(a, "null array element");
        }
        return new GgufArray(GgufValueType.ARRAY, copy, copy.length);
    }

    public GgufValueType elementType() {
        return elementType;
    }

    public int size() {
        return size;
    }

    /** Element {@code i} of an integer array; unsigned types zero-extended, UINT64 as its bit pattern. */
    public long getLong(int i) {
        Objects.checkIndex(i, size);
        return switch (elementType) {
            case UINT8 -> ((byte[]) values)[i] & 0xFFL;
            case INT8 -> ((byte[]) values)[i];
            case UINT16 -> ((short[]) values)[i] & 0xFFFFL;
            case INT16 -> ((short[]) values)[i];
            case UINT32 -> ((int[]) values)[i] & 0xFFFF_FFFFL;
            case INT32 -> ((int[]) values)[i];
            case UINT64, INT64 -> ((long[]) values)[i];
            default -> throw wrongType("an integer");
        };
    }

    /** Element {@code i} of a FLOAT32 or FLOAT64 array. */
    public double getDouble(int i) {
        Objects.checkIndex(i, size);
        return switch (elementType) {
            case FLOAT32 -> ((float[]) values)[i];
            case FLOAT64 -> ((double[]) values)[i];
            default -> throw wrongType("a float");
        };
    }

    public boolean getBool(int i) {
        Objects.checkIndex(i, size);
        requireType(GgufValueType.BOOL);
        return ((byte[]) values)[i] != 0;
    }

    public String getString(int i) {
        Objects.checkIndex(i, size);
        requireType(GgufValueType.STRING);
        return ((String[]) values)[i];
    }

    public GgufArray getArray(int i) {
        Objects.checkIndex(i, size);
        requireType(GgufValueType.ARRAY);
        return ((GgufArray[]) values)[i];
    }

    /** The elements of a STRING array as an unmodifiable list (a view, no copy). */
    public List<String> asStringList() {
        requireType(GgufValueType.STRING);
        return Collections.unmodifiableList(Arrays.asList((String[]) values));
    }

    /** The elements of an ARRAY array as an unmodifiable list. */
    public List<GgufArray> asArrayList() {
        requireType(GgufValueType.ARRAY);
        return Collections.unmodifiableList(Arrays.asList((GgufArray[]) values));
    }

    /**
     * The elements of an integer array as ints (a copy).
     *
     * @throws ArithmeticException naming the index if an element does not fit in an int
     */
    public int[] toIntArray() {
        return switch (elementType) {
            case INT32 -> ((int[]) values).clone();
            case UINT8, INT8, UINT16, INT16 -> {
                int[] out = new int[size];
                for (int i = 0; i < size; i++) {
                    out[i] = (int) getLong(i);
                }
                yield out;
            }
            case UINT32, INT64, UINT64 -> {
                int[] out = new int[size];
                for (int i = 0; i < size; i++) {
                    long v = getLong(i);
                    if (v != (int) v) {
                        throw new ArithmeticException("element " + i + " = " + unsignedAware(v)
                                + " does not fit in an int");
                    }
                    out[i] = (int) v;
                }
                yield out;
            }
            default -> throw wrongType("an integer");
        };
    }

    /** The elements of an integer array as longs (a copy; UINT64 as bit patterns). */
    public long[] toLongArray() {
        if (elementType == GgufValueType.UINT64 || elementType == GgufValueType.INT64) {
            return ((long[]) values).clone();
        }
        if (!elementType.isInteger()) {
            throw wrongType("an integer");
        }
        long[] out = new long[size];
        for (int i = 0; i < size; i++) {
            out[i] = getLong(i);
        }
        return out;
    }

    /** The elements of a FLOAT32 array, or a FLOAT64 array narrowed to float (a copy). */
    public float[] toFloatArray() {
        return switch (elementType) {
            case FLOAT32 -> ((float[]) values).clone();
            case FLOAT64 -> {
                double[] d = (double[]) values;
                float[] out = new float[size];
                for (int i = 0; i < size; i++) {
                    out[i] = (float) d[i];
                }
                yield out;
            }
            default -> throw wrongType("a float");
        };
    }

    /** The elements of a FLOAT32 or FLOAT64 array as doubles (a copy). */
    public double[] toDoubleArray() {
        double[] out = new double[size];
        for (int i = 0; i < size; i++) {
            out[i] = getDouble(i);
        }
        return out;
    }

    /** The backing array, not copied: for the writer and the reader's fast paths only. */
    Object backingArray() {
        return values;
    }

    private String unsignedAware(long v) {
        return elementType == GgufValueType.UINT64 ? Long.toUnsignedString(v) : Long.toString(v);
    }

    private void requireType(GgufValueType expected) {
        if (elementType != expected) {
            throw wrongType(expected.name());
        }
    }

    private IllegalStateException wrongType(String expected) {
        return new IllegalStateException("array of " + elementType + " read as " + expected + " array");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufArray a && a.elementType == elementType
                && Arrays.deepEquals(new Object[] {values}, new Object[] {a.values});
    }

    @Override
    public int hashCode() {
        return 31 * elementType.hashCode() + Arrays.deepHashCode(new Object[] {values});
    }

    @Override
    public String toString() {
        return "GgufArray[" + elementType + " x " + size + "]";
    }
}
