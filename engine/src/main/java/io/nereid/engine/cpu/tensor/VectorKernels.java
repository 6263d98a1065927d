package io.nereid.engine.cpu.tensor;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.nereid.engine.gguf.GgmlType;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Optional;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The Vector API kernel set and the species its kernels share. Only {@link RowKernels} loads
 * this class, after checking that {@code jdk.incubator.vector} is present.
 *
 * <p>Every kernel works on {@code L = F.length()} floats at a time and widens {@code L} bytes or
 * shorts to them with one same-lane-count conversion (byte species {@link #B}, short species
 * {@link #S}), so a block of 32 weights is a whole number of steps only for {@code L} = 8 or 16:
 * 256-bit (AVX2) and 512-bit (AVX-512, SVE-512) vectors. Other shapes get the scalar set.
 *
 * <p>The kernels repeat their loop skeletons (four accumulators, two blocks per step) on purpose:
 * a shared loop calling a per-format load would be a polymorphic call that C2 may not inline,
 * and a vector that crosses a call that is not inlined is boxed on the heap, which costs more
 * than the whole computation. For the same reason each kernel body is kept small enough to be
 * inlined whole (see the comments in {@code Q5_KVector} and {@code Q6_KVector}).
 *
 * <p>Known limit: {@link WeightMatrix#matmul} calls every format through one call site. Once two
 * formats have run through it, C2 may inline both kernels into {@code matmul} and run out of its
 * node budget there, boxing vectors again (seen: F16 after F32, a 1024 x 4096 matvec going from
 * 0.45 to 1.5 ms). {@code -XX:CompileCommand=dontinline,io.nereid.engine.cpu.tensor.*::dot} and
 * {@code ...::dequantize} keep each kernel compiled on its own and avoid it.
 */
final class VectorKernels {

    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    static final boolean SUITABLE = F.length() == 8 || F.length() == 16;

    /** Bytes, as many lanes as {@link #F} (64 or 128 bits); null when not {@link #SUITABLE}. */
    static final VectorSpecies<Byte> B =
            SUITABLE ? VectorSpecies.of(byte.class, VectorShape.forBitSize(F.length() * 8)) : null;

    /** Shorts, as many lanes as {@link #F} (128 or 256 bits); null when not {@link #SUITABLE}. */
    static final VectorSpecies<Short> S =
            SUITABLE ? VectorSpecies.of(short.class, VectorShape.forBitSize(F.length() * 16)) : null;

    /** Ints of the same shape as {@link #F}. */
    static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;

    private VectorKernels() {
    }

    /** Why the vector set cannot be used here, or empty if it can. */
    static Optional<String> unsuitableReason() {
        if (!SUITABLE) {
            return Optional.of("the preferred vector shape is " + F.vectorBitSize()
                    + " bits; the vector kernels need 256 or 512");
        }
        if (I.length() != F.length() || ByteVector.SPECIES_PREFERRED.vectorBitSize() != F.vectorBitSize()
                || ShortVector.SPECIES_PREFERRED.vectorBitSize() != F.vectorBitSize()) {
            return Optional.of("int and float preferred species differ in shape: " + I + ", " + F);
        }
        return jitReason();
    }

    /**
     * Without C2 the Vector API runs as plain Java objects, an order of magnitude slower than
     * the scalar kernels; so {@code -Xint} or a tiered stop below level 4 (as Lucene checks).
     * Unknown options or a JVM without the HotSpot MXBean count as fine.
     */
    private static Optional<String> jitReason() {
        try {
            HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (vm == null) {
                return Optional.empty();
            }
            if ("false".equals(vm.getVMOption("UseCompiler").getValue())) {
                return Optional.of("the JIT compiler is off (-Xint); Vector API code would run interpreted");
            }
            if ("true".equals(vm.getVMOption("TieredCompilation").getValue())
                    && Integer.parseInt(vm.getVMOption("TieredStopAtLevel").getValue()) < 4) {
                return Optional.of("C2 is off (-XX:TieredStopAtLevel=" + vm.getVMOption("TieredStopAtLevel").getValue()
                        + "); C1 does not compile the Vector API intrinsics");
            }
        } catch (RuntimeException | LinkageError e) {
            // no such option or no management module: assume a normal JIT
        }
        return Optional.empty();
    }

    static Map<GgmlType, RowKernel> all() {
        return RowKernels.byType(F32Vector.INSTANCE, F16Vector.INSTANCE, BF16Vector.INSTANCE, Q8_0Vector.INSTANCE,
                Q4_0Vector.INSTANCE, Q4_KVector.INSTANCE, Q5_KVector.INSTANCE, Q6_KVector.INSTANCE);
    }

    static String describeShape() {
        return F.vectorBitSize() + "-bit";
    }

    /** {@code L} bytes widened to floats, lane by lane (signed). */
    static FloatVector toFloats(ByteVector v) {
        return (FloatVector) v.castShape(F, 0);
    }

    /** {@code v * s + acc}, one FMA with {@code s} broadcast. */
    static FloatVector fma(FloatVector v, float s, FloatVector acc) {
        return v.fma(FloatVector.broadcast(F, s), acc);
    }
}
