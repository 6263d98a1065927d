package io.nereid.engine.cpu.kernel;

import java.util.List;

/**
 * The vector width the vector-kernel tests (tag {@value #TAG}) run at: the one {@link Kernels}
 * chose for this JVM ({@link VectorWidth#current()}), none when it chose scalar kernels. A JVM runs
 * its kernels at one width, so the {@code vector-128}, {@code vector-256} and {@code vector-512}
 * executions in {@code engine/pom.xml} run the tagged tests again, each in a JVM of its own with
 * {@code -D}{@value VectorWidth#BITS_PROPERTY} set, whatever the machine prefers.
 */
public final class VectorWidthsUnderTest {

    public static final String TAG = "vector-widths";

    private VectorWidthsUnderTest() {
    }

    /** The width, for {@code @MethodSource}: this JVM's, or none. */
    public static List<VectorWidth> widths() {
        return Kernels.vectorWidth().stream().toList();
    }
}
