package io.nereid.engine.cpu.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class KernelsTest {

    @Test
    void theVectorKernelsAreChosenWhenTheModuleIsPresentWithEnoughLanes() {
        var choice = Kernels.choose("auto", true, () -> 8, VectorKernels::new);
        assertInstanceOf(VectorKernels.class, choice.kernels());
        assertNull(choice.fallbackReason());
    }

    @Test
    void aMissingModuleFallsBackWithoutTouchingTheVectorApi() {
        var choice = Kernels.choose("auto", false, () -> fail("lanes queried"), () -> fail("vector kernels built"));
        assertSame(ScalarKernels.INSTANCE, choice.kernels());
        assertTrue(choice.fallbackReason().contains("--add-modules jdk.incubator.vector"), choice.fallbackReason());
    }

    @Test
    void fewerThanFourLanesFallsBack() {
        var choice = Kernels.choose("auto", true, () -> 2, () -> fail("vector kernels built"));
        assertSame(ScalarKernels.INSTANCE, choice.kernels());
        assertTrue(choice.fallbackReason().contains("2 float lanes"), choice.fallbackReason());
    }

    @Test
    void aLoadFailureFallsBack() {
        var choice = Kernels.choose("auto", true, () -> {
            throw new NoClassDefFoundError("jdk/incubator/vector/FloatVector");
        }, VectorKernels::new);
        assertSame(ScalarKernels.INSTANCE, choice.kernels());
        assertTrue(choice.fallbackReason().contains("FloatVector"), choice.fallbackReason());
    }

    @Test
    void scalarCanBeForced() {
        var choice = Kernels.choose("scalar", true, () -> 16, () -> fail("vector kernels built"));
        assertSame(ScalarKernels.INSTANCE, choice.kernels());
        assertTrue(choice.fallbackReason().contains("nereid.kernels=scalar"), choice.fallbackReason());
    }

    @Test
    void aForcedFallbackLogsExactlyOneInfoLine() {
        List<LogRecord> records = captureKernelsLog(() -> assertSame(ScalarKernels.INSTANCE, Kernels.lookup(" Scalar ")));
        assertEquals(1, records.size(), records.toString());
        assertEquals(Level.INFO, records.get(0).getLevel());
    }

    @Test
    void anUnknownSettingWarnsAndChoosesAutomatically() {
        List<LogRecord> records = captureKernelsLog(() -> Kernels.lookup("fast"));
        assertEquals(Level.WARNING, records.get(0).getLevel());
        assertTrue(records.size() <= 2, "the warning, and at most one line about the choice: " + records);
    }

    @Test
    void theProviderIsVectorOnThisTestJvm() {
        // The test argLine adds jdk.incubator.vector; every x86-64 and AArch64 species has >= 4 lanes.
        assertInstanceOf(VectorKernels.class, Kernels.provider());
        assertSame(Kernels.provider(), Kernels.provider());
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
