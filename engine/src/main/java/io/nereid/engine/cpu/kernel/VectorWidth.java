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
 * the moves of {@code L} bytes, for which 128 bits has no species.
 *
 * <p>One width per JVM, {@link #current()}: the machine's preferred species, or the one
 * {@code -D}{@value #BITS_PROPERTY}{@code =128|256|512} names (the Vector API runs any species
 * anywhere, a non-native one slowly; the {@code vector-*} test executions in {@code engine/pom.xml}
 * use it to check each width in a JVM of its own). Every kernel reads it from a static final
 * field. That is what makes the species compile-time constants: C2 compiles a Vector API operation
 * to vector instructions only when its species is one. A width held in an instance field is not
 * one even when only one class is ever loaded (the tiled paths of a matmul, their vectors boxed,
 * ran at 40 % of the speed); a static final object is, and so is every species its methods return.
 *
 * <p>Stateless and thread-safe. Loading this class needs {@code jdk.incubator.vector}: only
 * {@link Kernels} and code it has chosen touch it.
 */
public abstract sealed class VectorWidth permits VectorWidth.Bits128, VectorWidth.Bits256, VectorWidth.Bits512 {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT_IN_BYTES = MethodHandles.byteArrayViewVarHandle(int[].class,
            ByteOrder.LITTLE_ENDIAN);

    /** Sets the width of the vector kernels for the whole JVM: 128, 256 or 512. */
    public static final String BITS_PROPERTY = "nereid.kernels.bits";

    private VectorWidth() {
    }

    /**
     * The width every vector kernel of this JVM runs at: {@value #BITS_PROPERTY} if set, else the
     * preferred species' (see {@link #configuredBits}).
     *
     * @throws IllegalStateException if that is not 128, 256 or 512 ({@link Kernels} then chooses
     *     scalar kernels and never asks)
     */
    public static VectorWidth current() {
        VectorWidth w = Current.WIDTH;
        if (w == null) {
            throw new IllegalStateException("no vector width: " + configuredBits()
                    + " bits is not one the vector kernels are written for (128, 256, 512)");
        }
        return w;
    }

    /** The bits {@value #BITS_PROPERTY} names, or the preferred species' when it is unset or not a number. */
    static int configuredBits() {
        String set = System.getProperty(BITS_PROPERTY);
        if (set != null) {
            try {
                return Integer.parseInt(set.trim());
            } catch (NumberFormatException e) {
                // Kernels warns about it
            }
        }
        return preferredBitSize();
    }

    private static final class Current {
        static final VectorWidth WIDTH = switch (configuredBits()) {
            case 128, 256, 512 -> of(configuredBits());
            default -> null;
        };
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

    /**
     * The {@code L} bytes at {@code at} widened to ints, signed: where the quantized formats take
     * their bit fields apart. Shifts by a variable count and masks on int lanes compile to vector
     * instructions; on byte lanes (which x86 cannot shift) they may not, and then every vector of
     * the kernel is boxed.
     */
    public final IntVector loadInts(MemorySegment w, long at) {
        return (IntVector) loadBytes(w, at).castShape(ints(), 0);
    }

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
