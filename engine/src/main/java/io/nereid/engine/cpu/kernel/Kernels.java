package io.nereid.engine.cpu.kernel;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Decides once per JVM whether the CPU kernels use the Vector API, for the math kernels here and
 * the weight-format row kernels of {@code cpu.tensor} alike (Lucene's vectorization provider: a
 * lookup that degrades, never fails). The Vector API is used, at the width of the machine's
 * preferred species ({@link VectorWidth}), when
 * <ul>
 *   <li>it is not disabled by {@value #PROPERTY}{@code =scalar};
 *   <li>the {@code jdk.incubator.vector} module is loaded;
 *   <li>the preferred species is 128, 256 or 512 bits: at least {@value #MIN_LANES} float lanes,
 *       since narrower vectors do not pay for their setup and reductions, and at most 16, since a
 *       step must stay within a block of 32 quantized weights;
 *   <li>C2 compiles: without it the Vector API runs as plain objects, far slower than scalar code.
 * </ul>
 * Otherwise both sets are the scalar references, and the reason is logged as one INFO line. The
 * result reads {@link #description()}: {@code "vector (512-bit)"} or {@code "scalar"}.
 *
 * <p>System property {@value #PROPERTY}: {@code auto} (default) or {@code scalar} to force the
 * reference kernels (e.g. to rule out the Vector API when chasing a numerical difference).
 * {@code -D}{@value #DEPRECATED_PROPERTY}{@code =false}, which used to force the scalar row kernels
 * alone, is a deprecated alias of {@code scalar}; setting it logs one WARNING.
 *
 * <p>Thread-safe; the choice is made, and logged, on the first call to any method.
 */
public final class Kernels {

    public static final String PROPERTY = "nereid.kernels";

    /** The row kernels' old switch: {@code false} still forces scalar kernels, everywhere now. */
    public static final String DEPRECATED_PROPERTY = "nereid.tensor.vector";

    static final String VECTOR_MODULE = "jdk.incubator.vector";

    static final int MIN_LANES = 4;
    static final int MAX_BITS = 512;

    private static final System.Logger LOG = System.getLogger(Kernels.class.getName());

    private Kernels() {
    }

    /** The math kernels for this JVM; the same instance on every call. */
    public static KernelSupport provider() {
        return Holder.SELECTION.kernels();
    }

    /** The reference kernels, whatever the provider chose. */
    public static KernelSupport scalar() {
        return ScalarKernels.INSTANCE;
    }

    /** The width every vector kernel of this JVM runs at, or empty when the kernels are scalar. */
    public static Optional<VectorWidth> vectorWidth() {
        return Holder.SELECTION.width();
    }

    /** What the kernels are, for logs: {@code "vector (512-bit)"} or {@code "scalar"}. */
    public static String description() {
        return describe(vectorWidth());
    }

    static String describe(Optional<VectorWidth> width) {
        return width.map(w -> "vector (" + w + ")").orElse("scalar");
    }

    private static final class Holder {
        static final Selection SELECTION = lookup(System.getProperty(PROPERTY),
                System.getProperty(DEPRECATED_PROPERTY));
    }

    /** The kernels in use and their width; {@code width} is empty exactly when they are scalar. */
    record Selection(KernelSupport kernels, Optional<VectorWidth> width) {
    }

    /** What the choice rests on, read from the Vector API and the VM once the module is known to be there. */
    record Platform(int preferredBits, String jitProblem) {

        static Platform probe() {
            return new Platform(VectorWidth.configuredBits(), Kernels.jitProblem());
        }
    }

    /** The outcome of {@link #choose}: a width in bits, or 0 and why not. */
    record Choice(int bits, String fallbackReason) {
    }

    /**
     * Chooses, builds and logs: a line for a fallback, one for a deprecated or unknown setting.
     * {@code setting} and {@code deprecatedSetting} are the raw property values, null when unset.
     */
    static Selection lookup(String setting, String deprecatedSetting) {
        String mode = setting == null ? "auto" : setting.trim().toLowerCase(Locale.ROOT);
        String forcedBy = "-D" + PROPERTY + "=scalar";
        if (deprecatedSetting != null) {
            LOG.log(Level.WARNING, "-D{0} is deprecated; use -D{1}=auto|scalar", DEPRECATED_PROPERTY, PROPERTY);
            if (setting == null && deprecatedSetting.trim().equalsIgnoreCase("false")) {
                mode = "scalar";
                forcedBy = "-D" + DEPRECATED_PROPERTY + "=false";
            }
        }
        if (!mode.equals("auto") && !mode.equals("scalar")) {
            LOG.log(Level.WARNING, "Ignoring -D{0}={1} (expected auto or scalar); choosing automatically",
                    PROPERTY, setting);
            mode = "auto";
        }
        // Platform::probe and the block below are the only places that touch the Vector API; they
        // run only once the module is known to be present, so its classes never load without it.
        Choice choice = choose(mode, forcedBy, ModuleLayer.boot().findModule(VECTOR_MODULE).isPresent(),
                Platform::probe);
        String reason = choice.fallbackReason();
        Selection selection = null;
        if (reason == null) {
            try {
                VectorWidth width = VectorWidth.current();
                selection = new Selection(new VectorMathKernels(), Optional.of(width));
            } catch (LinkageError | RuntimeException e) {
                reason = "the Vector API kernels failed to load (" + e + ")";
            }
        }
        if (selection == null) {
            LOG.log(Level.INFO, "Using scalar kernels: {0}", reason);
            return new Selection(ScalarKernels.INSTANCE, Optional.empty());
        }
        LOG.log(Level.DEBUG, "Using Vector API kernels: {0}", describe(selection.width()));
        return selection;
    }

    /** The decision alone, without logging or touching the Vector API unless it is present. */
    static Choice choose(String mode, String forcedBy, boolean vectorModulePresent, Supplier<Platform> platform) {
        if (mode.equals("scalar")) {
            return scalarBecause("forced by " + forcedBy);
        }
        if (!vectorModulePresent) {
            return scalarBecause("the " + VECTOR_MODULE + " module is not loaded (start the JVM with --add-modules "
                    + VECTOR_MODULE + ")");
        }
        Platform p;
        try {
            p = platform.get();
        } catch (LinkageError | RuntimeException e) {
            return scalarBecause("the Vector API kernels failed to load (" + e + ")");
        }
        int lanes = p.preferredBits() / Float.SIZE;
        if (lanes < MIN_LANES) {
            return scalarBecause("the preferred vector species has " + lanes + " float lanes, fewer than " + MIN_LANES);
        }
        if (p.preferredBits() > MAX_BITS) {
            return scalarBecause("the preferred vector species is " + p.preferredBits()
                    + " bits; the vector kernels are written for 128, 256 and 512");
        }
        if (p.jitProblem() != null) {
            return scalarBecause(p.jitProblem());
        }
        return new Choice(p.preferredBits(), null);
    }

    private static Choice scalarBecause(String reason) {
        return new Choice(0, reason);
    }

    /**
     * Why C2 will not compile the Vector API here, or null: {@code -Xint}, or a tiered stop below
     * level 4 (as Lucene checks), since C1 and the interpreter run its intrinsics as plain Java
     * objects, an order of magnitude slower than the scalar kernels. Unknown options or a JVM
     * without the HotSpot MXBean count as fine.
     */
    static String jitProblem() {
        try {
            HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (vm == null) {
                return null;
            }
            if ("false".equals(vm.getVMOption("UseCompiler").getValue())) {
                return "the JIT compiler is off (-Xint); Vector API code would run interpreted";
            }
            String stop = vm.getVMOption("TieredStopAtLevel").getValue();
            if ("true".equals(vm.getVMOption("TieredCompilation").getValue()) && Integer.parseInt(stop) < 4) {
                return "C2 is off (-XX:TieredStopAtLevel=" + stop + "); C1 does not compile the Vector API intrinsics";
            }
        } catch (RuntimeException | LinkageError e) {
            // no such option or no management module: assume a normal JIT
        }
        return null;
    }
}
