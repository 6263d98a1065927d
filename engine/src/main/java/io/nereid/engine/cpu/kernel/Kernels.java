package io.nereid.engine.cpu.kernel;

import java.lang.System.Logger.Level;
import java.util.Locale;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * Picks the {@link KernelSupport} for this JVM once: {@link VectorKernels} when the
 * {@code jdk.incubator.vector} module is present and its preferred species has at least
 * {@value #MIN_LANES} float lanes, else {@link ScalarKernels}. A fallback is logged as exactly one
 * INFO line naming the reason; it never fails startup.
 *
 * <p>System property {@value #PROPERTY}: {@code auto} (default) or {@code scalar} to force the
 * reference kernels (e.g. to rule out the Vector API when chasing a numerical difference).
 *
 * <p>Thread-safe; the choice is made on the first call to {@link #provider()}.
 */
public final class Kernels {

    public static final String PROPERTY = "nereid.kernels";
    static final String VECTOR_MODULE = "jdk.incubator.vector";

    /** Narrower vectors (2 lanes on a 64-bit species) do not pay for their setup and reductions. */
    static final int MIN_LANES = 4;

    private static final System.Logger LOG = System.getLogger(Kernels.class.getName());

    private Kernels() {
    }

    /** The kernels for this JVM; the same instance on every call. */
    public static KernelSupport provider() {
        return Holder.PROVIDER;
    }

    /** The reference kernels, whatever the provider chose. */
    public static KernelSupport scalar() {
        return ScalarKernels.INSTANCE;
    }

    private static final class Holder {
        static final KernelSupport PROVIDER = lookup(System.getProperty(PROPERTY, "auto"));
    }

    /** The outcome of {@link #choose}: the kernels and, for a fallback, why. */
    record Choice(KernelSupport kernels, String fallbackReason) {
    }

    /** Chooses and logs; {@code setting} is the raw property value. */
    static KernelSupport lookup(String setting) {
        String mode = setting.trim().toLowerCase(Locale.ROOT);
        if (!mode.equals("auto") && !mode.equals("scalar")) {
            LOG.log(Level.WARNING, "Ignoring -D{0}={1} (expected auto or scalar); choosing automatically",
                    PROPERTY, setting);
            mode = "auto";
        }
        // The lambdas below are the only places that touch VectorKernels; they run only once the
        // module is known to be present, so the class never loads without it.
        Choice choice = choose(mode, ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent(),
                VectorKernels::preferredFloatLanes, VectorKernels::new);
        if (choice.fallbackReason() != null) {
            LOG.log(Level.INFO, "Using scalar kernels: {0}", choice.fallbackReason());
        } else {
            LOG.log(Level.DEBUG, "Using Vector API kernels ({0} float lanes)", VectorKernels.preferredFloatLanes());
        }
        return choice.kernels();
    }

    /** The decision alone, without logging or touching the Vector API unless it is present. */
    static Choice choose(String mode, boolean vectorModulePresent, IntSupplier preferredFloatLanes,
            Supplier<KernelSupport> vectorKernels) {
        if (mode.equals("scalar")) {
            return scalarBecause("forced by -D" + PROPERTY + "=scalar");
        }
        if (!vectorModulePresent) {
            return scalarBecause("the " + VECTOR_MODULE + " module is not loaded (start the JVM with --add-modules "
                    + VECTOR_MODULE + ")");
        }
        try {
            int lanes = preferredFloatLanes.getAsInt();
            if (lanes < MIN_LANES) {
                return scalarBecause("the preferred vector species has " + lanes + " float lanes, fewer than "
                        + MIN_LANES);
            }
            return new Choice(vectorKernels.get(), null);
        } catch (LinkageError | RuntimeException e) {
            return scalarBecause("the Vector API kernels failed to load (" + e + ")");
        }
    }

    private static Choice scalarBecause(String reason) {
        return new Choice(ScalarKernels.INSTANCE, reason);
    }
}
