package io.nereid.engine.cpu.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KernelsTest {

    private static final String FORCED = "-D" + Kernels.PROPERTY + "=scalar";

    private static Kernels.Platform platform(int bits) {
        return new Kernels.Platform(bits, null);
    }

    @ParameterizedTest
    @ValueSource(ints = {128, 256, 512})
    void theVectorKernelsAreChosenAtThePreferredWidth(int bits) {
        var choice = Kernels.choose("auto", FORCED, true, () -> platform(bits));
        assertEquals(new Kernels.Choice(bits, null), choice);
    }

    @Test
    void aMissingModuleFallsBackWithoutTouchingTheVectorApi() {
        var choice = Kernels.choose("auto", FORCED, false, () -> fail("platform probed"));
        assertEquals(0, choice.bits());
        assertTrue(choice.fallbackReason().contains("--add-modules jdk.incubator.vector"), choice.fallbackReason());
    }

    @Test
    void fewerThanFourLanesFallsBack() {
        var choice = Kernels.choose("auto", FORCED, true, () -> platform(64));
        assertEquals(0, choice.bits());
        assertTrue(choice.fallbackReason().contains("2 float lanes"), choice.fallbackReason());
    }

    @Test
    void aWiderShapeThanTheKernelsAreWrittenForFallsBack() {
        // a 32-lane step would cross the 32-weight blocks the quantized kernels step through
        var choice = Kernels.choose("auto", FORCED, true, () -> platform(1024));
        assertEquals(0, choice.bits());
        assertTrue(choice.fallbackReason().contains("1024 bits"), choice.fallbackReason());
    }

    @Test
    void noC2FallsBack() {
        var choice = Kernels.choose("auto", FORCED, true, () -> new Kernels.Platform(512, "C2 is off"));
        assertEquals(new Kernels.Choice(0, "C2 is off"), choice);
    }

    @Test
    void aLoadFailureFallsBack() {
        var choice = Kernels.choose("auto", FORCED, true, () -> {
            throw new NoClassDefFoundError("jdk/incubator/vector/FloatVector");
        });
        assertEquals(0, choice.bits());
        assertTrue(choice.fallbackReason().contains("FloatVector"), choice.fallbackReason());
    }

    @Test
    void scalarCanBeForced() {
        var choice = Kernels.choose("scalar", FORCED, true, () -> fail("platform probed"));
        assertEquals(0, choice.bits());
        assertTrue(choice.fallbackReason().contains("nereid.kernels=scalar"), choice.fallbackReason());
    }

    @Test
    void aForcedFallbackLogsExactlyOneInfoLine() {
        List<LogRecord> records = captureKernelsLog(() -> {
            Kernels.Selection s = Kernels.lookup(" Scalar ", null);
            assertSame(ScalarKernels.INSTANCE, s.kernels());
            assertEquals(Optional.empty(), s.width());
        });
        assertEquals(1, records.size(), records.toString());
        assertEquals(Level.INFO, records.get(0).getLevel());
        assertTrue(records.get(0).getMessage().contains("Using scalar kernels"), records.get(0).getMessage());
    }

    @Test
    void theDeprecatedTensorSwitchForcesScalarKernelsAndSaysItIsDeprecated() {
        List<LogRecord> records = captureKernelsLog(
                () -> assertEquals(Optional.empty(), Kernels.lookup(null, "false").width()));
        assertEquals(List.of(Level.WARNING, Level.INFO), records.stream().map(LogRecord::getLevel).toList());
        assertTrue(formatted(records.get(0)).contains("nereid.tensor.vector is deprecated"), formatted(records.get(0)));
        assertTrue(formatted(records.get(1)).contains("forced by -Dnereid.tensor.vector=false"),
                formatted(records.get(1)));
    }

    @Test
    void theDeprecatedTensorSwitchGivesWayToTheKernelsProperty() {
        Optional<VectorWidth> automatic = Kernels.lookup("auto", null).width();
        List<LogRecord> records = captureKernelsLog(
                () -> assertEquals(automatic, Kernels.lookup("auto", "false").width(), "the automatic choice"));
        assertEquals(Level.WARNING, records.get(0).getLevel());
        assertTrue(records.size() <= 2, "the deprecation, and at most one line about the choice: " + records);
    }

    @Test
    void anUnknownSettingWarnsAndChoosesAutomatically() {
        List<LogRecord> records = captureKernelsLog(() -> Kernels.lookup("fast", null));
        assertEquals(Level.WARNING, records.get(0).getLevel());
        assertTrue(records.size() <= 2, "the warning, and at most one line about the choice: " + records);
    }

    @Test
    void theProviderIsVectorOnThisTestJvm() {
        // The test argLine adds jdk.incubator.vector; x86-64 and AArch64 species are 128 to 512 bits.
        assertInstanceOf(VectorMathKernels.class, Kernels.provider());
        assertSame(Kernels.provider(), Kernels.provider());
        VectorWidth width = Kernels.vectorWidth().orElseThrow();
        assertEquals(VectorWidth.configuredBits(), width.bitSize());
        assertEquals("vector (" + width.bitSize() + "-bit)", Kernels.description());
    }

    @Test
    void widthsAreTheThreeTheKernelsAreWrittenFor() {
        for (int bits : new int[] {128, 256, 512}) {
            VectorWidth w = VectorWidth.of(bits);
            assertEquals(bits, w.bitSize());
            assertEquals(bits / Float.SIZE, w.ints().length());
            assertEquals(bits / Float.SIZE, w.shorts().length());
            assertEquals(2 * bits / Float.SIZE, w.shortPairs().length());
            assertEquals(2 * bits / Float.SIZE, w.bytePairs().length());
        }
        assertThrows(IllegalArgumentException.class, () -> VectorWidth.of(64));
        assertThrows(IllegalArgumentException.class, () -> VectorWidth.of(1024));
    }

    private static String formatted(LogRecord r) {
        return new java.util.logging.SimpleFormatter().formatMessage(r);
    }

    /** Records what {@link Kernels} logs through System.Logger's default java.util.logging backend. */
    private static List<LogRecord> captureKernelsLog(Runnable action) {
        Logger logger = Logger.getLogger(Kernels.class.getName());
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.INFO.intValue()) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Level before = logger.getLevel();
        logger.setLevel(Level.ALL);
        logger.addHandler(handler);
        try {
            action.run();
        } finally {
            logger.removeHandler(handler);
            logger.setLevel(before);
        }
        return records;
    }
}
