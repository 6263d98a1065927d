package io.nereid.engine.cpu.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * One vector width the Vector API kernels run at, 128, 256 or 512 bits: the species of every lane
 * type they use there, all with {@code L = floats().length()} lanes (4, 8 or 16) or twice that, and
 * the moves of {@code L} bytes, for which 128 bits has no species. {@link Kernels} passes the
 * machine's preferred width to the vector kernels of this package and of {@code cpu.tensor}; tests
 * pass each width in turn (the Vector API runs any species anywhere, a non-native one slowly).
 *
 * <p>Why a class per width and not species in fields: C2 compiles a Vector API operation to vector
 * instructions only when its species is a compile-time constant. A species read from an instance
 * field is not one, and every vector then lives boxed on the heap (a 4096-element dot: 12 times
 * slower, 24 KB allocated per call). Each subclass returns static finals, and a kernel keeps its
 * width in a final field: in a JVM that runs one width, the call site sees one class, C2 inlines
 * the call behind a class check and the species is the constant again. A JVM that runs several
 * widths through the same kernel classes loses that for them, which is why the width tests run in
 * a JVM of their own per width (the {@code vector-*} executions in {@code engine/pom.xml}).
 *
 * <p>Stateless and thread-safe. Loading this class needs {@code jdk.incubator.vector}: only
 * {@link Kernels} and code it has chosen touch it.
 */
public abstract sealed class VectorWidth permits VectorWidth.Bits128, VectorWidth.Bits256, VectorWidth.Bits512 {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_IN_BYTES = MethodHandles.byteArrayViewVarHandle(int[].class,
            ByteOrder.LITTLE_ENDIAN);

    private VectorWidth() {
    }

    /**
     * The width for {@code bits}; only the class of the width asked for is loaded.
     *
     * @throws IllegalArgumentException unless {@code bits} is 128, 256 or 512
     */
    public static VectorWidth of(int bits) {
        return switch (bits) {
            case 128 -> Bits128.INSTANCE;
            case 256 -> Bits256.INSTANCE;
            case 512 -> Bits512.INSTANCE;
            default -> throw new IllegalArgumentException(
                    "vector width of " + bits + " bits: the vector kernels run at 128, 256 or 512");
        };
    }

    /** The bit size of the machine's preferred float species, which need not be one of ours. */
    static int preferredBitSize() {
        return FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }

    /** 128, 256 or 512. */
    public final int bitSize() {
        return floats().vectorBitSize();
    }

    /** {@code L} floats: the whole width. */
    public abstract VectorSpecies<Float> floats();

    /** {@code L} ints: the whole width, the shape integer work on float bits needs. */
    public abstract VectorSpecies<Integer> ints();

    /** {@code L} shorts, one per float lane: half the width, as binary16 and bfloat16 values load. */
    public abstract VectorSpecies<Short> shorts();

    /** {@code 2L} shorts, two per float lane: the whole width. */
    public abstract VectorSpecies<Short> shortPairs();

    /** {@code 2L} bytes, two per float lane: half the width. */
    public abstract VectorSpecies<Byte> bytePairs();

    /**
     * The {@code L} bytes at {@code at}, one per float lane, in the low {@code L} lanes of a byte
     * vector; any lanes above those (at 128 bits, where the vector has 8) hold no data.
     */
    public abstract ByteVector loadBytes(MemorySegment w, long at);

    /** The low {@code L} lanes of {@code v} widened to floats, signed. */
    public final FloatVector toFloats(ByteVector v) {
        return (FloatVector) v.castShape(floats(), 0);
    }

    /** {@code v}'s lanes, integers in -128..127, narrowed to {@code L} bytes at {@code dst[off]}. */
    public abstract void storeBytes(FloatVector v, byte[] dst, int off);

    @Override
    public final String toString() {
        return bitSize() + "-bit";
    }

    /**
     * SSE, NEON. There is no 32-bit species for its 4 bytes: they travel as one int lane, read and
     * written with plain memory accesses, inside a 64-bit vector.
     */
    static final class Bits128 extends VectorWidth {

        static final Bits128 INSTANCE = new Bits128();

        @Override
        public VectorSpecies<Float> floats() {
            return FloatVector.SPECIES_128;
        }

        @Override
        public VectorSpecies<Integer> ints() {
            return IntVector.SPECIES_128;
        }

        @Override
        public VectorSpecies<Short> shorts() {
            return ShortVector.SPECIES_64;
        }

        @Override
        public VectorSpecies<Short> shortPairs() {
            return ShortVector.SPECIES_128;
        }

        @Override
        public VectorSpecies<Byte> bytePairs() {
            return ByteVector.SPECIES_64;
        }

        @Override
        public ByteVector loadBytes(MemorySegment w, long at) {
            return IntVector.broadcast(IntVector.SPECIES_64, w.get(INT, at)).reinterpretAsBytes();
        }

        @Override
        public void storeBytes(FloatVector v, byte[] dst, int off) {
            ByteVector b = (ByteVector) v.castShape(ByteVector.SPECIES_64, 0); // lanes 4..7 are zero
            INT_IN_BYTES.set(dst, off, b.reinterpretAsInts().lane(0));
        }
    }

    /** AVX2, 256-bit SVE. */
    static final class Bits256 extends VectorWidth {

        static final Bits256 INSTANCE = new Bits256();

        @Override
        public VectorSpecies<Float> floats() {
            return FloatVector.SPECIES_256;
        }

        @Override
        public VectorSpecies<Integer> ints() {
            return IntVector.SPECIES_256;
        }

        @Override
        public VectorSpecies<Short> shorts() {
            return ShortVector.SPECIES_128;
        }

        @Override
        public VectorSpecies<Short> shortPairs() {
            return ShortVector.SPECIES_256;
        }

        @Override
        public VectorSpecies<Byte> bytePairs() {
            return ByteVector.SPECIES_128;
        }

        @Override
        public ByteVector loadBytes(MemorySegment w, long at) {
            return ByteVector.fromMemorySegment(ByteVector.SPECIES_64, w, at, ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        public void storeBytes(FloatVector v, byte[] dst, int off) {
            ((ByteVector) v.castShape(ByteVector.SPECIES_64, 0)).intoArray(dst, off);
        }
    }

    /** AVX-512, 512-bit SVE. */
    static final class Bits512 extends VectorWidth {

        static final Bits512 INSTANCE = new Bits512();

        @Override
        public VectorSpecies<Float> floats() {
            return FloatVector.SPECIES_512;
        }

        @Override
        public VectorSpecies<Integer> ints() {
            return IntVector.SPECIES_512;
        }

        @Override
        public VectorSpecies<Short> shorts() {
            return ShortVector.SPECIES_256;
        }

        @Override
        public VectorSpecies<Short> shortPairs() {
            return ShortVector.SPECIES_512;
        }

        @Override
        public VectorSpecies<Byte> bytePairs() {
            return ByteVector.SPECIES_256;
        }

        @Override
        public ByteVector loadBytes(MemorySegment w, long at) {
            return ByteVector.fromMemorySegment(ByteVector.SPECIES_128, w, at, ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        public void storeBytes(FloatVector v, byte[] dst, int off) {
            ((ByteVector) v.castShape(ByteVector.SPECIES_128, 0)).intoArray(dst, off);
        }
    }
}
