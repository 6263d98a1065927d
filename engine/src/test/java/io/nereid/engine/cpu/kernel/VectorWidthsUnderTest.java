package io.nereid.engine.cpu.kernel;

import java.util.Arrays;
import java.util.List;

/**
 * The vector widths the vector-kernel tests (tag {@value #TAG}) run at. By default the one
 * {@link Kernels} chose for this JVM, none when it chose scalar kernels: what production runs,
 * compiled by C2 as it is there. With {@code -D}{@value #PROPERTY}{@code =128,256} the widths
 * listed, whatever the machine prefers; the {@code vector-128}, {@code vector-256} and
 * {@code vector-512} executions in {@code engine/pom.xml} run the tagged tests once per width, each
 * in a JVM of its own, because a JVM that runs one kernel class at several widths no longer
 * compiles it to vector code (see {@link VectorWidth}).
 */
public final class VectorWidthsUnderTest {

    public static final String TAG = "vector-widths";
    public static final String PROPERTY = "nereid.test.vectorWidths";

    private VectorWidthsUnderTest() {
    }

    /** The widths, for {@code @MethodSource}. */
    public static List<VectorWidth> widths() {
        String listed = System.getProperty(PROPERTY, "").trim();
        if (listed.isEmpty()) {
            return Kernels.vectorWidth().stream().toList();
        }
        return Arrays.stream(listed.split(",")).map(String::trim).map(Integer::parseInt).map(VectorWidth::of)
                .toList();
    }
}
